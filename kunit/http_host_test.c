// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_host.c: what a valid authority is (RFC 3986
 * 3.2.2), and a Host to a virtual host's directory; case, port and
 * trailing dot, IPv6 literals, valid hosts that name no directory, and
 * every value that could step out of the docroot or is not a host.
 */
#include <kunit/test.h>

#include "http_host.h"

struct host_case {
	const char *v;
	const char *dir;	/* NULL: -EINVAL; "": the default's */
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
	{ "999.0.2.1", "999.0.2.1" },	/* a reg-name, then */
	{ "[::1]", "[::1]" },
	{ "[2001:DB8::A]:443", "[2001:db8::a]" },
	{ "[::ffff:192.0.2.1]", "[::ffff:192.0.2.1]" },
	{ "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7:8]" },
	{ "[1:2:3:4:5:6:1.2.3.4]", "[1:2:3:4:5:6:1.2.3.4]" },
	{ "[1::]", "[1::]" },
	{ "[::]", "[::]" },
	{ "", "" },
	/*
	 * Valid (RFC 3986 3.2.2), but no directory name: the default's, as
	 * nginx's default server takes a name no server_name has. Never
	 * decoded: "%2e%2e" is not "..", "%41" not "a".
	 */
	{ ".", "" },
	{ ".example.com", "" },
	{ "a~b.test", "" },
	{ "a!b.test", "" },
	{ "a%41.test", "" },
	{ "a%2fb", "" },
	{ "%2e%2e", "" },
	{ "a*b", "" },
	{ "a$&'()*+,;=b", "" },
	{ "[v1.x]", "" },
	{ "[V1F.a:b!]:80", "" },
	/* Invalid: 400. */
	{ "..", NULL },
	{ "..:80", NULL },
	{ "a..b", NULL },
	{ "example.com..", NULL },
	{ "a/b", NULL },
	{ "a\\b", NULL },
	{ "a b", NULL },
	{ "user@host", NULL },
	{ "a@b.test", NULL },
	{ "a%zz", NULL },
	{ "a%4", NULL },
	{ "a%", NULL },
	{ ":80", NULL },
	{ ":", NULL },
	{ "host:80x", NULL },
	{ "host:-1", NULL },
	{ "host:80:80", NULL },
	{ "host:9000:80", NULL },
	{ "a[b]", NULL },
	{ "a]", NULL },
	{ "[]", NULL },
	{ "[::1", NULL },
	{ "::1]", NULL },
	{ "[::1]x", NULL },
	{ "[::1]]", NULL },
	{ "[::g]", NULL },
	{ "[../]", NULL },
	{ "[2..1]", NULL },
	{ "[ab..cd::1]", NULL },
	{ "[1.2.3.4]", NULL },
	{ "[1:2:3:4:5:6:7:8:9]", NULL },
	{ "[1:2:3:4:5:6:7]", NULL },
	{ "[1::2::3]", NULL },
	{ "[:::]", NULL },
	{ "[:1::]", NULL },
	{ "[1:]", NULL },
	{ "[12345::]", NULL },
	{ "[::1.2.3]", NULL },
	{ "[::1.2.3.256]", NULL },
	{ "[::01.2.3.4]", NULL },
	{ "[::1.2.3.4:5]", NULL },
	{ "[1:2:3:4:5:6:7:1.2.3.4]", NULL },
	{ "[fe80::1%25eth0]", NULL },
	{ "[v.x]", NULL },
	{ "[v1.]", NULL },
	{ "[v1x]", NULL },
	{ "[v1.a..b]", NULL },
	{ "[v1.a/b]", NULL },
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

	/* One validator: a host gets 400 exactly when it is not valid. */
	if (*c->v)
		KUNIT_EXPECT_EQ_MSG(test, kweb_authority_ok(c->v, strlen(c->v)),
				    !!c->dir, "Host: %s", c->v);
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
	KUNIT_EXPECT_EQ(test, kweb_host_dir("a\x01", 2, out), -EINVAL);
	KUNIT_EXPECT_FALSE(test, kweb_authority_ok("a\0b", 3));
	KUNIT_EXPECT_FALSE(test, kweb_authority_ok("", 0));
	KUNIT_EXPECT_TRUE(test, kweb_authority_ok("a:", 2));
	KUNIT_EXPECT_EQ(test, kweb_host_dir("ab/", 2, out), 2);
	KUNIT_EXPECT_STREQ(test, out, "ab");
	memset(v, 'a', KWEB_HOST_MAX);
	KUNIT_EXPECT_EQ(test, kweb_host_dir(v, KWEB_HOST_MAX, out),
			KWEB_HOST_MAX);
	v[KWEB_HOST_MAX] = '.';	/* the trailing dot does not count */
	KUNIT_EXPECT_EQ(test, kweb_host_dir(v, KWEB_HOST_MAX + 1, out),
			KWEB_HOST_MAX);
	/* Valid, but longer than a DNS name: the default's. */
	v[KWEB_HOST_MAX] = 'a';
	KUNIT_EXPECT_EQ(test, kweb_host_dir(v, KWEB_HOST_MAX + 1, out), 0);
	KUNIT_EXPECT_STREQ(test, out, "");
}

/* A one-byte host is valid iff it is unreserved or a sub-delim. */
static void host_one_byte_test(struct kunit *test)
{
	static const char other[] = "-._~!$&'()*+,;=";
	unsigned int c;

	for (c = 0; c < 256; c++) {
		char b = (char)c;
		bool want = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
			    (c >= 'A' && c <= 'Z') ||
			    (c && memchr(other, c, sizeof(other) - 1));

		KUNIT_EXPECT_EQ_MSG(test, kweb_authority_ok(&b, 1), want,
				    "byte 0x%02x", c);
	}
}

static struct kunit_case kweb_http_host_cases[] = {
	KUNIT_CASE_PARAM(host_test, host_gen_params),
	KUNIT_CASE(host_bytes_test),
	KUNIT_CASE(host_one_byte_test),
	{}
};

static struct kunit_suite kweb_http_host_suite = {
	.name = "kweb_http_host",
	.test_cases = kweb_http_host_cases,
};

kunit_test_suite(kweb_http_host_suite);
