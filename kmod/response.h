/* SPDX-License-Identifier: GPL-2.0 */
/* Response header and error body formatting. Pure logic. */
#ifndef KWEB_RESPONSE_H
#define KWEB_RESPONSE_H

#include "pure.h"

/* What goes into a response header; unset pointers leave a field out. */
struct kweb_resp_hdr {
	u16 status;
	bool close;			/* Connection: close */
	bool keep_alive;		/* Connection: keep-alive (HTTP/1.0) */
	/* Dates are IMF-fixdates, KWEB_HTTP_DATE_LEN bytes. */
	const char *date;		/* required */
	const char *content_type;
	bool has_length;
	u64 length;
	const char *last_modified;
	struct kweb_str etag;		/* with its quotes; .len 0: none */
	const char *content_encoding;	/* a precompressed file's coding */
	bool vary;			/* Vary: Accept-Encoding */
	const char *expires;		/* IMF-fixdate */
	struct kweb_str cache_control;	/* a checked field value */
	bool accept_ranges;
	bool content_range;		/* 206: bytes first-last/size */
	bool unsatisfied_range;		/* 416: bytes * /size */
	u64 first;
	u64 last;
	u64 size;
	/*
	 * 301: the normalized (decoded) path, sent percent-encoded, then "/".
	 * Never the raw target: "//host" would be read as another host. A
	 * target with a query never gets here: it is the backend's.
	 */
	struct kweb_str location;
	/* Any other Location, sent as it is: a redirect to HTTPS. */
	struct kweb_str redirect;
	u32 hsts;			/* Strict-Transport-Security max-age */
	bool hsts_subdomains;		/* ... with includeSubDomains */
	/*
	 * Content-Type, Content-Length and Last-Modified as
	 * kweb_resp_file_fields() made them for this response (a cached
	 * file's 200), sent instead of those three of the fields above.
	 */
	struct kweb_str file_fields;
};

/* The reason phrase for a status code kweb sends; "Unknown" otherwise. */
const char *kweb_status_reason(u16 status);

/*
 * Write the status line and header fields, ending with the blank line,
 * to buf. Returns the length, or -ENOSPC if size is too small.
 */
int kweb_resp_format(char *buf, size_t size, const struct kweb_resp_hdr *h);

/* Room for kweb_resp_file_fields() with a Content-Type of 150 bytes. */
#define KWEB_FILE_FIELDS_MAX	256

/*
 * The Content-Type (if not NULL), Content-Length and Last-Modified (if
 * not NULL) lines of a file's response, as kweb_resp_format() writes
 * them: made once for a cached file, sent with each of its 200s. Returns
 * the length, or -ENOSPC.
 */
int kweb_resp_file_fields(char *buf, size_t size, const char *content_type,
			  u64 length, const char *last_modified);

/* The small HTML body of an error response. Returns the length or -ENOSPC. */
int kweb_error_body(char *buf, size_t size, u16 status);

#endif /* KWEB_RESPONSE_H */
