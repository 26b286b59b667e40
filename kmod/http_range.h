/* SPDX-License-Identifier: GPL-2.0 */
/* Range request field (RFC 9110 section 14). Pure logic. */
#ifndef KWEB_HTTP_RANGE_H
#define KWEB_HTTP_RANGE_H

#include "pure.h"

enum kweb_range_result {
	KWEB_RANGE_NONE,		/* ignore the field: answer 200 whole */
	KWEB_RANGE_OK,			/* one satisfiable range: answer 206 */
	KWEB_RANGE_UNSATISFIABLE,	/* answer 416 */
};

/*
 * Evaluate a Range field value against a representation of size bytes.
 * Only "bytes=" with a single range (a-b, a-, -n) gives 206; the result is
 * [*first, *last], inclusive, last clamped to size - 1. Several ranges, an
 * unknown unit or bad syntax give KWEB_RANGE_NONE, and so does a range
 * from the start of an empty file (bytes=0-, -N): it is sent whole.
 */
enum kweb_range_result kweb_range_parse(const char *v, size_t len, u64 size,
					u64 *first, u64 *last);

#endif /* KWEB_HTTP_RANGE_H */
