/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HTTP/1.x request head parser (RFC 9110, RFC 9112). Pure logic: it reads a
 * buffer and reports what the request says; deciding what to do with it is
 * the caller's job.
 */
#ifndef KWEB_HTTP_PARSE_H
#define KWEB_HTTP_PARSE_H

#include "http_encoding.h"
#include "pure.h"

/* More field lines than this is 431, whatever their size. */
#define KWEB_MAX_FIELDS 100

enum kweb_method {
	KWEB_METHOD_OTHER,	/* any other valid token; see kweb_request.method_str */
	KWEB_METHOD_GET,
	KWEB_METHOD_HEAD,
};

enum kweb_parse_result {
	KWEB_PARSE_INCOMPLETE,	/* no error so far; the head has not ended yet */
	KWEB_PARSE_OK,		/* a complete, valid head of head_len bytes */
	KWEB_PARSE_ERROR,	/* invalid; status says which error to answer */
};

/*
 * The slices point into the parsed buffer. A field that was not sent has
 * .p == NULL; one sent with an empty value has .p != NULL and .len == 0.
 * Values are trimmed of OWS. A repeated Range, If-Range, If-Match,
 * If-Unmodified-Since or If-Modified-Since is not an error: the slice
 * then holds the repeated field's name instead of a value, which none of
 * their parsers accepts (see kweb_hp_field()). A repeated If-None-Match,
 * Referer or User-Agent keeps the first. Host, and the authority of an
 * absolute-form target, must be valid (kweb_authority_ok(), the same
 * check for both; an empty Host is allowed): else, or with two Host
 * fields, 400. HTTP/1.0 requests never get upgrade or expect_continue
 * (RFC 9110 7.8 and 10.1.1). keep_alive is false for Expect: 100-continue
 * with content, which kweb answers without reading it, then closes.
 */
struct kweb_request {
	u32 head_len;		/* request line + fields + blank line */
	u16 status;		/* with KWEB_PARSE_ERROR: 400, 414, 431, 501, 505 */
	enum kweb_method method;
	u8 major;		/* HTTP version */
	u8 minor;
	bool keep_alive;	/* version default, then Connection: close/keep-alive */
	bool upgrade;		/* an Upgrade field is present */
	bool h2_preface;	/* "PRI * HTTP/2.0" prior-knowledge preface */
	bool chunked;		/* Transfer-Encoding ends in chunked */
	bool has_content_length;
	bool expect_continue;	/* Expect: 100-continue */
	bool via;		/* a Via field: it came through a proxy */
	u64 content_length;
	struct kweb_str method_str;
	struct kweb_str target;	/* raw request-target, as sent */
	struct kweb_str host;
	struct kweb_str range;
	struct kweb_str if_range;
	struct kweb_str if_none_match;
	struct kweb_str if_modified_since;
	struct kweb_str if_match;
	struct kweb_str if_unmodified_since;
	struct kweb_str referer;	/* for the access log only */
	struct kweb_str user_agent;
	struct kweb_accept_enc accept_enc;	/* every Accept-Encoding line */
};

/*
 * Parse the request head at the start of buf[0..len). Leading empty lines
 * are skipped (and counted in head_len). max_head bounds the head: when
 * len >= max_head and no head has ended within it, the result is an error
 * with status 414 if the request line has not ended, 431 otherwise. A prefix
 * that can no longer become valid is an error at once, before the head ends.
 * More than KWEB_MAX_FIELDS field lines is 431 too. With the HTTP/2
 * preface (only as the first bytes of buf) the result is OK, h2_preface is
 * set and head_len is 24; any other version but 1.x is 505. Transfer-Encoding
 * with a coding other than chunked is 501; in HTTP/1.0, alongside
 * Content-Length, empty, or with chunked twice it is 400. On ERROR only
 * status is meaningful; on INCOMPLETE nothing is.
 */
enum kweb_parse_result kweb_http_parse(const char *buf, size_t len,
				       size_t max_head,
				       struct kweb_request *req);

/* Where kweb_http_head_ready() got to in a head; zeroed for a new head. */
struct kweb_head_scan {
	u32 pos;		/* bytes looked at */
	bool line;		/* a line has ended */
	bool bol;		/* no byte but CR since the last line end */
	bool cr;		/* the last byte looked at was a CR */
	bool ready;		/* worth parsing; cleared by the caller */
	bool tail_seen;		/* the blank-line tail was looked for */
};

/*
 * Whether the head arriving in buf[0..len) is worth parsing: its first
 * line has ended (so that its errors are answered early) or a blank line
 * has, in whatever segments its bytes came, or a bare CR has (a 400 to
 * answer). Only bytes not looked at before are scanned, so a head that
 * arrives a byte at a time costs linear, not quadratic, work; the parser
 * itself then runs about twice per head. A head that came whole, its
 * bytes ending in a blank line, is ready without a scan (once per head:
 * the parse tells the rare exception). Stays true until the caller
 * clears s->ready (after a parse found the head incomplete).
 */
bool kweb_http_head_ready(const char *buf, size_t len,
			  struct kweb_head_scan *s);

#endif /* KWEB_HTTP_PARSE_H */
