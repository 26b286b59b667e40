/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A user-space stand-in for the part of the kernel's <kunit/test.h> that
 * kweb's suites use, so tests/pure runs the very same suite files in kunit/
 * under AddressSanitizer and UBSan, without a kernel. Semantics follow the
 * kernel's: EXPECT records a failure and goes on, ASSERT ends the case,
 * memory from kunit_kmalloc() is freed when the case ends.
 */
#ifndef KWEB_KUNIT_SHIM_H
#define KWEB_KUNIT_SHIM_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KUNIT_PARAM_DESC_SIZE 128
#define GFP_KERNEL 0
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

struct kweb_shim_alloc;

struct kunit {
	const void *param_value;
	const char *case_name;
	bool failed;
	jmp_buf abort;
	struct kweb_shim_alloc *allocs;
};

struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
	const void *(*generate_params)(const void *prev, char *desc);
};

struct kunit_suite {
	const char name[256];
	struct kunit_case *test_cases;
};

#define KUNIT_CASE(fn) { .run_case = fn, .name = #fn }
#define KUNIT_CASE_PARAM(fn, gen) \
	{ .run_case = fn, .name = #fn, .generate_params = gen }

void kweb_shim_register(struct kunit_suite *suite);
void *kunit_kmalloc(struct kunit *test, size_t size, int gfp);
void *kunit_kzalloc(struct kunit *test, size_t size, int gfp);
void kweb_shim_fail(struct kunit *test, bool fatal, const char *file,
		    int line, const char *fmt, ...);
void kweb_shim_note(const char *fmt, ...);

#define kunit_test_suite(suite)						\
	__attribute__((constructor)) static void kweb_shim_reg_##suite(void) \
	{								\
		kweb_shim_register(&suite);				\
	}

#define KUNIT_ARRAY_PARAM(name, array, get_desc)			\
	static const void *name##_gen_params(const void *prev, char *desc) \
	{								\
		typeof(&(array)[0]) __next = prev ?			\
			(typeof(__next))prev + 1 : &(array)[0];		\
		void (*__get_desc)(typeof(__next), char *) = get_desc;	\
									\
		if ((size_t)(__next - (array)) >= ARRAY_SIZE(array))	\
			return NULL;					\
		if (__get_desc)						\
			__get_desc(__next, desc);			\
		return __next;						\
	}

#define NOMSG "%s", ""

/* Values are shown as long long, like KUnit's, and the left one in hex. */
#define KWEB_SHIM_BIN(test, fatal, a, op, b, ...)			\
	do {								\
		typeof(a) __a = (a);					\
		typeof(b) __b = (b);					\
		if (!(__a op __b)) {					\
			kweb_shim_note(__VA_ARGS__);			\
			kweb_shim_fail(test, fatal, __FILE__, __LINE__,	\
				       "%s %s %s: %lld (%#llx), %lld",	\
				       #a, #op, #b, (long long)__a,	\
				       (unsigned long long)__a,		\
				       (long long)__b);			\
		}							\
	} while (0)

#define KWEB_SHIM_COND(test, fatal, c, ...)				\
	do {								\
		if (!(c)) {						\
			kweb_shim_note(__VA_ARGS__);			\
			kweb_shim_fail(test, fatal, __FILE__, __LINE__,	\
				       "expected %s", #c);		\
		}							\
	} while (0)

#define KWEB_SHIM_STR(test, fatal, a, op, b)				\
	do {								\
		const char *__a = (a), *__b = (b);			\
		if (!(strcmp(__a, __b) op 0))				\
			kweb_shim_fail(test, fatal, __FILE__, __LINE__,	\
				       "%s %s %s: \"%s\" vs \"%s\"",	\
				       #a, #op, #b, __a, __b);		\
	} while (0)

#define KUNIT_EXPECT_EQ(t, a, b)	KWEB_SHIM_BIN(t, 0, a, ==, b, NOMSG)
#define KUNIT_EXPECT_NE(t, a, b)	KWEB_SHIM_BIN(t, 0, a, !=, b, NOMSG)
#define KUNIT_EXPECT_LE(t, a, b)	KWEB_SHIM_BIN(t, 0, a, <=, b, NOMSG)
#define KUNIT_EXPECT_LT(t, a, b)	KWEB_SHIM_BIN(t, 0, a, <, b, NOMSG)
#define KUNIT_EXPECT_GE(t, a, b)	KWEB_SHIM_BIN(t, 0, a, >=, b, NOMSG)
#define KUNIT_EXPECT_GT(t, a, b)	KWEB_SHIM_BIN(t, 0, a, >, b, NOMSG)
#define KUNIT_EXPECT_PTR_EQ(t, a, b)	KWEB_SHIM_COND(t, 0, a == b, NOMSG)
#define KUNIT_EXPECT_TRUE(t, c)		KWEB_SHIM_COND(t, 0, c, NOMSG)
#define KUNIT_EXPECT_FALSE(t, c)	KWEB_SHIM_COND(t, 0, !(c), NOMSG)
#define KUNIT_EXPECT_NULL(t, p)		KWEB_SHIM_COND(t, 0, !(p), NOMSG)
#define KUNIT_EXPECT_NOT_NULL(t, p)	KWEB_SHIM_COND(t, 0, p, NOMSG)
#define KUNIT_EXPECT_STREQ(t, a, b)	KWEB_SHIM_STR(t, 0, a, ==, b)
#define KUNIT_EXPECT_STRNEQ(t, a, b)	KWEB_SHIM_STR(t, 0, a, !=, b)
#define KUNIT_ASSERT_EQ(t, a, b)	KWEB_SHIM_BIN(t, 1, a, ==, b, NOMSG)
#define KUNIT_ASSERT_NE(t, a, b)	KWEB_SHIM_BIN(t, 1, a, !=, b, NOMSG)
#define KUNIT_ASSERT_LE(t, a, b)	KWEB_SHIM_BIN(t, 1, a, <=, b, NOMSG)
#define KUNIT_ASSERT_LT(t, a, b)	KWEB_SHIM_BIN(t, 1, a, <, b, NOMSG)
#define KUNIT_ASSERT_GE(t, a, b)	KWEB_SHIM_BIN(t, 1, a, >=, b, NOMSG)
#define KUNIT_ASSERT_GT(t, a, b)	KWEB_SHIM_BIN(t, 1, a, >, b, NOMSG)
#define KUNIT_ASSERT_TRUE(t, c)		KWEB_SHIM_COND(t, 1, c, NOMSG)
#define KUNIT_ASSERT_NOT_NULL(t, p)	KWEB_SHIM_COND(t, 1, p, NOMSG)

#define KUNIT_EXPECT_EQ_MSG(t, a, b, ...)	\
	KWEB_SHIM_BIN(t, 0, a, ==, b, __VA_ARGS__)
#define KUNIT_EXPECT_NE_MSG(t, a, b, ...)	\
	KWEB_SHIM_BIN(t, 0, a, !=, b, __VA_ARGS__)
#define KUNIT_EXPECT_TRUE_MSG(t, c, ...)	\
	KWEB_SHIM_COND(t, 0, c, __VA_ARGS__)
#define KUNIT_EXPECT_FALSE_MSG(t, c, ...)	\
	KWEB_SHIM_COND(t, 0, !(c), __VA_ARGS__)
#define KUNIT_ASSERT_EQ_MSG(t, a, b, ...)	\
	KWEB_SHIM_BIN(t, 1, a, ==, b, __VA_ARGS__)
#define KUNIT_FAIL(t, ...) \
	kweb_shim_fail(t, 0, __FILE__, __LINE__, __VA_ARGS__)

#endif /* KWEB_KUNIT_SHIM_H */
