// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_range.c: the three range forms, clamping,
 * unsatisfiable ranges, overflow, sizes 0 and 1, lists and OWS.
 */
#include <kunit/test.h>

#include "http_range.h"

#define U64_MAX_STR "18446744073709551615"
#define U64_OVER_STR "18446744073709551616"

struct range_case {
	const char *v;
	u64 size;
	enum kweb_range_result res;
	u64 first, last;
};

#define OK(v, size, a, b) { v, size, KWEB_RANGE_OK, a, b }
#define NONE(v, size) { v, size, KWEB_RANGE_NONE }
#define UNSAT(v, size) { v, size, KWEB_RANGE_UNSATISFIABLE }

static const struct range_case range_cases[] = {
	/* first-last */
	OK("bytes=0-0", 10, 0, 0),
	OK("bytes=0-9", 10, 0, 9),
	OK("bytes=2-5", 10, 2, 5),
	OK("bytes=9-9", 10, 9, 9),
	OK("bytes=0-10", 10, 0, 9),
	OK("bytes=3-" U64_MAX_STR, 10, 3, 9),
	OK("bytes=007-08", 10, 7, 8),
	NONE("bytes=5-4", 10),
	NONE("bytes=5-4", 0),
	UNSAT("bytes=10-10", 10),
	UNSAT("bytes=10-20", 10),
	UNSAT("bytes=" U64_MAX_STR "-" U64_MAX_STR, 10),
	/* first- */
	OK("bytes=0-", 10, 0, 9),
	OK("bytes=9-", 10, 9, 9),
	UNSAT("bytes=10-", 10),
	UNSAT("bytes=" U64_MAX_STR "-", 10),
	/* -suffix */
	OK("bytes=-1", 10, 9, 9),
	OK("bytes=-3", 10, 7, 9),
	OK("bytes=-10", 10, 0, 9),
	OK("bytes=-11", 10, 0, 9),
	OK("bytes=-" U64_MAX_STR, 10, 0, 9),
	UNSAT("bytes=-0", 10),
	UNSAT("bytes=-000", 10),
	/* size 0: from its start, the whole (empty) file, as nginx */
	NONE("bytes=0-0", 0),
	NONE("bytes=0-", 0),
	NONE("bytes=0-5", 0),
	NONE("bytes=-1", 0),
	NONE("bytes=-0", 0),
	UNSAT("bytes=1-", 0),
	UNSAT("bytes=5-9", 0),
	/* size 1 */
	OK("bytes=0-0", 1, 0, 0),
	OK("bytes=0-", 1, 0, 0),
	OK("bytes=0-5", 1, 0, 0),
	OK("bytes=-1", 1, 0, 0),
	OK("bytes=-5", 1, 0, 0),
	UNSAT("bytes=1-", 1),
	UNSAT("bytes=1-1", 1),
	/* the largest size */
	OK("bytes=-1", ~0ULL, ~0ULL - 1, ~0ULL - 1),
	OK("bytes=0-", ~0ULL, 0, ~0ULL - 1),
	OK("bytes=18446744073709551614-", ~0ULL, ~0ULL - 1, ~0ULL - 1),
	UNSAT("bytes=" U64_MAX_STR "-", ~0ULL),
	/* overflow */
	NONE("bytes=" U64_OVER_STR "-", 10),
	NONE("bytes=0-" U64_OVER_STR, 10),
	NONE("bytes=-" U64_OVER_STR, 10),
	NONE("bytes=99999999999999999999999999-", 10),
	/* unit and "=" */
	OK("BYTES=0-1", 10, 0, 1),
	OK("Bytes=0-1", 10, 0, 1),
	NONE("items=0-1", 10),
	NONE("byte=0-1", 10),
	NONE("bytesx=0-1", 10),
	NONE("bytes", 10),
	NONE("bytes0-1", 10),
	NONE("bytes =0-1", 10),
	NONE("bytes= 0-1", 10),
	NONE("bytes=\t0-1", 10),
	NONE("", 10),
	NONE("=0-1", 10),
	/* OWS of the field value itself is trimmed */
	OK(" bytes=0-1 ", 10, 0, 1),
	OK("\tbytes=0-1\t", 10, 0, 1),
	/* OWS inside a spec */
	NONE("bytes=0 -1", 10),
	NONE("bytes=0- 1", 10),
	NONE("bytes=- 1", 10),
	/* bad specs */
	NONE("bytes=", 10),
	NONE("bytes=-", 10),
	NONE("bytes=--1", 10),
	NONE("bytes=a-b", 10),
	NONE("bytes=1-2-3", 10),
	NONE("bytes=+1-2", 10),
	NONE("bytes=1-+2", 10),
	NONE("bytes=0x1-2", 10),
	NONE("bytes=1", 10),
	NONE("bytes=1;2", 10),
	/* lists: empty elements are fine, two ranges are ignored */
	OK("bytes=0-1,", 10, 0, 1),
	OK("bytes=,0-1", 10, 0, 1),
	OK("bytes=, ,0-1 , ,", 10, 0, 1),
	OK("bytes=,\t0-1\t,", 10, 0, 1),
	NONE("bytes=,", 10),
	NONE("bytes=, ,", 10),
	NONE("bytes=0-1,2-3", 10),
	NONE("bytes=0-1, -1", 10),
	NONE("bytes=0-0,0-0", 10),
	NONE("bytes=0-1,x", 10),
	NONE("bytes=20-30,40-50", 10),
	/* a repeated Range field, as kweb_http_parse() leaves it */
	NONE("Range", 10),
};

static void range_desc(const struct range_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%s\" size %llu", c->v,
		 (unsigned long long)c->size);
}

KUNIT_ARRAY_PARAM(range, range_cases, range_desc);

static void range_test(struct kunit *test)
{
	const struct range_case *c = test->param_value;
	size_t len = strlen(c->v);
	char *v = kunit_kmalloc(test, len ? len : 1, GFP_KERNEL);
	u64 first = 12345, last = 12345;

	KUNIT_ASSERT_NOT_NULL(test, v);
	memcpy(v, c->v, len);
	KUNIT_ASSERT_EQ_MSG(test, kweb_range_parse(v, len, c->size, &first,
						   &last),
			    c->res, "\"%s\"", c->v);
	if (c->res != KWEB_RANGE_OK)
		return;
	KUNIT_EXPECT_EQ(test, first, c->first);
	KUNIT_EXPECT_EQ(test, last, c->last);
}

static struct kunit_case kweb_http_range_cases[] = {
	KUNIT_CASE_PARAM(range_test, range_gen_params),
	{}
};

static struct kunit_suite kweb_http_range_suite = {
	.name = "kweb_http_range",
	.test_cases = kweb_http_range_cases,
};

kunit_test_suite(kweb_http_range_suite);
