/* SPDX-License-Identifier: GPL-2.0 */
/* Validators and conditional requests (RFC 9110 section 13). Pure logic. */
#ifndef KWEB_HTTP_COND_H
#define KWEB_HTTP_COND_H

#include "pure.h"

/* Longest ETag kweb makes, quotes included. */
#define KWEB_ETAG_MAX 40

/*
 * The entity tag of a file: nginx's format, "<mtime hex>-<size hex>".
 * Writes at most KWEB_ETAG_MAX + 1 bytes (NUL included) to buf and
 * returns the length.
 */
int kweb_etag_format(char *buf, s64 mtime, u64 size);

/*
 * If-None-Match: true when the field value (a list of entity tags or "*")
 * matches etag by weak comparison. etag is as kweb_etag_format() makes it,
 * quotes included. A list with anything but entity tags in it matches
 * nothing.
 */
bool kweb_if_none_match(const char *v, size_t len, const char *etag,
			size_t etag_len);

/*
 * If-Range: true when the range may be applied, i.e. the value is a strong
 * entity tag equal to etag, or an HTTP date equal to mtime. A weak tag on
 * either side, a list, or anything invalid is false: send the whole file.
 */
bool kweb_if_range(const char *v, size_t len, const char *etag,
		   size_t etag_len, s64 mtime);

/* If-Modified-Since: true when the value is a valid date >= mtime. */
bool kweb_not_modified_since(const char *v, size_t len, s64 mtime);

#endif /* KWEB_HTTP_COND_H */
