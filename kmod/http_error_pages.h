/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-listener error pages, nginx's "error_page 404 /404.html": the file
 * of the docroot kweb sends as the body of an error response of a given
 * status instead of its built-in one. Pure logic.
 */
#ifndef KWEB_HTTP_ERROR_PAGES_H
#define KWEB_HTTP_ERROR_PAGES_H

#include "pure.h"

#define KWEB_ERROR_PAGES_MAX 16		/* status codes per listener */
#define KWEB_ERROR_PAGE_PATH_MAX 255	/* bytes of one page's path */

struct kweb_error_page {
	u16 status;
	struct kweb_str path;	/* "/errors/404.html": a slice of the text */
};

struct kweb_error_pages {
	struct kweb_error_page p[KWEB_ERROR_PAGES_MAX];
	unsigned int nr;
};

/*
 * Parse text (which must outlive pages: the paths are slices of it):
 *
 *   "404=/errors/404.html; 500,502,503=/50x.html"
 *
 * Entries are separated by ';', with optional OWS around each and an
 * optional ';' after the last. Each is CODES=PATH, with no OWS inside.
 * CODES is one or more 3-digit statuses 400..599 separated by ',', each
 * given once in the whole text, each taking one of the
 * KWEB_ERROR_PAGES_MAX slots (in text order). PATH is the file's path
 * under the docroot, already as normalizing a request's path leaves it,
 * since it is opened as it stands: '/' then 1..KWEB_ERROR_PAGE_PATH_MAX - 1
 * bytes of ALPHA, DIGIT and "-._~!$&'()*+,=:@/" (no percent-encoding,
 * '?', '#', ';', SP, CTL or non-ASCII), no empty, "." or ".." segment,
 * and no '/' at the end (a page is a file, not a directory).
 *
 * Returns 0, -EINVAL for a malformed entry anywhere in the text (an empty
 * one included, so a text of OWS alone) or a status given twice, else
 * -E2BIG for more than KWEB_ERROR_PAGES_MAX statuses in all. NULL or ""
 * gives no pages, and so does any error.
 */
int kweb_error_pages_parse(struct kweb_error_pages *pages, const char *text);

/* The page for status, or NULL; pages may be NULL. */
const struct kweb_str *kweb_error_page(const struct kweb_error_pages *pages,
				       u16 status);

#endif /* KWEB_HTTP_ERROR_PAGES_H */
