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

/*
 * If-Match (RFC 9110 13.1.1): true when the field value is "*" or a list
 * of entity tags one of which matches etag by strong comparison. A weak
 * tag never matches; a list with anything but entity tags in it, or an
 * empty one, matches nothing (then 412: never a false success).
 */
bool kweb_if_match(const char *v, size_t len, const char *etag,
		   size_t etag_len);

/*
 * If-Unmodified-Since (RFC 9110 13.1.4): false only when the value is a
 * valid date before mtime. Anything but one date is ignored (true).
 */
bool kweb_if_unmodified_since(const char *v, size_t len, s64 mtime);

/* A request's conditional fields; .p == NULL for one not sent. */
struct kweb_preconds {
	struct kweb_str if_match;
	struct kweb_str if_unmodified_since;
	struct kweb_str if_none_match;
	struct kweb_str if_modified_since;
};

/*
 * RFC 9110 13.2.2 steps 1 to 4 for a GET or HEAD of a file that exists,
 * with this etag (as kweb_etag_format() makes it) and mtime: 412 if
 * If-Match fails or, without If-Match, If-Unmodified-Since does; else 304
 * if If-None-Match matches or, without If-None-Match (even an empty one),
 * If-Modified-Since says not modified; else 0: on to If-Range and Range
 * (step 5), which kweb_if_range() is for.
 */
u16 kweb_preconditions(const struct kweb_preconds *c, const char *etag,
		       size_t etag_len, s64 mtime);

#endif /* KWEB_HTTP_COND_H */
