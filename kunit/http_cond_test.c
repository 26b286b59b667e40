// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_cond.c: the ETag format, If-None-Match (weak
 * comparison, lists, "*"), If-Range (strong comparison or exact date),
 * If-Modified-Since, If-Match (strong comparison), If-Unmodified-Since,
 * and RFC 9110 13.2.2's order among them.
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

/* If-Match: strong comparison (RFC 9110 13.1.1). */
static const struct inm_case im_cases[] = {
	{ "*", true },
	{ " * ", true },
	{ ETAG, true },
	{ "\"x\", " ETAG, true },
	{ ETAG ", \"x\"", true },
	{ ", ," ETAG ",,", true },
	{ "W/\"x\", " ETAG, true },
	{ "W/" ETAG, false },
	{ "\"x\"", false },
	{ "\"foo\"", false },
	{ "\"5F3B2C1A-1A2B\"", false },
	{ "5f3b2c1a-1a2b", false },
	{ "junk, " ETAG, false },
	{ ETAG " junk", false },
	{ "*, " ETAG, false },
	{ "If-Match", false },
	{ "", false },
	{ ",", false },
};

KUNIT_ARRAY_PARAM(im, im_cases, inm_desc);

static void if_match_test(struct kunit *test)
{
	const struct inm_case *c = test->param_value;
	size_t len = strlen(c->v);
	char *v = kunit_kmalloc(test, len ? len : 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, v);
	memcpy(v, c->v, len);
	KUNIT_EXPECT_EQ_MSG(test, kweb_if_match(v, len, ETAG, strlen(ETAG)),
			    c->match, "%s", c->v);
}

static void if_match_weak_etag_test(struct kunit *test)
{
	/* strong comparison: a weak tag of ours matches nothing but "*" */
	KUNIT_EXPECT_FALSE(test, kweb_if_match("\"a\"", 3, "W/\"a\"", 5));
	KUNIT_EXPECT_FALSE(test, kweb_if_match("W/\"a\"", 5, "W/\"a\"", 5));
	KUNIT_EXPECT_TRUE(test, kweb_if_match("*", 1, "W/\"a\"", 5));
	KUNIT_EXPECT_TRUE(test, kweb_if_match("\"a\"", 3, "\"a\"", 3));
}

/* If-Unmodified-Since for a string literal */
#define IUS(lit, mtime) kweb_if_unmodified_since(lit, sizeof(lit) - 1, mtime)

static void if_unmodified_since_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, IUS(MTIME_DATE, MTIME));
	KUNIT_EXPECT_TRUE(test, IUS(MTIME_DATE, MTIME - 1));
	KUNIT_EXPECT_FALSE(test, IUS(MTIME_DATE, MTIME + 1));
	KUNIT_EXPECT_FALSE(test, IUS(" " MTIME_DATE "\t", MTIME + 1));
	KUNIT_EXPECT_FALSE(test, IUS("Tue Aug 18 01:17:14 2020", MTIME + 1));
	/* not one valid date: ignored (RFC 9110 13.1.4), i.e. true */
	KUNIT_EXPECT_TRUE(test, IUS("", MTIME + 1));
	KUNIT_EXPECT_TRUE(test, IUS("garbage", MTIME + 1));
	KUNIT_EXPECT_TRUE(test, IUS(MTIME_DATE ", " MTIME_DATE, MTIME + 1));
	KUNIT_EXPECT_TRUE(test, IUS("If-Unmodified-Since", MTIME + 1));
}

/* RFC 9110 13.2.2's order: which field decides, and how. */
struct pre_case {
	const char *name;
	const char *im, *ius, *inm, *ims;	/* NULL: not sent */
	u16 status;
};

#define OLD "Tue, 18 Aug 2020 01:17:13 GMT"	/* a second before MTIME */

static const struct pre_case pre_cases[] = {
	{ "none", NULL, NULL, NULL, NULL, 0 },
	{ "If-Match matches", ETAG, NULL, NULL, NULL, 0 },
	{ "If-Match fails", "\"foo\"", NULL, NULL, NULL, 412 },
	{ "If-Match *", "*", NULL, NULL, NULL, 0 },
	{ "If-Match empty", "", NULL, NULL, NULL, 412 },
	{ "If-Unmodified-Since holds", NULL, MTIME_DATE, NULL, NULL, 0 },
	{ "If-Unmodified-Since fails", NULL, OLD, NULL, NULL, 412 },
	{ "If-Unmodified-Since invalid: ignored", NULL, "x", NULL, NULL, 0 },
	{ "If-Match wins over If-Unmodified-Since", ETAG, OLD, NULL, NULL, 0 },
	{ "If-Match fails, If-Unmodified-Since holds", "\"x\"", MTIME_DATE,
	  NULL, NULL, 412 },
	{ "412 before 304", "\"x\"", NULL, ETAG, NULL, 412 },
	{ "412 before 304 (dates)", NULL, OLD, NULL, MTIME_DATE, 412 },
	{ "If-Match, then If-None-Match", ETAG, NULL, ETAG, NULL, 304 },
	{ "If-Match, If-None-Match fails", ETAG, NULL, "\"x\"", NULL, 0 },
	{ "If-Unmodified-Since, then If-Modified-Since", NULL, MTIME_DATE,
	  NULL, MTIME_DATE, 304 },
	{ "If-None-Match matches", NULL, NULL, ETAG, NULL, 304 },
	{ "If-None-Match wins over If-Modified-Since", NULL, NULL, ETAG, OLD,
	  304 },
	{ "If-None-Match fails, If-Modified-Since ignored", NULL, NULL,
	  "\"x\"", MTIME_DATE, 0 },
	{ "empty If-None-Match: If-Modified-Since ignored", NULL, NULL, "",
	  MTIME_DATE, 0 },
	{ "If-Modified-Since", NULL, NULL, NULL, MTIME_DATE, 304 },
	{ "If-Modified-Since older", NULL, NULL, NULL, OLD, 0 },
};

static void pre_desc(const struct pre_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(pre, pre_cases, pre_desc);

static struct kweb_str pre_str(const char *s)
{
	struct kweb_str v = { .p = s, .len = s ? strlen(s) : 0 };

	return v;
}

static void preconditions_test(struct kunit *test)
{
	const struct pre_case *c = test->param_value;
	const struct kweb_preconds pc = {
		.if_match = pre_str(c->im),
		.if_unmodified_since = pre_str(c->ius),
		.if_none_match = pre_str(c->inm),
		.if_modified_since = pre_str(c->ims),
	};

	KUNIT_EXPECT_EQ_MSG(test, kweb_preconditions(&pc, ETAG, strlen(ETAG),
						     MTIME),
			    c->status, "%s", c->name);
}

static struct kunit_case kweb_http_cond_cases[] = {
	KUNIT_CASE(etag_format_test),
	KUNIT_CASE_PARAM(if_none_match_test, inm_gen_params),
	KUNIT_CASE(if_none_match_weak_etag_test),
	KUNIT_CASE_PARAM(if_range_test, if_range_gen_params),
	KUNIT_CASE(if_range_weak_etag_test),
	KUNIT_CASE(not_modified_since_test),
	KUNIT_CASE_PARAM(if_match_test, im_gen_params),
	KUNIT_CASE(if_match_weak_etag_test),
	KUNIT_CASE(if_unmodified_since_test),
	KUNIT_CASE_PARAM(preconditions_test, pre_gen_params),
	{}
};

static struct kunit_suite kweb_http_cond_suite = {
	.name = "kweb_http_cond",
	.test_cases = kweb_http_cond_cases,
};

kunit_test_suite(kweb_http_cond_suite);
