// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_date.c: IMF-fixdate output, the three input
 * formats, calendar edges (leap years, 29 Feb, 31 Apr, the epoch, 2038,
 * 9999) and everything that must be refused.
 */
#include <kunit/test.h>

#include "http_date.h"

struct date_fmt_case {
	s64 t;
	const char *s;
};

static const struct date_fmt_case date_fmt_cases[] = {
	{ 0, "Thu, 01 Jan 1970 00:00:00 GMT" },
	{ 59, "Thu, 01 Jan 1970 00:00:59 GMT" },
	{ 86399, "Thu, 01 Jan 1970 23:59:59 GMT" },
	{ 86400, "Fri, 02 Jan 1970 00:00:00 GMT" },
	{ 784111777, "Sun, 06 Nov 1994 08:49:37 GMT" },
	{ 946684799, "Fri, 31 Dec 1999 23:59:59 GMT" },
	{ 946684800, "Sat, 01 Jan 2000 00:00:00 GMT" },
	{ 951782400, "Tue, 29 Feb 2000 00:00:00 GMT" },
	{ 951868800, "Wed, 01 Mar 2000 00:00:00 GMT" },
	{ 1078012800, "Sun, 29 Feb 2004 00:00:00 GMT" },
	{ 2147483647, "Tue, 19 Jan 2038 03:14:07 GMT" },
	{ 2147483648LL, "Tue, 19 Jan 2038 03:14:08 GMT" },
	{ 4107456000LL, "Sun, 28 Feb 2100 00:00:00 GMT" },
	{ 4107542400LL, "Mon, 01 Mar 2100 00:00:00 GMT" },
	{ 13574563200LL, "Tue, 29 Feb 2400 00:00:00 GMT" },
	{ 253402300799LL, "Fri, 31 Dec 9999 23:59:59 GMT" },
	/* clamped */
	{ -1, "Thu, 01 Jan 1970 00:00:00 GMT" },
	{ -4000000000LL, "Thu, 01 Jan 1970 00:00:00 GMT" },
	{ (s64)(~0ULL >> 1) * -1 - 1, "Thu, 01 Jan 1970 00:00:00 GMT" },
	{ 253402300800LL, "Fri, 31 Dec 9999 23:59:59 GMT" },
	{ (s64)(~0ULL >> 1), "Fri, 31 Dec 9999 23:59:59 GMT" },
};

static void date_fmt_desc(const struct date_fmt_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%lld", (long long)c->t);
}

KUNIT_ARRAY_PARAM(date_fmt, date_fmt_cases, date_fmt_desc);

static void date_format_test(struct kunit *test)
{
	const struct date_fmt_case *c = test->param_value;
	char out[KWEB_HTTP_DATE_LEN + 2];

	out[KWEB_HTTP_DATE_LEN + 1] = 'x';
	kweb_http_date_format(c->t, out);
	KUNIT_EXPECT_STREQ(test, out, c->s);
	KUNIT_EXPECT_EQ(test, strlen(out), KWEB_HTTP_DATE_LEN);
	/* nothing written past the NUL */
	KUNIT_EXPECT_EQ(test, out[KWEB_HTTP_DATE_LEN + 1], 'x');
}

/* a t that stands for -EINVAL in the table */
#define BAD (-4611686018427387904LL)

struct date_parse_case {
	const char *s;
	s64 t;
};

static const struct date_parse_case date_parse_cases[] = {
	/* the three formats of RFC 9110 5.6.7 */
	{ "Sun, 06 Nov 1994 08:49:37 GMT", 784111777 },
	{ "Sunday, 06-Nov-94 08:49:37 GMT", 784111777 },
	{ "Sun Nov  6 08:49:37 1994", 784111777 },
	{ "Sun Nov 06 08:49:37 1994", 784111777 },
	/* the weekday must be a weekday, not the right one */
	{ "Mon, 06 Nov 1994 08:49:37 GMT", 784111777 },
	{ "Wednesday, 06-Nov-94 08:49:37 GMT", 784111777 },
	{ "Sat Nov  6 08:49:37 1994", 784111777 },
	/* edges */
	{ "Thu, 01 Jan 1970 00:00:00 GMT", 0 },
	{ "Thursday, 01-Jan-70 00:00:00 GMT", 0 },
	{ "Thu Jan  1 00:00:00 1970", 0 },
	{ "Wed, 31 Dec 1969 23:59:59 GMT", -1 },
	{ "Tue, 19 Jan 2038 03:14:07 GMT", 2147483647 },
	{ "Tue, 19 Jan 2038 03:14:08 GMT", 2147483648LL },
	{ "Tue Jan 19 03:14:08 2038", 2147483648LL },
	{ "Fri, 31 Dec 9999 23:59:59 GMT", 253402300799LL },
	{ "Sat, 01 Jan 0000 00:00:00 GMT", -62167219200LL },
	/* leap years */
	{ "Tue, 29 Feb 2000 00:00:00 GMT", 951782400 },
	{ "Sun, 29 Feb 2004 00:00:00 GMT", 1078012800 },
	{ "Tue, 29 Feb 2400 00:00:00 GMT", 13574563200LL },
	{ "Tue Feb 29 00:00:00 2000", 951782400 },
	{ "Tuesday, 29-Feb-00 00:00:00 GMT", 951782400 },
	{ "Thu, 29 Feb 1900 00:00:00 GMT", BAD },
	{ "Mon, 29 Feb 2100 00:00:00 GMT", BAD },
	{ "Sat, 29 Feb 2003 00:00:00 GMT", BAD },
	{ "Thu, 30 Feb 2000 00:00:00 GMT", BAD },
	{ "Sun, 28 Feb 2100 00:00:00 GMT", 4107456000LL },
	/* days of month */
	{ "Fri, 30 Apr 2021 00:00:00 GMT", 1619740800 },
	{ "Sat, 31 Apr 2021 00:00:00 GMT", BAD },
	{ "Thu, 31 Jun 2021 00:00:00 GMT", BAD },
	{ "Fri, 31 Sep 2021 00:00:00 GMT", BAD },
	{ "Wed, 31 Nov 2021 00:00:00 GMT", BAD },
	{ "Fri, 31 Dec 2021 00:00:00 GMT", 1640908800 },
	{ "Sat, 32 Jan 2022 00:00:00 GMT", BAD },
	{ "Sat, 00 Jan 2022 00:00:00 GMT", BAD },
	{ "Sat Apr 31 00:00:00 2021", BAD },
	{ "Sat Jan  0 00:00:00 2022", BAD },
	/* times */
	{ "Sun, 06 Nov 1994 23:59:59 GMT", 784166399 },
	{ "Sun, 06 Nov 1994 24:00:00 GMT", BAD },
	{ "Sun, 06 Nov 1994 08:60:00 GMT", BAD },
	{ "Thu, 31 Dec 2020 23:59:60 GMT", 1609459200 },
	{ "Sun, 06 Nov 1994 08:49:61 GMT", BAD },
	{ "Sun, 06 Nov 1994 99:99:99 GMT", BAD },
	/* RFC 850 two-digit years: 00-69 are 20xx, 70-99 19xx */
	{ "Friday, 31-Dec-99 23:59:59 GMT", 946684799 },
	{ "Saturday, 01-Jan-00 00:00:00 GMT", 946684800 },
	{ "Tuesday, 19-Jan-38 03:14:08 GMT", 2147483648LL },
	{ "Tuesday, 01-Jan-69 00:00:00 GMT", 3124224000LL },
	/* weekday and month names */
	{ "Sux, 06 Nov 1994 08:49:37 GMT", BAD },
	{ "sun, 06 Nov 1994 08:49:37 GMT", BAD },
	{ "SUN, 06 Nov 1994 08:49:37 GMT", BAD },
	{ "Sun, 06 nov 1994 08:49:37 GMT", BAD },
	{ "Sun, 06 Nev 1994 08:49:37 GMT", BAD },
	{ "Sun, 06 November 1994 08:49:37 GMT", BAD },
	{ "Sunday, 06 Nov 1994 08:49:37 GMT", BAD },
	{ "Sun, 06-Nov-94 08:49:37 GMT", BAD },
	{ "Funday, 06-Nov-94 08:49:37 GMT", BAD },
	{ "Sundays, 06-Nov-94 08:49:37 GMT", BAD },
	{ "Sunday, 06-Nov-1994 08:49:37 GMT", BAD },
	{ "Sund Nov  6 08:49:37 1994", BAD },
	/* zone */
	{ "Sun, 06 Nov 1994 08:49:37 gmt", BAD },
	{ "Sun, 06 Nov 1994 08:49:37 UTC", BAD },
	{ "Sun, 06 Nov 1994 08:49:37 +0000", BAD },
	{ "Sun, 06 Nov 1994 08:49:37", BAD },
	{ "Sun Nov  6 08:49:37 1994 GMT", BAD },
	/* shape */
	{ "", BAD },
	{ "Sun", BAD },
	{ "Sun,", BAD },
	{ "Sun, 06 Nov 1994 08:49:37 GM", BAD },
	{ "Sun, 06 Nov 1994 08:49:37 GMT ", BAD },
	{ " Sun, 06 Nov 1994 08:49:37 GMT", BAD },
	{ "Sun, 06 Nov 1994 08:49:37 GMTx", BAD },
	{ "Sat, 29 Oct 1994 19:43:31 GMT; length=34343", BAD },
	{ "Sun,  6 Nov 1994 08:49:37 GMT", BAD },
	{ "Sun, 6 Nov 1994 08:49:37 GMT", BAD },
	{ "Sun, 06 Nov 94 08:49:37 GMT", BAD },
	{ "Sun, 06 Nov 01994 08:49:37 GMT", BAD },
	{ "Sun,06 Nov 1994 08:49:37 GMT", BAD },
	{ "Sun, 06  Nov 1994 08:49:37 GMT", BAD },
	{ "Sun, 06 Nov 1994 8:49:37 GMT", BAD },
	{ "Sun, 06 Nov 1994 08.49.37 GMT", BAD },
	{ "Sun, -6 Nov 1994 08:49:37 GMT", BAD },
	{ "Sun, 0x Nov 1994 08:49:37 GMT", BAD },
	{ "Sun Nov 6 08:49:37 1994", BAD },
	{ "Sun Nov   6 08:49:37 1994", BAD },
	{ "Sun Nov  6 08:49:37 94", BAD },
	{ "Sun Nov  6 08:49:37 1994 ", BAD },
	{ "Sunday, 06-Nov-94 08:49:37 GMT\r", BAD },
	{ "1994-11-06T08:49:37Z", BAD },
	{ "784111777", BAD },
};

static void date_parse_desc(const struct date_parse_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%s\"", c->s);
}

KUNIT_ARRAY_PARAM(date_parse, date_parse_cases, date_parse_desc);

static void date_parse_test(struct kunit *test)
{
	const struct date_parse_case *c = test->param_value;
	size_t len = strlen(c->s);
	char *s = kunit_kmalloc(test, len ? len : 1, GFP_KERNEL);
	s64 t = 42;
	int err;

	KUNIT_ASSERT_NOT_NULL(test, s);
	memcpy(s, c->s, len);
	err = kweb_http_date_parse(s, len, &t);
	if (c->t == BAD) {
		KUNIT_EXPECT_EQ_MSG(test, err, -EINVAL, "\"%s\"", c->s);
		return;
	}
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "\"%s\"", c->s);
	KUNIT_EXPECT_EQ_MSG(test, t, c->t, "\"%s\"", c->s);
}

/* format then parse gives the same second back, across the range. */
static void date_roundtrip_test(struct kunit *test)
{
	char out[KWEB_HTTP_DATE_LEN + 1];
	s64 t, back;

	for (t = 0; t < 253402300799LL; t += 86400LL * 97 + 3599) {
		kweb_http_date_format(t, out);
		KUNIT_ASSERT_EQ(test, kweb_http_date_parse(out, strlen(out),
							   &back), 0);
		KUNIT_ASSERT_EQ(test, back, t);
	}
}

/* len bounds the input: a valid date followed by more bytes. */
static void date_len_test(struct kunit *test)
{
	static const char s[] = "Sun, 06 Nov 1994 08:49:37 GMTxyz";
	s64 t;

	KUNIT_EXPECT_EQ(test, kweb_http_date_parse(s, KWEB_HTTP_DATE_LEN, &t),
			0);
	KUNIT_EXPECT_EQ(test, t, 784111777);
	KUNIT_EXPECT_EQ(test, kweb_http_date_parse(s, KWEB_HTTP_DATE_LEN - 1,
						   &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, kweb_http_date_parse(s, 0, &t), -EINVAL);
}

static struct kunit_case kweb_http_date_cases[] = {
	KUNIT_CASE_PARAM(date_format_test, date_fmt_gen_params),
	KUNIT_CASE_PARAM(date_parse_test, date_parse_gen_params),
	KUNIT_CASE(date_roundtrip_test),
	KUNIT_CASE(date_len_test),
	{}
};

static struct kunit_suite kweb_http_date_suite = {
	.name = "kweb_http_date",
	.test_cases = kweb_http_date_cases,
};

kunit_test_suite(kweb_http_date_suite);
