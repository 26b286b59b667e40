// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_cond.c: the ETag format, If-None-Match (weak
 * comparison, lists, "*"), If-Range (strong comparison or exact date) and
 * If-Modified-Since.
 */
#include <kunit/test.h>

#include "http_cond.h"

#define ETAG "\"5f3b2c1a-1a2b\""
#define MTIME 0x5f3b2c1aLL	/* Tue, 18 Aug 2020 01:17:14 GMT */
#define MTIME_DATE "Tue, 18 Aug 2020 01:17:14 GMT"

static void etag_format_test(struct kunit *test)
{
	char buf[KWEB_ETAG_MAX + 1];

	KUNIT_EXPECT_EQ(test, kweb_etag_format(buf, 0x5f3b2c1a, 0x1a2b), 15);
	KUNIT_EXPECT_STREQ(test, buf, ETAG);
	KUNIT_EXPECT_EQ(test, kweb_etag_format(buf, 0, 0), 5);
	KUNIT_EXPECT_STREQ(test, buf, "\"0-0\"");
	KUNIT_EXPECT_EQ(test, kweb_etag_format(buf, 16, 15), 6);
	KUNIT_EXPECT_STREQ(test, buf, "\"10-f\"");
	/* a file from before 1970 gets the ETag of one from 1970 */
	kweb_etag_format(buf, -5, 1);
	KUNIT_EXPECT_STREQ(test, buf, "\"0-1\"");
	/* the longest one fits */
	KUNIT_EXPECT_EQ(test, kweb_etag_format(buf, (s64)(~0ULL >> 1), ~0ULL),
			35);
	KUNIT_EXPECT_STREQ(test, buf, "\"7fffffffffffffff-ffffffffffffffff\"");
	KUNIT_EXPECT_LE(test, strlen(buf), KWEB_ETAG_MAX);
	kweb_etag_format(buf, 0x123456789abcdefLL, 0x1000000000000000ULL);
	KUNIT_EXPECT_STREQ(test, buf, "\"123456789abcdef-1000000000000000\"");
}

struct inm_case {
	const char *v;
	bool match;
};

static const struct inm_case inm_cases[] = {
	{ "*", true },
	{ " * ", true },
	{ ETAG, true },
	{ "W/" ETAG, true },
	{ "\"x\", " ETAG, true },
	{ "\"x\"," ETAG, true },
	{ ETAG ", \"x\"", true },
	{ "W/\"x\" ,\t" ETAG " , ", true },
	{ ", ," ETAG ",,", true },
	{ "\t" ETAG "\t", true },
	{ "\"x\"", false },
	{ "\"x\", W/\"y\"", false },
	{ "\"\"", false },
	{ "\"5F3B2C1A-1A2B\"", false },
	{ "\"5f3b2c1a-1a2b \"", false },
	{ "5f3b2c1a-1a2b", false },
	{ "\"5f3b2c1a-1a2b", false },
	{ "5f3b2c1a-1a2b\"", false },
	{ "w/" ETAG, false },
	{ "W/ " ETAG, false },
	{ "W" ETAG, false },
	{ ETAG " junk", false },
	{ ETAG ", junk", false },
	{ "junk, " ETAG, false },
	{ ETAG ETAG, false },
	{ ETAG " " ETAG, false },
	{ "\"a\"b\", " ETAG, false },
	{ "*, " ETAG, false },
	{ "**", false },
	{ "", false },
	{ ",", false },
	{ "\"\x01\", " ETAG, false },
};

static void inm_desc(const struct inm_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->v);
}

KUNIT_ARRAY_PARAM(inm, inm_cases, inm_desc);

static void if_none_match_test(struct kunit *test)
{
	const struct inm_case *c = test->param_value;
	size_t len = strlen(c->v);
	char *v = kunit_kmalloc(test, len ? len : 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, v);
	memcpy(v, c->v, len);
	KUNIT_EXPECT_EQ_MSG(test, kweb_if_none_match(v, len, ETAG,
						     strlen(ETAG)),
			    c->match, "%s", c->v);
}

static void if_none_match_weak_etag_test(struct kunit *test)
{
	/* weak comparison works with a weak tag on our side too */
	KUNIT_EXPECT_TRUE(test, kweb_if_none_match("\"a\"", 3, "W/\"a\"", 5));
	KUNIT_EXPECT_TRUE(test, kweb_if_none_match("W/\"a\"", 5, "W/\"a\"", 5));
	KUNIT_EXPECT_FALSE(test, kweb_if_none_match("\"b\"", 3, "W/\"a\"", 5));
	/* a broken tag of ours never matches, except for "*" */
	KUNIT_EXPECT_FALSE(test, kweb_if_none_match("a", 1, "a", 1));
	KUNIT_EXPECT_TRUE(test, kweb_if_none_match("*", 1, "a", 1));
}

struct if_range_case {
	const char *v;
	bool ok;
};

static const struct if_range_case if_range_cases[] = {
	{ ETAG, true },
	{ " " ETAG " ", true },
	{ MTIME_DATE, true },
	{ "Tuesday, 18-Aug-20 01:17:14 GMT", true },
	{ "Tue Aug 18 01:17:14 2020", true },
	/* a weak tag never does, on either side (RFC 9110 13.1.5) */
	{ "W/" ETAG, false },
	{ "\"5f3b2c1a-1a2c\"", false },
	{ "\"5F3B2C1A-1A2B\"", false },
	{ ETAG ", " ETAG, false },
	{ ETAG "x", false },
	{ "\"5f3b2c1a-1a2b", false },
	{ "Tue, 18 Aug 2020 01:17:13 GMT", false },
	{ "Tue, 18 Aug 2020 01:17:15 GMT", false },
	{ "Tue, 18 Aug 2020 01:17:14 GMT ", true },
	{ "Tue, 18 Aug 2020 01:17:14 GMTx", false },
	{ "Wed, 18 Aug 2020 01:17:14 GMT", true },
	{ "", false },
	{ "*", false },
	{ "If-Range", false },
	{ "Range", false },
};

static void if_range_desc(const struct if_range_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->v);
}

KUNIT_ARRAY_PARAM(if_range, if_range_cases, if_range_desc);

static void if_range_test(struct kunit *test)
{
	const struct if_range_case *c = test->param_value;
	size_t len = strlen(c->v);
	char *v = kunit_kmalloc(test, len ? len : 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, v);
	memcpy(v, c->v, len);
	KUNIT_EXPECT_EQ_MSG(test, kweb_if_range(v, len, ETAG, strlen(ETAG),
						MTIME),
			    c->ok, "%s", c->v);
}

static void if_range_weak_etag_test(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, kweb_if_range("W/\"a\"", 5, "W/\"a\"", 5, 0));
	KUNIT_EXPECT_FALSE(test, kweb_if_range("\"a\"", 3, "W/\"a\"", 5, 0));
	KUNIT_EXPECT_TRUE(test, kweb_if_range("\"a\"", 3, "\"a\"", 3, 0));
}

/* If-Modified-Since for a string literal */
#define NMS(lit, mtime) kweb_not_modified_since(lit, sizeof(lit) - 1, mtime)

static void not_modified_since_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, NMS(MTIME_DATE, MTIME));
	KUNIT_EXPECT_TRUE(test, NMS(MTIME_DATE, MTIME - 1));
	KUNIT_EXPECT_TRUE(test, NMS(MTIME_DATE, 0));
	KUNIT_EXPECT_FALSE(test, NMS(MTIME_DATE, MTIME + 1));
	KUNIT_EXPECT_TRUE(test, NMS(" " MTIME_DATE "\t", MTIME));
	KUNIT_EXPECT_TRUE(test, NMS("Tue Aug 18 01:17:14 2020", MTIME));
	KUNIT_EXPECT_TRUE(test, NMS("Tuesday, 18-Aug-20 01:17:14 GMT", MTIME));
	/* a date in the future is still a date */
	KUNIT_EXPECT_TRUE(test, NMS("Fri, 31 Dec 9999 23:59:59 GMT", MTIME));
	/* invalid: the field is ignored, i.e. modified */
	KUNIT_EXPECT_FALSE(test, NMS("", MTIME));
	KUNIT_EXPECT_FALSE(test, NMS("0", 0));
	KUNIT_EXPECT_FALSE(test, NMS(MTIME_DATE "; length=1", MTIME));
	KUNIT_EXPECT_FALSE(test, NMS("Thu, 31 Apr 2020 01:17:14 GMT", 0));
	KUNIT_EXPECT_FALSE(test, NMS("If-Modified-Since", 0));
}

static struct kunit_case kweb_http_cond_cases[] = {
	KUNIT_CASE(etag_format_test),
	KUNIT_CASE_PARAM(if_none_match_test, inm_gen_params),
	KUNIT_CASE(if_none_match_weak_etag_test),
	KUNIT_CASE_PARAM(if_range_test, if_range_gen_params),
	KUNIT_CASE(if_range_weak_etag_test),
	KUNIT_CASE(not_modified_since_test),
	{}
};

static struct kunit_suite kweb_http_cond_suite = {
	.name = "kweb_http_cond",
	.test_cases = kweb_http_cond_cases,
};

kunit_test_suite(kweb_http_cond_suite);
