// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_token.c: every character class of the table,
 * for all 256 bytes, against its grammar's definition written out.
 */
#include <kunit/test.h>

#include "http_token.h"

static bool is_alpha(unsigned int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(unsigned int c)
{
	return c >= '0' && c <= '9';
}

static bool in(const char *set, unsigned int c)
{
	return c && strchr(set, c);
}

/* What each class must hold, from RFC 9110 5.5/5.6.2, 3986 2.2/2.3. */
static bool want(u8 class, unsigned int c)
{
	switch (class) {
	case KWEB_CT_TCHAR:
		return is_alpha(c) || is_digit(c) || in("!#$%&'*+-.^_`|~", c);
	case KWEB_CT_VALUE:	/* VCHAR, obs-text, SP, HTAB */
		return c == '\t' || (c >= 0x20 && c != 0x7f);
	case KWEB_CT_TARGET:	/* VCHAR and obs-text */
		return c > 0x20 && c != 0x7f;
	case KWEB_CT_HOST:	/* unreserved / sub-delims */
		return is_alpha(c) || is_digit(c) || in("-._~!$&'()*+,;=", c);
	case KWEB_CT_HEX:
		return is_digit(c) || (c >= 'a' && c <= 'f') ||
		       (c >= 'A' && c <= 'F');
	case KWEB_CT_DIGIT:
		return is_digit(c);
	case KWEB_CT_PATH:
		return want(KWEB_CT_TARGET, c) && !in("/%?#", c);
	}
	return false;
}

static void ctype_test(struct kunit *test)
{
	static const u8 classes[] = {
		KWEB_CT_TCHAR, KWEB_CT_VALUE, KWEB_CT_TARGET, KWEB_CT_HOST,
		KWEB_CT_HEX, KWEB_CT_DIGIT, KWEB_CT_PATH,
	};
	unsigned int c, k;
	u8 all = 0;

	for (k = 0; k < ARRAY_SIZE(classes); k++) {
		for (c = 0; c < 256; c++)
			KUNIT_EXPECT_EQ_MSG(test, kweb_http_is(c, classes[k]),
					    want(classes[k], c),
					    "class 0x%02x byte 0x%02x",
					    classes[k], c);
		all |= classes[k];
	}
	/* No bit of the table that no class above tests. */
	for (c = 0; c < 256; c++)
		KUNIT_EXPECT_EQ_MSG(test, kweb_http_ctype[c] & ~all, 0,
				    "byte 0x%02x", c);
}

/* kweb_http_tchar() is the table's tchar, signed chars included. */
static void tchar_test(struct kunit *test)
{
	unsigned int c;

	for (c = 0; c < 256; c++) {
		char sc = (char)c;

		KUNIT_EXPECT_EQ_MSG(test, kweb_http_tchar(sc),
				    want(KWEB_CT_TCHAR, c), "byte 0x%02x", c);
	}
}

/* Case-insensitive equality and prefix, against a lower-case literal. */
static const struct {
	const char *p;
	size_t len;
	const char *lc;
	bool prefix;		/* kweb_http_iprefix(), else kweb_http_ieq() */
	bool want;
} icase_cases[] = {
	{ "Keep-Alive", 10, "keep-alive", false, true },
	{ "Keep-Alive", 9, "keep-alive", false, false },
	{ "Keep-Alivex", 11, "keep-alive", false, false },
	{ "", 0, "", false, true },
	/* Only ASCII letters fold: '@' (0x40) and '[' (0x5b) do not. */
	{ "@", 1, "`", false, false },
	{ "[", 1, "{", false, false },
	{ "HTTP://h/", 9, "http://", true, true },
	{ "http://", 7, "http://", true, true },
	{ "http:/", 6, "http://", true, false },
	/* len bounds the subject even where it holds more bytes. */
	{ "https://", 5, "https://", true, false },
	{ "HTTPS://", 8, "http://", true, false },
	{ "x", 1, "", true, true },
};

static void icase_test(struct kunit *test)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(icase_cases); i++) {
		const char *p = icase_cases[i].p, *lc = icase_cases[i].lc;
		size_t len = icase_cases[i].len;
		bool got = icase_cases[i].prefix ?
			kweb_http_iprefix(p, len, lc) :
			kweb_http_ieq(p, len, lc);

		KUNIT_EXPECT_EQ_MSG(test, got, icase_cases[i].want,
				    "\"%s\" (%zu) ~ \"%s\"", p, len, lc);
	}
}

static struct kunit_case kweb_http_token_cases[] = {
	KUNIT_CASE(ctype_test),
	KUNIT_CASE(tchar_test),
	KUNIT_CASE(icase_test),
	{}
};

static struct kunit_suite kweb_http_token_suite = {
	.name = "kweb_http_token",
	.test_cases = kweb_http_token_cases,
};

kunit_test_suite(kweb_http_token_suite);
