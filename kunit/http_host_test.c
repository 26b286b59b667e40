// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_host.c: a Host to a virtual host's directory;
 * case, port and trailing dot, IPv6 literals, and every value that could
 * step out of the docroot or is not a host name.
 */
#include <kunit/test.h>

#include "http_host.h"

struct host_case {
	const char *v;
	const char *dir;	/* NULL: -EINVAL */
};

static const struct host_case host_cases[] = {
	{ "example.com", "example.com" },
	{ "Example.COM", "example.com" },
	{ "example.com:80", "example.com" },
	{ "example.com:", "example.com" },
	{ "example.com.", "example.com" },
	{ "EXAMPLE.com.:8080", "example.com" },
	{ "www.example-1.co_uk", "www.example-1.co_uk" },
	{ "localhost", "localhost" },
	{ "192.0.2.1:80", "192.0.2.1" },
	{ "[::1]", "[::1]" },
	{ "[2001:DB8::A]:443", "[2001:db8::a]" },
	{ "[::ffff:192.0.2.1]", "[::ffff:192.0.2.1]" },
	{ "", "" },
	/* Out of the docroot, or not a name. */
	{ ".", NULL },
	{ "..", NULL },
	{ "..:80", NULL },
	{ ".example.com", NULL },
	{ "a..b", NULL },
	{ "example.com..", NULL },
	{ "a/b", NULL },
	{ "a\\b", NULL },
	{ "a%2fb", NULL },
	{ "a b", NULL },
	{ "a!b", NULL },
	{ "user@host", NULL },
	{ ":80", NULL },
	{ "host:80x", NULL },
	{ "host:-1", NULL },
	{ "host:80:80", NULL },
	{ "[]", NULL },
	{ "[::1", NULL },
	{ "[::1]x", NULL },
	{ "[::g]", NULL },
	{ "[../]", NULL },
	{ "[v1.x]", NULL },
	{ "[2..1]", NULL },
	{ "[1.2.3.4]", NULL },
};

static void host_case_desc(const struct host_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%s\"", c->v);
}

KUNIT_ARRAY_PARAM(host, host_cases, host_case_desc);

static void host_test(struct kunit *test)
{
	const struct host_case *c = test->param_value;
	char out[KWEB_HOST_MAX + 1];
	int n = kweb_host_dir(c->v, strlen(c->v), out);

	if (!c->dir) {
		KUNIT_EXPECT_EQ_MSG(test, n, -EINVAL, "Host: %s", c->v);
		return;
	}
	KUNIT_ASSERT_EQ_MSG(test, n, (int)strlen(c->dir), "Host: %s", c->v);
	KUNIT_EXPECT_STREQ(test, out, c->dir);
}

/* NUL, controls, the longest name and one more; len bounds the value. */
static void host_bytes_test(struct kunit *test)
{
	char out[KWEB_HOST_MAX + 1];
	char *v = kunit_kzalloc(test, KWEB_HOST_MAX + 2, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, v);
	KUNIT_EXPECT_EQ(test, kweb_host_dir("a\0b", 3, out), -EINVAL);
	KUNIT_EXPECT_EQ(test, kweb_host_dir("a\tb", 3, out), -EINVAL);
	KUNIT_EXPECT_EQ(test, kweb_host_dir("a\x7f", 2, out), -EINVAL);
	KUNIT_EXPECT_EQ(test, kweb_host_dir("a\xc3\xa9", 3, out), -EINVAL);
	KUNIT_EXPECT_EQ(test, kweb_host_dir("ab/", 2, out), 2);
	KUNIT_EXPECT_STREQ(test, out, "ab");
	memset(v, 'a', KWEB_HOST_MAX);
	KUNIT_EXPECT_EQ(test, kweb_host_dir(v, KWEB_HOST_MAX, out),
			KWEB_HOST_MAX);
	v[KWEB_HOST_MAX] = '.';	/* the trailing dot does not count */
	KUNIT_EXPECT_EQ(test, kweb_host_dir(v, KWEB_HOST_MAX + 1, out),
			KWEB_HOST_MAX);
	v[KWEB_HOST_MAX] = 'a';
	KUNIT_EXPECT_EQ(test, kweb_host_dir(v, KWEB_HOST_MAX + 1, out),
			-EINVAL);
}

static struct kunit_case kweb_http_host_cases[] = {
	KUNIT_CASE_PARAM(host_test, host_gen_params),
	KUNIT_CASE(host_bytes_test),
	{}
};

static struct kunit_suite kweb_http_host_suite = {
	.name = "kweb_http_host",
	.test_cases = kweb_http_host_cases,
};

kunit_test_suite(kweb_http_host_suite);
