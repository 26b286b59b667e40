// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_cache_rules.c: which rule texts are accepted
 * (never one that could end the header line early or add a field), the
 * values and max-ages they give, and which rule a served path gets.
 */
#include <kunit/test.h>

#include "http_cache_rules.h"

/* desc for a text that may hold CR, LF and other bytes a log should not. */
static void cc_escape(const char *s, char *desc)
{
	size_t n = 0;

	if (!s) {
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "(null)");
		return;
	}
	desc[n++] = '"';
	for (; *s && n < KUNIT_PARAM_DESC_SIZE - 6; s++) {
		unsigned char c = *s;

		if (c < 0x20 || c >= 0x7f)
			n += snprintf(desc + n, 5, "\\x%02x", c);
		else
			desc[n++] = c;
	}
	desc[n++] = '"';
	desc[n] = '\0';
}

static struct kweb_cache_rules *cc_rules(struct kunit *test)
{
	struct kweb_cache_rules *r = kunit_kmalloc(test, sizeof(*r),
						   GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	return r;
}

struct parse_case {
	const char *text;
	int err;
	unsigned int nr;
};

static const struct parse_case parse_cases[] = {
	{ NULL, 0, 0 },
	{ "", 0, 0 },
	{ "/a/=no-cache", 0, 1 },
	{ ".css=max-age=1", 0, 1 },
	{ ".tar.gz=no-cache", 0, 1 },
	{ "/\xc3\xa9/=no-cache", 0, 1 },	/* UTF-8 in a path */
	{ "/a=b=c", 0, 1 },			/* MATCH ends at the first '=' */
	/* OWS around rules, and one trailing ';'. */
	{ "/a/=no-cache;", 0, 1 },
	{ "/a/=no-cache; \t", 0, 1 },
	{ "  /a/=no-cache ;\t.js=no-store\t", 0, 2 },
	{ "/a/=no-cache;.b=x", 0, 2 },
	{ " ", -EINVAL },
	{ ";", -EINVAL },
	{ " ; ", -EINVAL },
	{ ";/a/=x", -EINVAL },
	{ "/a/=x;;", -EINVAL },
	{ "/a/=x;;/b/=y", -EINVAL },
	{ "/a/=x; ;", -EINVAL },
	/* MATCH */
	{ "/a/", -EINVAL },
	{ "=x", -EINVAL },
	{ "/=x", -EINVAL },			/* every path */
	{ ".=x", -EINVAL },
	{ "a=x", -EINVAL },
	{ "*.css=x", -EINVAL },
	{ "/a?b=x", -EINVAL },
	{ "/a#b=x", -EINVAL },
	{ "/a b=x", -EINVAL },
	{ "/a\tb=x", -EINVAL },
	{ "/a =x", -EINVAL },
	{ "/a\x7f=x", -EINVAL },
	{ "/a\x01=x", -EINVAL },
	{ ".c/ss=x", -EINVAL },
	{ ".c ss=x", -EINVAL },
	{ ".c\"=x", -EINVAL },
	{ ".c,s=x", -EINVAL },
	{ ".css =x", -EINVAL },
	{ ".\xc3\xa9=x", -EINVAL },
	/* VALUE: bytes that could end the line or add a field. */
	{ "/a/=", -EINVAL },
	{ "/a/= \t", -EINVAL },
	{ "/a/=no-cache\r\nSet-Cookie: a=b", -EINVAL },
	{ "/a/=no-cache\nX: y", -EINVAL },
	{ "/a/=no-cache\r", -EINVAL },
	{ "/a/=\r\n", -EINVAL },
	{ "/a/=a\x7f", -EINVAL },
	{ "/a/=a\x80", -EINVAL },
	{ "/a/=\x0b", -EINVAL },
	{ "/a/=no-cache;Set-Cookie: a", -EINVAL },
	{ "/a/=x=\"a;b\"", -EINVAL },		/* ';' ends the rule */
	/* VALUE: the Cache-Control grammar. */
	{ "/a/=no cache", -EINVAL },
	{ "/a/=,", -EINVAL },
	{ "/a/=a,,b", -EINVAL },
	{ "/a/=a, ,b", -EINVAL },
	{ "/a/=,a", -EINVAL },
	{ "/a/=a,", -EINVAL },
	{ "/a/=a = b", -EINVAL },
	{ "/a/=a= b", -EINVAL },
	{ "/a/=a=", -EINVAL },
	{ "/a/=\"a\"", -EINVAL },
	{ "/a/=a=\"b", -EINVAL },
	{ "/a/=a=\"b\\\"", -EINVAL },
	{ "/a/=a=b\"c\"", -EINVAL },
	{ "/a/=a=\"b\"c", -EINVAL },
	{ "/a/=a=(b)", -EINVAL },
	{ "/a/=a:b", -EINVAL },
	{ "/a/=x=\"\"", 0, 1 },
	{ "/a/=x=\"a\\\"b\", y", 0, 1 },
	{ "/a/=private=\"a, b\", max-age=5", 0, 1 },
	{ "/a/=x=\"\\\\\"", 0, 1 },
	/* max-age: unquoted digits, once. */
	{ "/a/=max-age=\"5\"", -EINVAL },
	{ "/a/=max-age", -EINVAL },
	{ "/a/=max-age=", -EINVAL },
	{ "/a/=max-age=-1", -EINVAL },
	{ "/a/=max-age=+1", -EINVAL },
	{ "/a/=max-age=5s", -EINVAL },
	{ "/a/=max-age=1.5", -EINVAL },
	{ "/a/=max-age=1, max-age=1", -EINVAL },
	{ "/a/=MAX-AGE=1,max-age=2", -EINVAL },
	{ "/a/=max-age=1;/b/=max-age=2", 0, 2 },
};

static void parse_desc(const struct parse_case *c, char *desc)
{
	cc_escape(c->text, desc);
}

KUNIT_ARRAY_PARAM(parse, parse_cases, parse_desc);

static void parse_test(struct kunit *test)
{
	const struct parse_case *c = test->param_value;
	struct kweb_cache_rules *r = cc_rules(test);

	KUNIT_EXPECT_EQ(test, kweb_cache_rules_parse(r, c->text), c->err);
	/* An error leaves no rules, not the ones before it. */
	KUNIT_EXPECT_EQ(test, r->nr, c->err ? 0 : c->nr);
}

struct value_case {
	const char *text;	/* one rule */
	const char *match;
	const char *value;
	s64 max_age;
};

static const struct value_case value_cases[] = {
	{ "/a/=no-cache", "/a/", "no-cache", -1 },
	{ " /a/= \tpublic, max-age=60 \t", "/a/", "public, max-age=60", 60 },
	{ ".css=max-age=0", ".css", "max-age=0", 0 },
	{ "/a=b=c", "/a", "b=c", -1 },
	{ "/a/=Max-Age=10", "/a/", "Max-Age=10", 10 },
	{ "/a/=s-maxage=10", "/a/", "s-maxage=10", -1 },
	{ "/a/=public,max-age=31536000,immutable", "/a/",
	  "public,max-age=31536000,immutable", 31536000 },
	{ "/a/=no-store , max-age=5", "/a/", "no-store , max-age=5", 5 },
	{ "/a/=max-age=007", "/a/", "max-age=007", 7 },
	/* Clamped to 2^31 (RFC 9111 1.2.2). */
	{ "/a/=max-age=2147483647", "/a/", "max-age=2147483647", 2147483647 },
	{ "/a/=max-age=2147483648", "/a/", "max-age=2147483648",
	  2147483648LL },
	{ "/a/=max-age=2147483649", "/a/", "max-age=2147483649",
	  2147483648LL },
	{ "/a/=max-age=99999999999999999999999999", "/a/",
	  "max-age=99999999999999999999999999", 2147483648LL },
	/* Not the directive itself. */
	{ "/a/=private=\"max-age=5\"", "/a/", "private=\"max-age=5\"", -1 },
	{ "/a/=x-max-age=5", "/a/", "x-max-age=5", -1 },
	{ "/a/=max-ages=5", "/a/", "max-ages=5", -1 },
	{ "/a/=x=max-age", "/a/", "x=max-age", -1 },
};

static void value_desc(const struct value_case *c, char *desc)
{
	cc_escape(c->text, desc);
}

KUNIT_ARRAY_PARAM(value, value_cases, value_desc);

static void value_test(struct kunit *test)
{
	const struct value_case *c = test->param_value;
	struct kweb_cache_rules *r = cc_rules(test);
	const struct kweb_cache_rule *rule = &r->r[0];

	KUNIT_ASSERT_EQ(test, kweb_cache_rules_parse(r, c->text), 0);
	KUNIT_ASSERT_EQ(test, r->nr, 1);
	KUNIT_EXPECT_EQ(test, rule->match.len, strlen(c->match));
	KUNIT_EXPECT_TRUE(test, !memcmp(rule->match.p, c->match,
					strlen(c->match)));
	KUNIT_EXPECT_EQ(test, rule->value.len, strlen(c->value));
	KUNIT_EXPECT_TRUE(test, !memcmp(rule->value.p, c->value,
					strlen(c->value)));
	KUNIT_EXPECT_EQ(test, rule->max_age, c->max_age);
}

/* Rules are slices of the text, trimmed, not copies. */
static void slices_test(struct kunit *test)
{
	static const char text[] = " /a/= no-cache ;.js=x";
	struct kweb_cache_rules *r = cc_rules(test);

	KUNIT_ASSERT_EQ(test, kweb_cache_rules_parse(r, text), 0);
	KUNIT_ASSERT_EQ(test, r->nr, 2);
	KUNIT_EXPECT_PTR_EQ(test, r->r[0].match.p, &text[1]);
	KUNIT_EXPECT_EQ(test, r->r[0].match.len, 3);
	KUNIT_EXPECT_PTR_EQ(test, r->r[0].value.p, &text[6]);
	KUNIT_EXPECT_EQ(test, r->r[0].value.len, 8);
	KUNIT_EXPECT_PTR_EQ(test, r->r[1].match.p, &text[16]);
	KUNIT_EXPECT_EQ(test, r->r[1].match.len, 3);
	KUNIT_EXPECT_PTR_EQ(test, r->r[1].value.p, &text[20]);
	KUNIT_EXPECT_EQ(test, r->r[1].value.len, 1);
}

/* A NUL ends the text: what follows it never reaches a value. */
static void nul_test(struct kunit *test)
{
	static const char text[] = "/a/=no-cache\0\r\nSet-Cookie: a=b";
	struct kweb_cache_rules *r = cc_rules(test);

	KUNIT_ASSERT_EQ(test, kweb_cache_rules_parse(r, text), 0);
	KUNIT_ASSERT_EQ(test, r->nr, 1);
	KUNIT_EXPECT_EQ(test, r->r[0].value.len, 8);
}

/* n rules "/N=max-age=N;" (the last as bad if bad), into a new string. */
static char *cc_many(struct kunit *test, unsigned int n, bool bad)
{
	size_t size = 32 * n + 1, off = 0;
	char *s = kunit_kmalloc(test, size, GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, s);
	s[0] = '\0';
	for (i = 1; i <= n; i++)
		off += snprintf(s + off, size - off, "%s/%u=max-age=%u",
				i > 1 ? ";" : "", i,
				bad && i == n ? 0 : i);
	if (bad)
		s[off - 1] = '"';
	return s;
}

static void limits_test(struct kunit *test)
{
	struct kweb_cache_rules *r = cc_rules(test);
	char *v = kunit_kmalloc(test, KWEB_CACHE_CONTROL_MAX + 16, GFP_KERNEL);

	KUNIT_EXPECT_EQ(test, kweb_cache_rules_parse(r, cc_many(test, 32,
								false)), 0);
	KUNIT_EXPECT_EQ(test, r->nr, KWEB_CACHE_RULES_MAX);
	KUNIT_EXPECT_EQ(test, r->r[31].max_age, 32);
	KUNIT_EXPECT_EQ(test, kweb_cache_rules_parse(r, cc_many(test, 33,
								false)),
			-E2BIG);
	KUNIT_EXPECT_EQ(test, r->nr, 0);
	/* A bad rule is -EINVAL whatever the count. */
	KUNIT_EXPECT_EQ(test, kweb_cache_rules_parse(r, cc_many(test, 33,
								true)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kweb_cache_rules_parse(r, cc_many(test, 2,
								true)),
			-EINVAL);

	/* "/a/=" then a value of exactly the maximum, then one more byte. */
	KUNIT_ASSERT_NOT_NULL(test, v);
	memcpy(v, "/a/= x", 6);
	memset(v + 6, 'x', KWEB_CACHE_CONTROL_MAX - 1);
	memcpy(v + 5 + KWEB_CACHE_CONTROL_MAX, " ;", 3);
	KUNIT_EXPECT_EQ(test, kweb_cache_rules_parse(r, v), 0);
	KUNIT_EXPECT_EQ(test, r->r[0].value.len, KWEB_CACHE_CONTROL_MAX);
	memcpy(v + 5 + KWEB_CACHE_CONTROL_MAX, "x", 2);
	KUNIT_EXPECT_EQ(test, kweb_cache_rules_parse(r, v), -EINVAL);
}

/* The rules of match_cases, by index; -1 is no rule. */
static const char match_rules[] =
	"/assets/=public, max-age=60;"		/* 0 */
	" .css=max-age=31536000, immutable;"	/* 1 */
	"/assets/img/=max-age=3600;"		/* 2 */
	".JS=no-cache;"				/* 3 */
	"/assets/=no-store;"			/* 4: never, 0 is first */
	".min.js=max-age=1;"			/* 5: never, 3 is first */
	"/a/index.html=no-cache;"		/* 6 */
	"/x=private;"				/* 7 */
	".htm=max-age=0;"			/* 8 */
	"/docs/=max-age=300";			/* 9 */

struct match_case {
	const char *path;
	int rule;
};

static const struct match_case match_cases[] = {
	{ "/assets/a.png", 0 },
	{ "/assets/", 0 },
	{ "/assets/img", 0 },
	{ "/assets", -1 },
	{ "/ASSETS/a.png", -1 },	/* prefixes are case-sensitive */
	{ "/assets/img/a.png", 2 },	/* the longest prefix */
	{ "/assets/img/", 2 },
	/* Extensions first, whatever the prefix, ignoring case. */
	{ "/assets/img/a.css", 1 },
	{ "/assets/A.CSS", 1 },
	{ "/a.css", 1 },
	{ "/.css", 1 },
	{ "/x.css", 1 },
	{ "/a.css/", -1 },
	{ "/a.css/x", -1 },
	{ "/a.css.map", -1 },
	{ "/acss", -1 },
	{ "/app.js", 3 },
	{ "/app.Js", 3 },
	{ "/app.min.js", 3 },
	{ "/assets/app.js", 3 },
	/* index.html and the files of a directory. */
	{ "/a/index.html", 6 },
	{ "/a/index.htm", 8 },
	{ "/a/index.html.bak", 6 },	/* a byte prefix too */
	{ "/a/", -1 },
	{ "/docs/index.html", 9 },
	{ "/docs/", 9 },
	{ "/docs", -1 },
	{ "/x", 7 },
	{ "/xyz/index.html", 7 },	/* a byte prefix, like nginx's */
	{ "/X", -1 },
	{ "/", -1 },
	{ "", -1 },
};

static void match_desc(const struct match_case *c, char *desc)
{
	cc_escape(c->path, desc);
}

KUNIT_ARRAY_PARAM(match, match_cases, match_desc);

static void match_test(struct kunit *test)
{
	const struct match_case *c = test->param_value;
	struct kweb_cache_rules *r = cc_rules(test);
	const struct kweb_cache_rule *got;

	KUNIT_ASSERT_EQ(test, kweb_cache_rules_parse(r, match_rules), 0);
	KUNIT_ASSERT_EQ(test, r->nr, 10);
	got = kweb_cache_rule_match(r, c->path, strlen(c->path));
	KUNIT_EXPECT_EQ(test, got ? (int)(got - r->r) : -1, c->rule);
}

static void match_none_test(struct kunit *test)
{
	static const char path[] = "/assets/a.css";
	struct kweb_cache_rules *r = cc_rules(test);

	KUNIT_EXPECT_NULL(test, kweb_cache_rule_match(NULL, path, 13));
	KUNIT_ASSERT_EQ(test, kweb_cache_rules_parse(r, NULL), 0);
	KUNIT_EXPECT_NULL(test, kweb_cache_rule_match(r, path, 13));
	/* len bounds the path: "/assets/a.c" is not a .css file. */
	KUNIT_ASSERT_EQ(test, kweb_cache_rules_parse(r, ".css=x;/assets/=y"),
			0);
	KUNIT_EXPECT_PTR_EQ(test, kweb_cache_rule_match(r, path, 13),
			    &r->r[0]);
	KUNIT_EXPECT_PTR_EQ(test, kweb_cache_rule_match(r, path, 11),
			    &r->r[1]);
	KUNIT_EXPECT_NULL(test, kweb_cache_rule_match(r, path, 7));
}

static struct kunit_case kweb_http_cache_rules_cases[] = {
	KUNIT_CASE_PARAM(parse_test, parse_gen_params),
	KUNIT_CASE_PARAM(value_test, value_gen_params),
	KUNIT_CASE(slices_test),
	KUNIT_CASE(nul_test),
	KUNIT_CASE(limits_test),
	KUNIT_CASE_PARAM(match_test, match_gen_params),
	KUNIT_CASE(match_none_test),
	{}
};

static struct kunit_suite kweb_http_cache_rules_suite = {
	.name = "kweb_http_cache_rules",
	.test_cases = kweb_http_cache_rules_cases,
};

kunit_test_suite(kweb_http_cache_rules_suite);
