// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_path.c: target forms, query split,
 * percent-decoding (%2e%2e, %2f, %00, bad escapes), normalization and
 * the size of out.
 */
#include <kunit/test.h>

#include "http_path.h"

#define OUT_SIZE 256

struct path_case {
	const char *target;
	int err;
	const char *path;	/* normalized, when err is 0 */
	const char *query;	/* NULL: no '?' */
	const char *raw;	/* raw_path; NULL: same as target */
};

static const struct path_case path_cases[] = {
	/* origin-form and normalization */
	{ "/", 0, "/" },
	{ "/index.html", 0, "/index.html" },
	{ "/a/b/", 0, "/a/b/" },
	{ "//a///b", 0, "/a/b" },
	{ "/a//", 0, "/a/" },
	{ "/a/./b", 0, "/a/b" },
	{ "/./", 0, "/" },
	{ "/.", 0, "/" },
	{ "/a/../b", 0, "/b" },
	{ "/a/b/..", 0, "/a/" },
	{ "/a/b/.", 0, "/a/b/" },
	{ "/a/b/../", 0, "/a/" },
	{ "/a/b/../../", 0, "/" },
	{ "/a/..", 0, "/" },
	{ "/a/b/c/../../d", 0, "/a/d" },
	{ "/...", 0, "/..." },
	{ "/.../", 0, "/.../" },
	{ "/.a", 0, "/.a" },
	{ "/a.", 0, "/a." },
	{ "/..a", 0, "/..a" },
	{ "/a..", 0, "/a.." },
	{ "/.well-known/x", 0, "/.well-known/x" },
	{ "/..", -EINVAL },
	{ "/../", -EINVAL },
	{ "/../a", -EINVAL },
	{ "/a/../..", -EINVAL },
	{ "/a/../../b", -EINVAL },
	{ "/a/./../..", -EINVAL },
	{ "//..", -EINVAL },
	/* percent-decoding */
	{ "/a%20b", 0, "/a b" },
	{ "/%41%42c", 0, "/ABc" },
	{ "/caf%C3%a9", 0, "/caf\xc3\xa9" },
	{ "/caf\xc3\xa9", 0, "/caf\xc3\xa9" },
	{ "/%25", 0, "/%" },
	{ "/%252e%252e/", 0, "/%2e%2e/" },
	{ "/%3f", 0, "/?" },
	{ "/%23", 0, "/#" },
	{ "/a%3fb?c", 0, "/a?b", "c", "/a%3fb" },
	{ "/%2e", 0, "/" },
	{ "/a/%2E/b", 0, "/a/b" },
	{ "/a/.%2e", 0, "/" },
	{ "/a/%2e%2e/b", 0, "/b" },
	{ "/a/%2E%2e/", 0, "/" },
	{ "/%2e%2e", -EINVAL },
	{ "/%2e%2e/etc/passwd", -EINVAL },
	{ "/.%2e/", -EINVAL },
	{ "/%2e%2e%2e", 0, "/..." },
	{ "/a%2fb", 0, "/a/b" },
	{ "/a%2F%2Fb", 0, "/a/b" },
	{ "/%2f", 0, "/" },
	{ "/a%2f..%2fb", 0, "/b" },
	{ "/a%2f%2e%2e%2f%2e%2e%2fetc", -EINVAL },
	{ "/..%2f", -EINVAL },
	{ "/a%2f..", 0, "/" },
	{ "/%00", -EINVAL },
	{ "/a%00.html", -EINVAL },
	{ "/%0a", -EINVAL },
	{ "/%0D%0A", -EINVAL },
	{ "/%1f", -EINVAL },
	{ "/%7f", -EINVAL },
	{ "/%7e", 0, "/~" },
	{ "/%zz", -EINVAL },
	{ "/%g0", -EINVAL },
	{ "/%0g", -EINVAL },
	{ "/%", -EINVAL },
	{ "/%2", -EINVAL },
	{ "/a%", -EINVAL },
	{ "/%2?x", -EINVAL },
	{ "/%?x", -EINVAL },
	{ "/% 2", -EINVAL },
	{ "/%+2", -EINVAL },
	{ "/a\x01", -EINVAL },
	{ "/a\x7f", -EINVAL },
	/* query and fragment */
	{ "/a?b=c", 0, "/a", "b=c", "/a" },
	{ "/a?", 0, "/a", "", "/a" },
	{ "/?", 0, "/", "", "/" },
	{ "/a?b?c", 0, "/a", "b?c", "/a" },
	{ "/a?%zz", 0, "/a", "%zz", "/a" },
	{ "/a?../..", 0, "/a", "../..", "/a" },
	{ "/a/../b/?x=/..", 0, "/b/", "x=/..", "/a/../b/" },
	{ "/a#b", -EINVAL },
	{ "/a?b#c", -EINVAL },
	{ "/#", -EINVAL },
	/* absolute-form */
	{ "http://example.com/a/b", 0, "/a/b", NULL, "/a/b" },
	{ "HTTP://example.com/a", 0, "/a", NULL, "/a" },
	{ "hTtPs://example.com:443/a/../b", 0, "/b", NULL, "/a/../b" },
	{ "http://example.com", 0, "/", NULL, "" },
	{ "https://example.com?q", 0, "/", "q", "" },
	{ "http://[::1]:8080/x", 0, "/x", NULL, "/x" },
	{ "http://example.com/..", -EINVAL },
	{ "http://example.com/%2e%2e/x", -EINVAL },
	{ "http://", -EINVAL },
	{ "http:///a", -EINVAL },
	{ "http://?a", -EINVAL },
	{ "http://user@example.com/", -EINVAL },
	{ "http://example.com#x", -EINVAL },
	{ "http:/a", -EINVAL },
	{ "http:", -EINVAL },
	{ "http", -EINVAL },
	{ "ftp://example.com/", -EINVAL },
	{ "httpx://example.com/", -EINVAL },
	/* other forms */
	{ "*", -EINVAL },
	{ "example.com:80", -EINVAL },
	{ "a/b", -EINVAL },
	{ "", -EINVAL },
	{ "\\a", -EINVAL },
	{ "?x", -EINVAL },
};

static void path_desc(const struct path_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%s\"", c->target);
}

KUNIT_ARRAY_PARAM(path, path_cases, path_desc);

static void path_test(struct kunit *test)
{
	const struct path_case *c = test->param_value;
	size_t len = strlen(c->target);
	const char *raw = c->raw ? c->raw : c->target;
	char *in = kunit_kmalloc(test, len ? len : 1, GFP_KERNEL);
	char *out = kunit_kmalloc(test, OUT_SIZE, GFP_KERNEL);
	struct kweb_target t;
	int err;

	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, out);
	memcpy(in, c->target, len);
	err = kweb_path_normalize(in, len, out, OUT_SIZE, &t);
	KUNIT_ASSERT_EQ_MSG(test, err, c->err, "\"%s\"", c->target);
	if (err)
		return;
	KUNIT_EXPECT_STREQ(test, out, c->path);
	KUNIT_EXPECT_EQ(test, t.path_len, strlen(c->path));
	KUNIT_EXPECT_EQ(test, t.trailing_slash,
			c->path[strlen(c->path) - 1] == '/');
	KUNIT_EXPECT_EQ(test, t.has_query, !!c->query);
	if (c->query) {
		KUNIT_EXPECT_EQ(test, t.query.len, strlen(c->query));
		KUNIT_EXPECT_TRUE(test, t.query.p == in + len - t.query.len);
		KUNIT_EXPECT_TRUE(test, !memcmp(t.query.p, c->query,
						t.query.len));
	} else {
		KUNIT_EXPECT_EQ(test, t.query.len, 0);
	}
	KUNIT_EXPECT_EQ(test, t.raw_path.len, strlen(raw));
	KUNIT_EXPECT_TRUE(test, t.raw_path.p >= in &&
			  t.raw_path.p <= in + len);
	KUNIT_EXPECT_TRUE(test, !memcmp(t.raw_path.p, raw, t.raw_path.len));
}

/*
 * The query and a fragment are found a word at a time: a '?' or '#' at
 * every offset of the target's first words.
 */
static void path_split_test(struct kunit *test)
{
	char in[24], out[32];
	struct kweb_target t;
	size_t off;

	for (off = 1; off < sizeof(in); off++) {
		memset(in, 'a', sizeof(in));
		in[0] = '/';
		in[off] = '?';
		KUNIT_ASSERT_EQ(test, kweb_path_normalize(in, sizeof(in), out,
							  sizeof(out), &t), 0);
		KUNIT_EXPECT_TRUE(test, t.has_query);
		KUNIT_EXPECT_EQ(test, t.raw_path.len, off);
		KUNIT_EXPECT_EQ(test, t.path_len, off);
		KUNIT_EXPECT_EQ(test, t.query.len, sizeof(in) - off - 1);

		/* A fragment, before the query or inside it, is bogus. */
		in[off] = '#';
		KUNIT_EXPECT_EQ(test, kweb_path_normalize(in, sizeof(in), out,
							  sizeof(out), &t),
				-EINVAL);
		in[off] = '?';
		if (off + 1 < sizeof(in)) {
			in[sizeof(in) - 1] = '#';
			KUNIT_EXPECT_EQ(test,
					kweb_path_normalize(in, sizeof(in), out,
							    sizeof(out), &t),
					-EINVAL);
		}
	}
}

/* out holds the path and its NUL; held-back dot segments need no room. */
static void path_size_test(struct kunit *test)
{
	struct kweb_target t;
	char out[8];

	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/", 1, out, 0, &t),
			-ENAMETOOLONG);
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/", 1, out, 1, &t),
			-ENAMETOOLONG);
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/", 1, out, 2, &t), 0);
	KUNIT_EXPECT_STREQ(test, out, "/");

	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/abc", 4, out, 4, &t),
			-ENAMETOOLONG);
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/abc", 4, out, 5, &t), 0);
	KUNIT_EXPECT_STREQ(test, out, "/abc");
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/abc/", 5, out, 5, &t),
			-ENAMETOOLONG);
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/abc/", 5, out, 6, &t), 0);
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/%61bc", 6, out, 5, &t), 0);
	KUNIT_EXPECT_STREQ(test, out, "/abc");

	/* "." and ".." are never written, so they fit anywhere */
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/./././.", 8, out, 2, &t),
			0);
	KUNIT_EXPECT_STREQ(test, out, "/");
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/a/..", 5, out, 3, &t),
			-ENAMETOOLONG);
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/a/..", 5, out, 4, &t), 0);
	KUNIT_EXPECT_STREQ(test, out, "/");
	KUNIT_EXPECT_TRUE(test, t.trailing_slash);
	KUNIT_EXPECT_EQ(test, t.path_len, 1);

	/* exactly full */
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/abcdef", 7, out, 8, &t), 0);
	KUNIT_EXPECT_STREQ(test, out, "/abcdef");
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/abcdefg", 8, out, 8, &t),
			-ENAMETOOLONG);
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/a/bcdef/", 9, out, 8, &t),
			-ENAMETOOLONG);
}

/* len bounds the target: bytes after it are never looked at. */
/* absolute-form's authority, which virtual hosts use; none otherwise. */
static void path_authority_test(struct kunit *test)
{
	static const struct {
		const char *target, *authority;
	} cases[] = {
		{ "http://Example.COM/a", "Example.COM" },
		{ "https://example.com:8443/a?q", "example.com:8443" },
		{ "http://[::1]:8080", "[::1]:8080" },
		{ "http://a.b?x", "a.b" },
		{ "/a/b", "" },
		{ "/http://x/", "" },
	};
	struct kweb_target t;
	char out[OUT_SIZE];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		KUNIT_ASSERT_EQ(test, kweb_path_normalize(cases[i].target,
							  strlen(cases[i].target),
							  out, sizeof(out), &t),
				0);
		KUNIT_EXPECT_EQ_MSG(test, t.authority.len,
				    strlen(cases[i].authority), "%s",
				    cases[i].target);
		KUNIT_EXPECT_TRUE_MSG(test, !memcmp(t.authority.p ?: "",
						    cases[i].authority,
						    t.authority.len),
				      "%s", cases[i].target);
	}
}

static void path_len_test(struct kunit *test)
{
	struct kweb_target t;
	char out[32];

	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/a/b#x", 4, out,
						  sizeof(out), &t), 0);
	KUNIT_EXPECT_STREQ(test, out, "/a/b");
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/a%2f", 3, out,
						  sizeof(out), &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, kweb_path_normalize("/a?b", 2, out,
						  sizeof(out), &t), 0);
	KUNIT_EXPECT_FALSE(test, t.has_query);
}

static struct kunit_case kweb_http_path_cases[] = {
	KUNIT_CASE_PARAM(path_test, path_gen_params),
	KUNIT_CASE(path_split_test),
	KUNIT_CASE(path_size_test),
	KUNIT_CASE(path_len_test),
	KUNIT_CASE(path_authority_test),
	{}
};

static struct kunit_suite kweb_http_path_suite = {
	.name = "kweb_http_path",
	.test_cases = kweb_http_path_cases,
};

kunit_test_suite(kweb_http_path_suite);
