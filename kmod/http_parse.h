/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HTTP/1.x request head parser (RFC 9110, RFC 9112). Pure logic: it reads a
 * buffer and reports what the request says; deciding what to do with it is
 * the caller's job.
 */
#ifndef KWEB_HTTP_PARSE_H
#define KWEB_HTTP_PARSE_H

#include "pure.h"

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
	u64 content_length;
	struct kweb_str method_str;
	struct kweb_str target;	/* raw request-target, as sent */
	struct kweb_str host;
	struct kweb_str range;
	struct kweb_str if_range;
	struct kweb_str if_none_match;
	struct kweb_str if_modified_since;
};

/*
 * Parse the request head at the start of buf[0..len). Leading empty lines
 * are skipped (and counted in head_len). max_head bounds the head: when
 * len >= max_head and no head has ended within it, the result is an error
 * with status 414 if the request line has not ended, 431 otherwise. A prefix
 * that can no longer become valid is an error at once, before the head ends.
 */
enum kweb_parse_result kweb_http_parse(const char *buf, size_t len,
				       size_t max_head,
				       struct kweb_request *req);

#endif /* KWEB_HTTP_PARSE_H */
