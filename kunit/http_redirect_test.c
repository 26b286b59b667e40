// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_redirect.c: the Location of a redirect to
 * HTTPS for each form of request-target, the port, ACME's challenges
 * left alone, and a buffer too small.
 */
#include <kunit/test.h>

#include "http_redirect.h"

struct loc_case {
	const char *host;
	u16 port;
	const char *target;
	const char *want;	/* NULL: -EINVAL */
};

static const struct loc_case loc_cases[] = {
	{ "example.com", 443, "/", "https://example.com/" },
	{ "example.com", 443, "/a/b.html?x=1&y=%20",
	  "https://example.com/a/b.html?x=1&y=%20" },
	{ "example.com", 8443, "/a", "https://example.com:8443/a" },
	{ "[::1]", 443, "/x", "https://[::1]/x" },
	{ "192.0.2.1", 4443, "/", "https://192.0.2.1:4443/" },
	/* absolute-form: the path and query after the authority only. */
	{ "h.test", 443, "http://h.test/p?q", "https://h.test/p?q" },
	{ "h.test", 443, "http://h.test", "https://h.test/" },
	{ "h.test", 443, "http://h.test?q", "https://h.test/?q" },
	{ "h.test", 443, "http://h.test:80/p", "https://h.test/p" },
	{ "h.test", 443, "HTTP://[::1]:80/p", "https://h.test/p" },
	/* Not redirected: ACME's http-01 challenges, other forms. */
	{ "h.test", 443, "/.well-known/acme-challenge/tok", NULL },
	{ "h.test", 443, "http://h.test/.well-known/acme-challenge/t", NULL },
	{ "h.test", 443, "/.well-known/acme-challenge", "https://h.test/.well-known/acme-challenge" },
	{ "h.test", 443, "/.well-known/other", "https://h.test/.well-known/other" },
	{ "h.test", 443, "*", NULL },
	{ "h.test", 443, "h.test:443", NULL },
	{ "h.test", 443, "://x/", NULL },
	{ "h.test", 443, "", NULL },
};

static void kweb_https_location_test(struct kunit *test)
{
	char out[128];
	size_t i;
	int n;

	for (i = 0; i < ARRAY_SIZE(loc_cases); i++) {
		const struct loc_case *c = &loc_cases[i];

		n = kweb_https_location(out, sizeof(out), c->host, c->port,
					c->target, strlen(c->target));
		if (!c->want) {
			KUNIT_EXPECT_EQ_MSG(test, n, -EINVAL, "%s", c->target);
			continue;
		}
		KUNIT_EXPECT_EQ_MSG(test, n, (int)strlen(c->want), "%s",
				    c->target);
		if (n > 0)
			KUNIT_EXPECT_STREQ(test, out, c->want);
	}
}

static void kweb_https_location_small_test(struct kunit *test)
{
	const char *want = "https://example.com/abc";
	char out[32];
	size_t size;
	int n;

	for (size = 1; size <= strlen(want); size++) {
		n = kweb_https_location(out, size, "example.com", 443, "/abc",
					4);
		KUNIT_EXPECT_EQ(test, n, -ENOSPC);
	}
	n = kweb_https_location(out, size, "example.com", 443, "/abc", 4);
	KUNIT_EXPECT_EQ(test, n, (int)strlen(want));
	KUNIT_EXPECT_STREQ(test, out, want);
}

static struct kunit_case kweb_http_redirect_cases[] = {
	KUNIT_CASE(kweb_https_location_test),
	KUNIT_CASE(kweb_https_location_small_test),
	{}
};

static struct kunit_suite kweb_http_redirect_suite = {
	.name = "kweb_http_redirect",
	.test_cases = kweb_http_redirect_cases,
};

kunit_test_suite(kweb_http_redirect_suite);
