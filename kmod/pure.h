/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types for kweb's pure-logic files (parsing, paths, ranges, dates, MIME,
 * conditionals, response headers). Those files use nothing else from the
 * kernel, so the same source builds into the module, the KUnit suites and
 * user-space fuzzers.
 */
#ifndef KWEB_PURE_H
#define KWEB_PURE_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
#endif

/* A slice of the request buffer; not NUL-terminated. */
struct kweb_str {
	const char *p;
	u32 len;
};

#endif /* KWEB_PURE_H */
