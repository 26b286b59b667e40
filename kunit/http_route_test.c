// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_route.c: raw requests through the real parser
 * and path normalizer, then the routing decision; and the rule lists.
 */
#include <kunit/test.h>

#include "http_route.h"

struct route_case {
	const char *raw;
	enum kweb_route route;
};

#define HOST "Host: a\r\n\r\n"

static const struct route_case route_cases[] = {
	{ "GET /a.html HTTP/1.1\r\n" HOST, KWEB_ROUTE_SERVE },
	{ "HEAD / HTTP/1.0\r\n\r\n", KWEB_ROUTE_SERVE },
	{ "POST /a.html HTTP/1.1\r\nContent-Length: 1\r\n" HOST,
	  KWEB_ROUTE_METHOD },
	{ "get / HTTP/1.1\r\n" HOST, KWEB_ROUTE_METHOD },
	{ "OPTIONS * HTTP/1.1\r\n" HOST, KWEB_ROUTE_METHOD },
	{ "GET /a?x=1 HTTP/1.1\r\n" HOST, KWEB_ROUTE_QUERY },
	{ "GET /a? HTTP/1.1\r\n" HOST, KWEB_ROUTE_QUERY },
	{ "GET http://a/b?c HTTP/1.1\r\n" HOST, KWEB_ROUTE_QUERY },
	{ "GET /api/x HTTP/1.1\r\n" HOST, KWEB_ROUTE_PREFIX },
	{ "GET /api/ HTTP/1.1\r\n" HOST, KWEB_ROUTE_PREFIX },
	{ "GET /api HTTP/1.1\r\n" HOST, KWEB_ROUTE_SERVE },
	{ "GET /%61pi/x HTTP/1.1\r\n" HOST, KWEB_ROUTE_PREFIX },
	{ "GET /x/../api/y HTTP/1.1\r\n" HOST, KWEB_ROUTE_PREFIX },
	{ "GET //api//y HTTP/1.1\r\n" HOST, KWEB_ROUTE_PREFIX },
	{ "GET /API/x HTTP/1.1\r\n" HOST, KWEB_ROUTE_SERVE },
	{ "GET /cgi-bin/t HTTP/1.1\r\n" HOST, KWEB_ROUTE_PREFIX },
	{ "GET /i.php HTTP/1.1\r\n" HOST, KWEB_ROUTE_EXTENSION },
	{ "GET /d/i.PHP HTTP/1.1\r\n" HOST, KWEB_ROUTE_EXTENSION },
	{ "GET /i.ph%70 HTTP/1.1\r\n" HOST, KWEB_ROUTE_EXTENSION },
	{ "GET /.php HTTP/1.1\r\n" HOST, KWEB_ROUTE_EXTENSION },
	{ "GET /i.php/ HTTP/1.1\r\n" HOST, KWEB_ROUTE_SERVE },
	{ "GET /i.php.txt HTTP/1.1\r\n" HOST, KWEB_ROUTE_SERVE },
	{ "GET /i.php5 HTTP/1.1\r\n" HOST, KWEB_ROUTE_SERVE },
	{ "GET /iphp HTTP/1.1\r\n" HOST, KWEB_ROUTE_SERVE },
	{ "GET /p.cgi HTTP/1.1\r\n" HOST, KWEB_ROUTE_EXTENSION },
	{ "GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	  HOST, KWEB_ROUTE_UPGRADE },
	/* HTTP/1.0 has no Upgrade (RFC 9110 7.8): a static GET. */
	{ "GET /ws HTTP/1.0\r\nUpgrade: websocket\r\n\r\n", KWEB_ROUTE_SERVE },
	{ "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", KWEB_ROUTE_H2 },
	{ "GET / HTTP/2.0\r\n" HOST, KWEB_ROUTE_UNPARSED },
	{ "GET / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n" HOST,
	  KWEB_ROUTE_UNPARSED },
	{ "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n" HOST,
	  KWEB_ROUTE_UNPARSED },
	/* Malformed: kweb's own 400, never the backend's problem. */
	{ "GET / HTTP/1.1\r\nX: a\rb\r\n" HOST, KWEB_ROUTE_SERVE },
	{ "GET / HTTP/1.1\r\n\r\n", KWEB_ROUTE_SERVE },
	{ "GET /a b HTTP/1.1\r\n" HOST, KWEB_ROUTE_SERVE },
	/* A path kweb refuses: a query still makes it the backend's. */
	{ "GET /../x HTTP/1.1\r\n" HOST, KWEB_ROUTE_SERVE },
	{ "GET /a%zz HTTP/1.1\r\n" HOST, KWEB_ROUTE_SERVE },
	{ "GET /api/a%zz?x HTTP/1.1\r\n" HOST, KWEB_ROUTE_QUERY },
	{ "GET /../x?y HTTP/1.1\r\n" HOST, KWEB_ROUTE_QUERY },
	{ "GET /a#f?x HTTP/1.1\r\n" HOST, KWEB_ROUTE_SERVE },
};

static void route_desc(const struct route_case *c, char *desc)
{
	size_t i, n = 0;

	for (i = 0; c->raw[i] && c->raw[i] != '\r' &&
	     n < KUNIT_PARAM_DESC_SIZE - 1; i++)
		desc[n++] = c->raw[i];
	desc[n] = '\0';
}

KUNIT_ARRAY_PARAM(route, route_cases, route_desc);

static struct kweb_route_rules *route_rules(struct kunit *test)
{
	struct kweb_route_rules *r = kunit_kmalloc(test, sizeof(*r),
						   GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_EQ(test, kweb_route_rules_parse(r, "/api/,/cgi-bin/",
						     ".php,.CGI"), 0);
	return r;
}

static void route_test(struct kunit *test)
{
	const struct route_case *c = test->param_value;
	struct kweb_route_rules *rules = route_rules(test);
	size_t len = strlen(c->raw);
	char *buf = kunit_kmalloc(test, len, GFP_KERNEL);
	char *path = kunit_kmalloc(test, 256, GFP_KERNEL);
	struct kweb_request req;
	struct kweb_target t;
	enum kweb_parse_result res;
	enum kweb_route r;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, path);
	memcpy(buf, c->raw, len);
	res = kweb_http_parse(buf, len, 8192, &req);
	KUNIT_ASSERT_NE(test, res, KWEB_PARSE_INCOMPLETE);
	r = kweb_route_request(res, &req);
	if (r == KWEB_ROUTE_SERVE && res == KWEB_PARSE_OK) {
		int err = kweb_path_normalize(req.target.p, req.target.len,
					      path, 256, &t);

		r = err ? kweb_route_bad_target(&t, err) :
			  kweb_route_target(rules, &t, path);
	}
	KUNIT_EXPECT_EQ(test, r, c->route);
}

/*
 * A head longer than kweb reads (414 before its line ends, 431 after), or
 * with more fields than it keeps: the backend's, unread, whose limits may
 * be larger. A head kweb reads whole and finds malformed stays kweb's 400.
 */
static void route_head_too_long_test(struct kunit *test)
{
	static const char line[] =
		"GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\n";
	static const char fields[] =
		"GET / HTTP/1.1\r\nCookie: 0123456789abcdef0123456789\r\n"
		HOST;
	static const char start[] = "GET / HTTP/1.1\r\nHost: a\r\n";
	static const char field[] = "X: v\r\n";
	const size_t n = KWEB_MAX_FIELDS + 1;
	char *many = kunit_kzalloc(test, 32 + n * (sizeof(field) - 1),
				   GFP_KERNEL);
	struct kweb_request req;
	enum kweb_parse_result res;
	size_t i, len;

	KUNIT_ASSERT_NOT_NULL(test, many);
	res = kweb_http_parse(line, sizeof(line) - 1, 24, &req);
	KUNIT_ASSERT_EQ(test, res, KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 414);
	KUNIT_EXPECT_EQ(test, kweb_route_request(res, &req),
			KWEB_ROUTE_UNPARSED);

	res = kweb_http_parse(fields, sizeof(fields) - 1, 32, &req);
	KUNIT_ASSERT_EQ(test, res, KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 431);
	KUNIT_EXPECT_EQ(test, kweb_route_request(res, &req),
			KWEB_ROUTE_UNPARSED);

	len = sizeof(start) - 1;
	memcpy(many, start, len);
	for (i = 0; i < n; i++, len += sizeof(field) - 1)
		memcpy(many + len, field, sizeof(field) - 1);
	memcpy(many + len, "\r\n", 2);
	res = kweb_http_parse(many, len + 2, 8192, &req);
	KUNIT_ASSERT_EQ(test, res, KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 431);
	KUNIT_EXPECT_EQ(test, kweb_route_request(res, &req),
			KWEB_ROUTE_UNPARSED);
}

/* A path longer than the buffer: the backend's, with a query or not. */
static void route_long_path_test(struct kunit *test)
{
	char *path = kunit_kmalloc(test, 256, GFP_KERNEL);
	char *target = kunit_kmalloc(test, 320, GFP_KERNEL);
	struct kweb_target t;
	int err;

	KUNIT_ASSERT_NOT_NULL(test, path);
	KUNIT_ASSERT_NOT_NULL(test, target);
	target[0] = '/';
	memset(target + 1, 'a', 317);
	memcpy(target + 318, "?q", 2);

	err = kweb_path_normalize(target, 318, path, 256, &t);
	KUNIT_EXPECT_EQ(test, err, -ENAMETOOLONG);
	KUNIT_EXPECT_EQ(test, kweb_route_bad_target(&t, err),
			KWEB_ROUTE_UNPARSED);
	err = kweb_path_normalize(target, 320, path, 256, &t);
	KUNIT_EXPECT_EQ(test, err, -ENAMETOOLONG);
	KUNIT_EXPECT_EQ(test, kweb_route_bad_target(&t, err), KWEB_ROUTE_QUERY);
	/* fits: no error to route */
	KUNIT_EXPECT_EQ(test, kweb_path_normalize(target, 200, path, 256, &t),
			0);
}

struct rules_case {
	const char *prefixes;
	const char *extensions;
	int err;
	unsigned int nr_prefix;
	unsigned int nr_ext;
};

static const struct rules_case rules_cases[] = {
	{ NULL, NULL, 0, 0, 0 },
	{ "", "", 0, 0, 0 },
	{ "/api/", ".php", 0, 1, 1 },
	{ "/a,/b/,/c", ".x,.yy", 0, 3, 2 },
	{ "/", NULL, -EINVAL },		/* would take every request */
	{ NULL, ".", -EINVAL },
	{ "api/", NULL, -EINVAL },
	{ NULL, "php", -EINVAL },
	{ "/a,,/b", NULL, -EINVAL },
	{ "/a,", NULL, -EINVAL },
	{ ",/a", NULL, -EINVAL },
	{ "/a?b", NULL, -EINVAL },
	{ "/1,/2,/3,/4,/5,/6,/7,/8,/9,/10,/11,/12,/13,/14,/15,/16", NULL,
	  0, 16, 0 },
	{ "/1,/2,/3,/4,/5,/6,/7,/8,/9,/10,/11,/12,/13,/14,/15,/16,/17", NULL,
	  -E2BIG },
};

static void rules_desc(const struct rules_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%s\" \"%s\"",
		 c->prefixes ? c->prefixes : "(null)",
		 c->extensions ? c->extensions : "(null)");
}

KUNIT_ARRAY_PARAM(rules, rules_cases, rules_desc);

static void rules_test(struct kunit *test)
{
	const struct rules_case *c = test->param_value;
	struct kweb_route_rules *r = kunit_kmalloc(test, sizeof(*r),
						   GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_EXPECT_EQ(test, kweb_route_rules_parse(r, c->prefixes,
						     c->extensions), c->err);
	if (c->err)
		return;
	KUNIT_EXPECT_EQ(test, r->nr_prefix, c->nr_prefix);
	KUNIT_EXPECT_EQ(test, r->nr_ext, c->nr_ext);
}

/* Entries are slices of the string; the last runs to its end. */
static void rules_slices_test(struct kunit *test)
{
	static const char pre[] = "/api/,/x";
	struct kweb_route_rules *r = kunit_kmalloc(test, sizeof(*r),
						   GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_EQ(test, kweb_route_rules_parse(r, pre, NULL), 0);
	KUNIT_EXPECT_PTR_EQ(test, r->prefix[0].p, &pre[0]);
	KUNIT_EXPECT_EQ(test, r->prefix[0].len, 5);
	KUNIT_EXPECT_PTR_EQ(test, r->prefix[1].p, &pre[6]);
	KUNIT_EXPECT_EQ(test, r->prefix[1].len, 2);
}

static struct kunit_case kweb_http_route_cases[] = {
	KUNIT_CASE_PARAM(route_test, route_gen_params),
	KUNIT_CASE(route_long_path_test),
	KUNIT_CASE(route_head_too_long_test),
	KUNIT_CASE_PARAM(rules_test, rules_gen_params),
	KUNIT_CASE(rules_slices_test),
	{}
};

static struct kunit_suite kweb_http_route_suite = {
	.name = "kweb_http_route",
	.test_cases = kweb_http_route_cases,
};

kunit_test_suite(kweb_http_route_suite);
