// SPDX-License-Identifier: GPL-2.0
/*
 * User-space runner for kweb's pure logic: runs the KUnit suites of
 * kunit/ through the stand-in kunit/test.h next to this file, plus
 * a few checks that only make sense in user space (comparison with libc's
 * calendar, random inputs under ASan/UBSan). Ends with "N passed, N failed".
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <time.h>

#include <kunit/test.h>

#include "http_cond.h"
#include "http_date.h"
#include "http_parse.h"
#include "http_path.h"
#include "http_range.h"
#include "mime.h"

#define MAX_SUITES 32

static struct kunit_suite *suites[MAX_SUITES];
static int nsuites;
static int verbose;

struct kweb_shim_alloc {
	struct kweb_shim_alloc *next;
	max_align_t data[];
};

void kweb_shim_register(struct kunit_suite *suite)
{
	if (nsuites == MAX_SUITES) {
		fprintf(stderr, "too many suites\n");
		exit(2);
	}
	suites[nsuites++] = suite;
}

void *kunit_kmalloc(struct kunit *test, size_t size, int gfp)
{
	struct kweb_shim_alloc *a;

	(void)gfp;
	/* exactly size bytes after the header: ASan sees any overrun */
	a = malloc(sizeof(*a) + size);
	if (!a)
		return NULL;
	a->next = test->allocs;
	test->allocs = a;
	return a->data;
}

void *kunit_kzalloc(struct kunit *test, size_t size, int gfp)
{
	void *p = kunit_kmalloc(test, size, gfp);

	if (p)
		memset(p, 0, size);
	return p;
}

static char note[512];

void kweb_shim_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
}

void kweb_shim_fail(struct kunit *test, bool fatal, const char *file,
		    int line, const char *fmt, ...)
{
	va_list ap;

	test->failed = true;
	printf("    # %s: %s:%d: ", test->case_name, file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (note[0])
		printf(" (%s)", note);
	putchar('\n');
	note[0] = '\0';
	if (fatal)
		longjmp(test->abort, 1);
}

static int passed, failed;

static void run_one(struct kunit_suite *s, struct kunit_case *c,
		    const void *param, const char *desc)
{
	struct kunit test = { .param_value = param, .case_name = c->name };
	struct kweb_shim_alloc *a;

	if (!setjmp(test.abort))
		c->run_case(&test);
	while ((a = test.allocs)) {
		test.allocs = a->next;
		free(a);
	}
	if (test.failed) {
		failed++;
		printf("not ok %s.%s%s%s%s\n", s->name, c->name,
		       desc ? " [" : "", desc ? desc : "", desc ? "]" : "");
	} else {
		passed++;
		if (verbose)
			printf("ok %s.%s%s%s%s\n", s->name, c->name,
			       desc ? " [" : "", desc ? desc : "",
			       desc ? "]" : "");
	}
}

static void run_suite(struct kunit_suite *s)
{
	struct kunit_case *c;
	int before = passed + failed, bad = failed;

	for (c = s->test_cases; c->run_case; c++) {
		char desc[KUNIT_PARAM_DESC_SIZE];
		const void *p;

		if (!c->generate_params) {
			run_one(s, c, NULL, NULL);
			continue;
		}
		desc[0] = '\0';
		for (p = c->generate_params(NULL, desc); p;
		     p = c->generate_params(p, desc)) {
			run_one(s, c, p, desc);
			desc[0] = '\0';
		}
	}
	printf("# %s: %d tests, %d failed\n", s->name,
	       passed + failed - before, failed - bad);
}

/* Checks only user space can do. */

static u64 rnd_state = 0x9e3779b97f4a7c15ULL;

static u64 rnd(void)
{
	/* xorshift64*: reproducible without libc's state */
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 2685821657736338717ULL;
}

/* Our calendar against glibc's, over the whole four-digit range. */
static void date_vs_libc_test(struct kunit *test)
{
	char out[KWEB_HTTP_DATE_LEN + 1], want[64];
	int i;

	for (i = 0; i < 200000; i++) {
		s64 t = (s64)(rnd() % 253402300800ULL), back;
		time_t tt;
		struct tm tm;

		/* first every eight years or so, then anywhere */
		if (i < 1000)
			t = (s64)i * 86400 * 2900 + i * 3607;
		tt = (time_t)t;
		kweb_http_date_format(t, out);
		gmtime_r(&tt, &tm);
		strftime(want, sizeof(want), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		KUNIT_ASSERT_EQ_MSG(test, strcmp(out, want), 0,
				    "%lld: %s vs %s", (long long)t, out, want);
		KUNIT_ASSERT_EQ(test, kweb_http_date_parse(out, strlen(out),
							   &back), 0);
		KUNIT_ASSERT_EQ(test, back, t);

		/* and the asctime form of the same instant */
		strftime(want, sizeof(want), "%a %b %e %H:%M:%S %Y", &tm);
		KUNIT_ASSERT_EQ_MSG(test,
				    kweb_http_date_parse(want, strlen(want),
							 &back),
				    0, "%s", want);
		KUNIT_ASSERT_EQ(test, back, t);
	}
}

/* Random bytes from a small alphabet that reaches the interesting states. */
static size_t fill_random(char *buf, size_t max, const char *alpha)
{
	size_t n = rnd() % max, i, al = strlen(alpha);

	for (i = 0; i < n; i++)
		buf[i] = rnd() % 8 ? alpha[rnd() % al] : (char)rnd();
	return n;
}

static void fuzz_test(struct kunit *test)
{
	static const char alpha[] =
		"GET /HTP1.0 :;,-=\"W*%2e%2fabcdefx?#Range bytes Host\r\n"
		"Transfer-Encoding chunked\t";
	static const char seed[] =
		"GET /a/../b?x HTTP/1.1\r\nHost: a\r\n"
		"Range: bytes=1-2\r\nIf-None-Match: \"a\", W/\"b\"\r\n\r\n";
	char out[64];
	int i;

	for (i = 0; i < 300000; i++) {
		size_t n, max = 128, max_head, outsz;
		char *buf = malloc(max);
		struct kweb_request req;
		struct kweb_target t;
		u64 first = 0, last = 0;
		enum kweb_range_result rr;
		enum kweb_parse_result pr;
		s64 when;

		if (!buf)
			abort();
		if (i % 2) {
			n = fill_random(buf, max, alpha);
		} else {
			/* mutate a valid head */
			n = sizeof(seed) - 1 < max ? sizeof(seed) - 1 : max;
			memcpy(buf, seed, n);
			buf[rnd() % n] = (char)rnd();
			buf[rnd() % n] = alpha[rnd() % (sizeof(alpha) - 1)];
			n = rnd() % (n + 1);
		}
		/* realloc to the exact length so ASan sees overreads */
		buf = realloc(buf, n ? n : 1);
		if (!buf)
			abort();

		max_head = rnd() % 2 ? 8192 : rnd() % 64;
		pr = kweb_http_parse(buf, n, max_head, &req);
		if (pr == KWEB_PARSE_OK) {
			KUNIT_EXPECT_LE(test, req.head_len, n);
		} else if (pr == KWEB_PARSE_ERROR) {
			KUNIT_EXPECT_TRUE(test, req.status == 400 ||
					  req.status == 414 ||
					  req.status == 431 ||
					  req.status == 501 ||
					  req.status == 505);
		}
		outsz = rnd() % sizeof(out);
		if (!kweb_path_normalize(buf, n, out, outsz, &t)) {
			KUNIT_EXPECT_EQ(test, out[0], '/');
			KUNIT_EXPECT_EQ(test, strlen(out), t.path_len);
			KUNIT_EXPECT_TRUE(test, !strstr(out, "//") &&
					  !strstr(out, "/./") &&
					  !strstr(out, "/../"));
		}
		rr = kweb_range_parse(buf, n, rnd() % 100, &first, &last);
		if (rr == KWEB_RANGE_OK)
			KUNIT_EXPECT_LE(test, first, last);
		kweb_if_none_match(buf, n, "\"a\"", 3);
		kweb_if_range(buf, n, "\"a\"", 3, 0);
		kweb_not_modified_since(buf, n, 0);
		kweb_http_date_parse(buf, n, &when);
		KUNIT_EXPECT_NOT_NULL(test, kweb_mime_type(buf, n));
		free(buf);
	}
}

static struct kunit_case plain_cases[] = {
	KUNIT_CASE(date_vs_libc_test),
	KUNIT_CASE(fuzz_test),
	{}
};

static struct kunit_suite kweb_user_space_suite = {
	.name = "kweb_user_space",
	.test_cases = plain_cases,
};

int main(int argc, char **argv)
{
	int i;

	verbose = argc > 1 && !strcmp(argv[1], "-v");
	for (i = 0; i < nsuites; i++)
		run_suite(suites[i]);
	run_suite(&kweb_user_space_suite);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
