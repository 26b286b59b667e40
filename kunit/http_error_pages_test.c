// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_error_pages.c: which error page texts are
 * accepted (never a path that could leave the docroot or that normalizing
 * would change), the statuses and slices they give, the limits, and which
 * page a status gets.
 */
#include <kunit/test.h>

#include "http_error_pages.h"

/* desc for a text that may hold CTLs and other bytes a log should not. */
static void ep_escape(const char *s, char *desc)
{
	size_t n = 0;

	if (!s) {
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "(null)");
		return;
	}
	desc[n++] = '"';
	for (; *s && n < KUNIT_PARAM_DESC_SIZE - 6; s++) {
		unsigned char c = *s;

		if (c < 0x20 || c >= 0x7f)
			n += snprintf(desc + n, 5, "\\x%02x", c);
		else
			desc[n++] = c;
	}
	desc[n++] = '"';
	desc[n] = '\0';
}

static struct kweb_error_pages *ep_pages(struct kunit *test)
{
	struct kweb_error_pages *p = kunit_kmalloc(test, sizeof(*p),
						   GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	return p;
}

struct parse_case {
	const char *text;
	int err;
	unsigned int nr;
};

static const struct parse_case parse_cases[] = {
	{ NULL, 0, 0 },
	{ "", 0, 0 },
	{ "404=/404.html", 0, 1 },
	{ "500,502,503=/50x.html", 0, 3 },
	{ "404=/errors/404.html;500,502,503=/50x.html", 0, 4 },
	{ "400=/a", 0, 1 },
	{ "599=/a", 0, 1 },
	/* OWS around entries, and one trailing ';'. */
	{ "404=/a;", 0, 1 },
	{ "404=/a; \t", 0, 1 },
	{ " \t404=/a", 0, 1 },
	{ "  404=/a ;\t500=/b\t", 0, 2 },
	{ "404=/a;500=/b;", 0, 2 },
	{ " ", -EINVAL },
	{ "\t \t", -EINVAL },
	{ ";", -EINVAL },
	{ " ; ", -EINVAL },
	{ ";404=/a", -EINVAL },
	{ "404=/a;;", -EINVAL },
	{ "404=/a;;500=/b", -EINVAL },
	{ "404=/a; ;", -EINVAL },
	{ "404=/a;\t;500=/b", -EINVAL },
	/* CODES */
	{ "404", -EINVAL },
	{ "/404.html", -EINVAL },
	{ "=/a", -EINVAL },
	{ "399=/a", -EINVAL },
	{ "600=/a", -EINVAL },
	{ "200=/a", -EINVAL },
	{ "304=/a", -EINVAL },
	{ "999=/a", -EINVAL },
	{ "000=/a", -EINVAL },
	{ "40=/a", -EINVAL },
	{ "4=/a", -EINVAL },
	{ "4044=/a", -EINVAL },
	{ "0404=/a", -EINVAL },
	{ "+404=/a", -EINVAL },
	{ "-404=/a", -EINVAL },
	{ "4O4=/a", -EINVAL },
	{ "40x=/a", -EINVAL },
	{ "abc=/a", -EINVAL },
	{ "404 =/a", -EINVAL },		/* no OWS inside an entry */
	{ "404= /a", -EINVAL },
	{ "404 , 500=/a", -EINVAL },
	{ "404, 500=/a", -EINVAL },
	{ "404 500=/a", -EINVAL },
	{ "404,=/a", -EINVAL },
	{ ",404=/a", -EINVAL },
	{ "404,,500=/a", -EINVAL },
	{ "404;500=/a", -EINVAL },	/* "404" is an entry of its own */
	{ "404,500,503=/a", 0, 3 },
	/* Each status once in the whole text. */
	{ "404,404=/a", -EINVAL },
	{ "404=/a;404=/b", -EINVAL },
	{ "404=/a;404=/a", -EINVAL },
	{ "404=/a;500,404=/b", -EINVAL },
	{ "500,502=/a;503,502=/b", -EINVAL },
	{ "404=/a;405=/a", 0, 2 },	/* one path for two entries is fine */
	/* PATH: '/' and at least one more byte. */
	{ "404=", -EINVAL },
	{ "404=a", -EINVAL },
	{ "404=404.html", -EINVAL },
	{ "404=/", -EINVAL },
	{ "404==/a", -EINVAL },
	{ "404=/a=b", 0, 1 },		/* CODES end at the first '=' */
	{ "404=/a,b", 0, 1 },
	{ "404=/a-._~!$&'()*+,=:@b", 0, 1 },
	{ "404=/x/y/z.html", 0, 1 },
	{ "404=/A/Z/0/9", 0, 1 },
	/* PATH: segments, as normalizing leaves them. */
	{ "404=//", -EINVAL },
	{ "404=//a", -EINVAL },
	{ "404=/a//b", -EINVAL },
	{ "404=/a/", -EINVAL },		/* a page is a file */
	{ "404=/a/b/", -EINVAL },
	{ "404=/.", -EINVAL },
	{ "404=/..", -EINVAL },
	{ "404=/./a", -EINVAL },
	{ "404=/a/./b", -EINVAL },
	{ "404=/a/.", -EINVAL },
	{ "404=/../a", -EINVAL },
	{ "404=/a/../b", -EINVAL },
	{ "404=/a/..", -EINVAL },
	{ "404=/a/../../etc/passwd", -EINVAL },
	{ "404=/.a", 0, 1 },
	{ "404=/a.", 0, 1 },
	{ "404=/..a", 0, 1 },
	{ "404=/a..", 0, 1 },
	{ "404=/...", 0, 1 },
	{ "404=/a/.../b", 0, 1 },
	{ "404=/.well-known/404.html", 0, 1 },
	/* PATH: bytes. */
	{ "404=/a%20b", -EINVAL },	/* no percent-encoding */
	{ "404=/%2e%2e/a", -EINVAL },
	{ "404=/a%", -EINVAL },
	{ "404=/a?b", -EINVAL },
	{ "404=/a?", -EINVAL },
	{ "404=/a#b", -EINVAL },
	{ "404=/a b", -EINVAL },
	{ "404=/a\tb", -EINVAL },
	{ "404=/a\r\n", -EINVAL },
	{ "404=/a\x01", -EINVAL },
	{ "404=/a\x7f", -EINVAL },
	{ "404=/\xc3\xa9", -EINVAL },
	{ "404=/a\x80", -EINVAL },
	{ "404=/a\xff", -EINVAL },
	{ "404=/a\"b", -EINVAL },
	{ "404=/a<b>", -EINVAL },
	{ "404=/a\\b", -EINVAL },
	{ "404=/a[b]", -EINVAL },
	{ "404=/a{b}", -EINVAL },
	{ "404=/a|b", -EINVAL },
	{ "404=/a^b", -EINVAL },
	{ "404=/a`b", -EINVAL },
	/* ';' always separates entries, even inside a path. */
	{ "404=/a;b", -EINVAL },
	{ "404=/a;b=/c", -EINVAL },
	{ "404=/a;500=/b;c", -EINVAL },
	{ "404=/a;500=/b", 0, 2 },
};

static void parse_desc(const struct parse_case *c, char *desc)
{
	ep_escape(c->text, desc);
}

KUNIT_ARRAY_PARAM(parse, parse_cases, parse_desc);

static void parse_test(struct kunit *test)
{
	const struct parse_case *c = test->param_value;
	struct kweb_error_pages *p = ep_pages(test);

	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, c->text), c->err);
	/* An error leaves no pages, not the ones before it. */
	KUNIT_EXPECT_EQ(test, p->nr, c->err ? 0 : c->nr);
}

/* The pages of lookup_cases; a status given again is never found. */
static const char lookup_text[] =
	" 404=/404.html;"
	"500,502,503=/50x.html ;"
	"410=/gone/index.html;\t"
	"599,400=/errors/odd.html;";

struct lookup_case {
	u16 status;
	const char *path;	/* NULL: no page */
};

static const struct lookup_case lookup_cases[] = {
	{ 404, "/404.html" },
	{ 500, "/50x.html" },
	{ 502, "/50x.html" },
	{ 503, "/50x.html" },
	{ 410, "/gone/index.html" },
	{ 599, "/errors/odd.html" },
	{ 400, "/errors/odd.html" },
	{ 401, NULL },
	{ 405, NULL },
	{ 501, NULL },
	{ 504, NULL },
	{ 200, NULL },
	{ 0, NULL },
	{ 40, NULL },
	{ 4040, NULL },
	{ 65535, NULL },
};

static void lookup_desc(const struct lookup_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u", c->status);
}

KUNIT_ARRAY_PARAM(lookup, lookup_cases, lookup_desc);

static void lookup_test(struct kunit *test)
{
	const struct lookup_case *c = test->param_value;
	struct kweb_error_pages *p = ep_pages(test);
	const struct kweb_str *got;

	KUNIT_ASSERT_EQ(test, kweb_error_pages_parse(p, lookup_text), 0);
	KUNIT_ASSERT_EQ(test, p->nr, 7);
	got = kweb_error_page(p, c->status);
	if (!c->path) {
		KUNIT_EXPECT_NULL(test, got);
		return;
	}
	KUNIT_ASSERT_NOT_NULL(test, got);
	KUNIT_EXPECT_EQ(test, got->len, strlen(c->path));
	KUNIT_EXPECT_TRUE(test, !memcmp(got->p, c->path, strlen(c->path)));
}

static void lookup_none_test(struct kunit *test)
{
	struct kweb_error_pages *p = ep_pages(test);

	KUNIT_EXPECT_NULL(test, kweb_error_page(NULL, 404));
	KUNIT_EXPECT_NULL(test, kweb_error_page(NULL, 0));
	KUNIT_ASSERT_EQ(test, kweb_error_pages_parse(p, NULL), 0);
	KUNIT_EXPECT_NULL(test, kweb_error_page(p, 404));
	KUNIT_ASSERT_EQ(test, kweb_error_pages_parse(p, ""), 0);
	KUNIT_EXPECT_NULL(test, kweb_error_page(p, 404));
	/* A failed parse forgets what an earlier one gave. */
	KUNIT_ASSERT_EQ(test, kweb_error_pages_parse(p, "404=/a"), 0);
	KUNIT_EXPECT_NOT_NULL(test, kweb_error_page(p, 404));
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, "404=/a;x"), -EINVAL);
	KUNIT_EXPECT_EQ(test, p->nr, 0);
	KUNIT_EXPECT_NULL(test, kweb_error_page(p, 404));
	/* Slot 0 of an empty table is not a page for status 0. */
	KUNIT_EXPECT_NULL(test, kweb_error_page(p, 0));
}

/* Pages are slices of the text, in text order, not copies. */
static void slices_test(struct kunit *test)
{
	static const char text[] = " 404=/a.html ;500,503=/b/c";
	struct kweb_error_pages *p = ep_pages(test);

	KUNIT_ASSERT_EQ(test, kweb_error_pages_parse(p, text), 0);
	KUNIT_ASSERT_EQ(test, p->nr, 3);
	KUNIT_EXPECT_EQ(test, p->p[0].status, 404);
	KUNIT_EXPECT_PTR_EQ(test, p->p[0].path.p, &text[5]);
	KUNIT_EXPECT_EQ(test, p->p[0].path.len, 7);
	KUNIT_EXPECT_EQ(test, p->p[1].status, 500);
	KUNIT_EXPECT_PTR_EQ(test, p->p[1].path.p, &text[22]);
	KUNIT_EXPECT_EQ(test, p->p[1].path.len, 4);
	KUNIT_EXPECT_EQ(test, p->p[2].status, 503);
	KUNIT_EXPECT_PTR_EQ(test, p->p[2].path.p, &text[22]);
	KUNIT_EXPECT_EQ(test, p->p[2].path.len, 4);
	KUNIT_EXPECT_PTR_EQ(test, kweb_error_page(p, 503), &p->p[2].path);
}

/* A NUL ends the text: what follows it is never read. */
static void nul_test(struct kunit *test)
{
	static const char text[] = "404=/a\0;;500=/b";
	struct kweb_error_pages *p = ep_pages(test);

	KUNIT_ASSERT_EQ(test, kweb_error_pages_parse(p, text), 0);
	KUNIT_ASSERT_EQ(test, p->nr, 1);
	KUNIT_EXPECT_EQ(test, p->p[0].path.len, 2);
	KUNIT_EXPECT_NULL(test, kweb_error_page(p, 500));
}

/*
 * n statuses from 400 up, per codes in each entry ("400,401=/e1;..."),
 * then tail; into a new string.
 */
static char *ep_many(struct kunit *test, unsigned int n, unsigned int per,
		     const char *tail)
{
	size_t size = 16 * n + strlen(tail) + 1, off = 0;
	char *s = kunit_kmalloc(test, size, GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, s);
	s[0] = '\0';
	for (i = 0; i < n; i++) {
		off += snprintf(s + off, size - off, "%s%u",
				!i ? "" : i % per ? "," : ";", 400 + i);
		if (i % per == per - 1 || i == n - 1)
			off += snprintf(s + off, size - off, "=/e%u", i / per);
	}
	snprintf(s + off, size - off, "%s", tail);
	return s;
}

static void limits_test(struct kunit *test)
{
	struct kweb_error_pages *p = ep_pages(test);
	char *v;

	/* 16 statuses, in one entry, in 16 or in a few. */
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, ep_many(test, 16, 16,
								 "")), 0);
	KUNIT_EXPECT_EQ(test, p->nr, KWEB_ERROR_PAGES_MAX);
	KUNIT_EXPECT_EQ(test, p->p[15].status, 415);
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, ep_many(test, 16, 1,
								 ";")), 0);
	KUNIT_EXPECT_EQ(test, p->nr, KWEB_ERROR_PAGES_MAX);
	KUNIT_EXPECT_EQ(test, p->p[15].path.len, 4);
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, ep_many(test, 16, 5,
								 "")), 0);
	KUNIT_EXPECT_EQ(test, p->nr, KWEB_ERROR_PAGES_MAX);

	/* 17 are too many, however they are grouped. */
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, ep_many(test, 17, 17,
								 "")), -E2BIG);
	KUNIT_EXPECT_EQ(test, p->nr, 0);
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, ep_many(test, 17, 1,
								 "")), -E2BIG);
	KUNIT_EXPECT_EQ(test, p->nr, 0);
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, ep_many(test, 15, 15,
								 ";500,501=/x")),
			-E2BIG);
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, ep_many(test, 200, 10,
								 "")), -E2BIG);

	/* A malformed entry anywhere is -EINVAL whatever the count. */
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, ep_many(test, 17, 1,
								 ";x")),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, ep_many(test, 20, 4,
								 ";404=/x")),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, ep_many(test, 20, 4,
								 ";;")),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, ep_many(test, 16, 4,
								 ";404=/x")),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, p->nr, 0);

	/* A path of exactly the maximum, then one more byte. */
	v = kunit_kmalloc(test, KWEB_ERROR_PAGE_PATH_MAX + 16, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, v);
	memcpy(v, "404=/", 5);
	memset(v + 5, 'x', KWEB_ERROR_PAGE_PATH_MAX - 1);
	memcpy(v + 4 + KWEB_ERROR_PAGE_PATH_MAX, " ;", 3);
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, v), 0);
	KUNIT_EXPECT_EQ(test, p->p[0].path.len, KWEB_ERROR_PAGE_PATH_MAX);
	memcpy(v + 4 + KWEB_ERROR_PAGE_PATH_MAX, "x", 2);
	KUNIT_EXPECT_EQ(test, kweb_error_pages_parse(p, v), -EINVAL);
	KUNIT_EXPECT_EQ(test, p->nr, 0);
}

static struct kunit_case kweb_http_error_pages_cases[] = {
	KUNIT_CASE_PARAM(parse_test, parse_gen_params),
	KUNIT_CASE_PARAM(lookup_test, lookup_gen_params),
	KUNIT_CASE(lookup_none_test),
	KUNIT_CASE(slices_test),
	KUNIT_CASE(nul_test),
	KUNIT_CASE(limits_test),
	{}
};

static struct kunit_suite kweb_http_error_pages_suite = {
	.name = "kweb_http_error_pages",
	.test_cases = kweb_http_error_pages_cases,
};

kunit_test_suite(kweb_http_error_pages_suite);
