// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_encoding.c: Accept-Encoding's weights, "*",
 * case, refusals that win, ignored malformed elements and lines that add
 * up; then the choice between precompressed files and their names.
 */
#include <kunit/test.h>

#include "http_encoding.h"
#include "http_parse.h"

#define BR KWEB_ENC_BIT(KWEB_ENC_BR)
#define GZ KWEB_ENC_BIT(KWEB_ENC_GZIP)

struct ae_case {
	const char *v;
	u8 mask;
};

static const struct ae_case ae_cases[] = {
	/* What browsers and tools send. */
	{ "gzip, deflate, br, zstd", BR | GZ },
	{ "gzip, deflate", GZ },
	{ "br", BR },
	{ "deflate, zstd", 0 },
	{ "identity", 0 },
	{ "", 0 },
	/* Case and the x-gzip alias (RFC 9110 8.4.1.3). */
	{ "GZIP", GZ },
	{ "Br", BR },
	{ "x-gzip", GZ },
	{ "X-GZip", GZ },
	{ "gzip2", 0 },
	{ "gz", 0 },
	{ "bro", 0 },
	/* Weights: 0 refuses, any other allows. */
	{ "gzip;q=0", 0 },
	{ "gzip;q=0.", 0 },
	{ "gzip;q=0.000", 0 },
	{ "gzip;q=0.001", GZ },
	{ "gzip;q=0.5, br;q=0", GZ },
	{ "gzip;q=1", GZ },
	{ "gzip;q=1.000", GZ },
	{ "gzip;Q=0", 0 },
	{ "gzip ; q=0", 0 },
	{ "gzip\t;\tq=0.0", 0 },
	{ "br;q=0.1, gzip;q=0.9", BR | GZ },
	/* Not a qvalue, or not the grammar: the element is ignored. */
	{ "gzip;q=1.5", 0 },
	{ "gzip;q=2", 0 },
	{ "gzip;q=0.0000", 0 },
	{ "gzip;q=", 0 },
	{ "gzip;q=-0", 0 },
	{ "gzip;q=abc", 0 },
	{ "gzip;q = 0.5", 0 },
	{ "gzip;level=1", 0 },
	{ "gzip;q=0.5;x=y", 0 },
	{ "gzip br", 0 },
	{ "\"gzip\"", 0 },
	{ "gzip;q=0x, br", BR },
	/* A refusal wins over the same coding named with a weight. */
	{ "gzip, gzip;q=0", 0 },
	{ "gzip;q=0, gzip", 0 },
	{ "x-gzip;q=0, gzip", 0 },
	/* "*": every coding the field does not name. */
	{ "*", BR | GZ },
	{ "*;q=0", 0 },
	{ "*, br;q=0", GZ },
	{ "gzip;q=0, *", BR },
	{ "*;q=0, gzip", GZ },
	{ "*, *;q=0", 0 },
	{ "identity;q=0, *", BR | GZ },
	/* Empty elements and separators. */
	{ ",,, gzip ,,", GZ },
	{ " ,\t, br", BR },
	{ ";q=1", 0 },
	{ ",", 0 },
};

static void ae_case_desc(const struct ae_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%s\"", c->v);
}

KUNIT_ARRAY_PARAM(ae, ae_cases, ae_case_desc);

static void ae_test(struct kunit *test)
{
	const struct ae_case *c = test->param_value;
	struct kweb_accept_enc a = {};

	kweb_accept_encoding_add(&a, c->v, strlen(c->v));
	KUNIT_EXPECT_EQ_MSG(test, kweb_accept_encoding_mask(&a), c->mask,
			    "Accept-Encoding: %s", c->v);
}

/* Field lines add up, as one list; len bounds the value. */
static void ae_lines_test(struct kunit *test)
{
	struct kweb_accept_enc a = {};
	static const char v[] = "gzip;q=0, br";

	kweb_accept_encoding_add(&a, "br", 2);
	kweb_accept_encoding_add(&a, "gzip", 4);
	KUNIT_EXPECT_EQ(test, kweb_accept_encoding_mask(&a), BR | GZ);
	kweb_accept_encoding_add(&a, "gzip;q=0", 8);
	KUNIT_EXPECT_EQ(test, kweb_accept_encoding_mask(&a), BR);

	memset(&a, 0, sizeof(a));
	/* "gzip;q=" then: the element is cut, not a qvalue. */
	kweb_accept_encoding_add(&a, v, 7);
	KUNIT_EXPECT_EQ(test, kweb_accept_encoding_mask(&a), 0);
	memset(&a, 0, sizeof(a));
	kweb_accept_encoding_add(&a, v, 4);
	KUNIT_EXPECT_EQ(test, kweb_accept_encoding_mask(&a), GZ);
}

/* The parser hands every Accept-Encoding line over, whatever its case. */
static void ae_parse_test(struct kunit *test)
{
	static const char head[] = "GET /a.js HTTP/1.1\r\nHost: h\r\n"
				   "accept-encoding: gzip\r\n"
				   "ACCEPT-ENCODING: br;q=0, identity\r\n\r\n";
	struct kweb_request req;

	KUNIT_ASSERT_EQ(test, kweb_http_parse(head, sizeof(head) - 1, 8192,
					      &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, kweb_accept_encoding_mask(&req.accept_enc), GZ);

	/* None: nothing but identity, as with nginx (see docs/behaviour.md). */
	KUNIT_ASSERT_EQ(test, kweb_http_parse("GET / HTTP/1.1\r\nHost: h\r\n\r\n",
					      27, 8192, &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, kweb_accept_encoding_mask(&req.accept_enc), 0);
}

static void ae_choose_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kweb_encoding_choose(BR | GZ, BR | GZ),
			KWEB_ENC_BR);
	KUNIT_EXPECT_EQ(test, kweb_encoding_choose(BR | GZ, GZ), KWEB_ENC_GZIP);
	KUNIT_EXPECT_EQ(test, kweb_encoding_choose(GZ, BR | GZ), KWEB_ENC_GZIP);
	KUNIT_EXPECT_EQ(test, kweb_encoding_choose(BR, GZ), KWEB_ENC_IDENTITY);
	KUNIT_EXPECT_EQ(test, kweb_encoding_choose(0, BR | GZ),
			KWEB_ENC_IDENTITY);
	KUNIT_EXPECT_EQ(test, kweb_encoding_choose(BR | GZ, 0),
			KWEB_ENC_IDENTITY);
	KUNIT_EXPECT_STREQ(test, kweb_encoding_name(KWEB_ENC_BR), "br");
	KUNIT_EXPECT_STREQ(test, kweb_encoding_name(KWEB_ENC_GZIP), "gzip");
	KUNIT_EXPECT_STREQ(test, kweb_encoding_suffix(KWEB_ENC_BR), ".br");
	KUNIT_EXPECT_STREQ(test, kweb_encoding_suffix(KWEB_ENC_GZIP), ".gz");
	KUNIT_EXPECT_STREQ(test, kweb_encoding_suffix(KWEB_ENC_IDENTITY), "");
}

/* gzip_static's defaults: no gzip to HTTP/1.0 or through a proxy. */
static void ae_sendable_test(struct kunit *test)
{
	static const char via[] = "GET / HTTP/1.1\r\nHost: h\r\n"
				  "Accept-Encoding: gzip, br\r\n"
				  "VIA: 1.1 cache\r\n\r\n";
	struct kweb_request req;

	KUNIT_EXPECT_EQ(test, kweb_encoding_sendable(BR | GZ, false, false),
			BR | GZ);
	KUNIT_EXPECT_EQ(test, kweb_encoding_sendable(BR | GZ, true, false), BR);
	KUNIT_EXPECT_EQ(test, kweb_encoding_sendable(BR | GZ, false, true), BR);
	KUNIT_EXPECT_EQ(test, kweb_encoding_sendable(GZ, true, true), 0);
	KUNIT_EXPECT_EQ(test, kweb_encoding_sendable(0, false, false), 0);

	KUNIT_ASSERT_EQ(test, kweb_http_parse(via, sizeof(via) - 1, 8192,
					      &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_TRUE(test, req.via);
	KUNIT_ASSERT_EQ(test, kweb_http_parse("GET / HTTP/1.1\r\nHost: h\r\n\r\n",
					      27, 8192, &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_FALSE(test, req.via);
}

static struct kunit_case kweb_http_encoding_cases[] = {
	KUNIT_CASE_PARAM(ae_test, ae_gen_params),
	KUNIT_CASE(ae_lines_test),
	KUNIT_CASE(ae_parse_test),
	KUNIT_CASE(ae_choose_test),
	KUNIT_CASE(ae_sendable_test),
	{}
};

static struct kunit_suite kweb_http_encoding_suite = {
	.name = "kweb_http_encoding",
	.test_cases = kweb_http_encoding_cases,
};

kunit_test_suite(kweb_http_encoding_suite);
