/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Content codings kweb serves from precompressed files (NAME.br and
 * NAME.gz beside NAME), and what a request's Accept-Encoding allows of
 * them. Pure logic.
 */
#ifndef KWEB_HTTP_ENCODING_H
#define KWEB_HTTP_ENCODING_H

#include "pure.h"

/* In order of preference: br compresses text best. */
enum kweb_encoding {
	KWEB_ENC_BR,
	KWEB_ENC_GZIP,
	KWEB_ENC_NR,
	KWEB_ENC_IDENTITY = KWEB_ENC_NR,
};

#define KWEB_ENC_BIT(e) ((u8)(1u << (e)))
#define KWEB_ENC_ALL ((u8)(KWEB_ENC_BIT(KWEB_ENC_NR) - 1))

/*
 * What the request's Accept-Encoding lines said so far, a bit per coding
 * (bit KWEB_ENC_NR for "*"). Lines add up, as one comma-separated list.
 */
struct kweb_accept_enc {
	u8 listed;		/* named with a weight above 0 */
	u8 refused;		/* named with q=0, which wins */
};

/* Add one field line's value (its elements) to a. */
void kweb_accept_encoding_add(struct kweb_accept_enc *a, const char *p,
			      size_t len);

/* The codings of enum kweb_encoding that a allows, as KWEB_ENC_BIT()s. */
u8 kweb_accept_encoding_mask(const struct kweb_accept_enc *a);

/*
 * Of the codings accepted (bit mask), those that may answer a request of
 * HTTP/1.0 (http10) or one that came through a proxy (a Via field).
 */
u8 kweb_encoding_sendable(u8 accepted, bool http10, bool via);

/*
 * The preferred coding among those both accepted and available (bit
 * masks), or KWEB_ENC_IDENTITY.
 */
enum kweb_encoding kweb_encoding_choose(u8 accepted, u8 available);

/* "br", "gzip": the Content-Encoding value. */
const char *kweb_encoding_name(enum kweb_encoding e);

/* ".br", ".gz": what the precompressed file's name adds to NAME. */
const char *kweb_encoding_suffix(enum kweb_encoding e);

#define KWEB_ENC_SUFFIX_MAX 3	/* strlen() of the longest suffix */

#endif /* KWEB_HTTP_ENCODING_H */
