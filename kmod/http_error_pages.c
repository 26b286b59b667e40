// SPDX-License-Identifier: GPL-2.0
/*
 * Error pages. A page's path is opened under the docroot as written,
 * without kweb_path_normalize(), so the parser takes only paths that
 * normalizing would leave as they are: no "." or ".." segment that could
 * climb out of the docroot, no empty segment that would name a file
 * twice, no '%' that would be read literally where a request's would be
 * decoded, and nothing that ends a path in a URL ('?', '#').
 */
#include "http_error_pages.h"
#include "http_token.h"

#define KWEB_EP_STATUS_MIN 400
#define KWEB_EP_STATUS_MAX 599

/* One bit per status 400..599: a status given twice is an error. */
#define KWEB_EP_SEEN_BYTES \
	((KWEB_EP_STATUS_MAX - KWEB_EP_STATUS_MIN) / 8 + 1)

/* pchar (RFC 3986 3.3) less '%' and ';', plus '/'. */
static bool kweb_ep_path_byte(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return true;
	switch (c) {
	case '-': case '.': case '_': case '~': case '!': case '$':
	case '&': case '\'': case '(': case ')': case '*': case '+':
	case ',': case '=': case ':': case '@': case '/':
		return true;
	}
	return false;
}

/* PATH, p[0..len). */
static int kweb_ep_path(const char *p, size_t len)
{
	size_t i, seg = 1;

	if (len < 2 || len > KWEB_ERROR_PAGE_PATH_MAX || p[0] != '/')
		return -EINVAL;
	for (i = 1; i <= len; i++) {
		if (i < len && p[i] != '/') {
			if (!kweb_ep_path_byte(p[i]))
				return -EINVAL;
			continue;
		}
		/* The segment p[seg..i) ends; a trailing '/' ends "". */
		if (i == seg ||
		    (p[seg] == '.' && (i - seg == 1 ||
				       (i - seg == 2 && p[seg + 1] == '.'))))
			return -EINVAL;
		seg = i + 1;
	}
	return 0;
}

/* One status of CODES: exactly three digits, 400..599. */
static int kweb_ep_status(const char *p, size_t len, u16 *status)
{
	unsigned int v = 0;
	size_t i;

	if (len != 3)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (p[i] - '0');
	}
	if (v < KWEB_EP_STATUS_MIN || v > KWEB_EP_STATUS_MAX)
		return -EINVAL;
	*status = v;
	return 0;
}

/*
 * One entry, p[0..len) trimmed of OWS: each of its statuses goes into
 * the next slot while there is one, and counts in *total either way, so
 * that the whole text is checked before -E2BIG is told.
 */
static int kweb_ep_entry(struct kweb_error_pages *pages, const char *p,
			 size_t len, u8 *seen, unsigned int *total)
{
	const char *eq = memchr(p, '=', len);
	const char *c, *comma, *end;
	struct kweb_str path;
	unsigned int bit;
	u16 status;

	if (!eq)
		return -EINVAL;
	path.p = eq + 1;
	path.len = p + len - path.p;
	if (kweb_ep_path(path.p, path.len))
		return -EINVAL;
	for (c = p; ; c = comma + 1) {
		comma = memchr(c, ',', eq - c);
		end = comma ? comma : eq;
		if (kweb_ep_status(c, end - c, &status))
			return -EINVAL;
		bit = status - KWEB_EP_STATUS_MIN;
		if (seen[bit / 8] & (1U << (bit % 8)))
			return -EINVAL;
		seen[bit / 8] |= 1U << (bit % 8);
		if (*total < KWEB_ERROR_PAGES_MAX) {
			pages->p[*total].status = status;
			pages->p[*total].path = path;
		}
		(*total)++;
		if (!comma)
			return 0;
	}
}

int kweb_error_pages_parse(struct kweb_error_pages *pages, const char *text)
{
	u8 seen[KWEB_EP_SEEN_BYTES];
	struct kweb_list_walk w;
	unsigned int total = 0;
	const char *s;
	size_t len;
	int err;

	memset(pages, 0, sizeof(*pages));
	if (!text || !*text)
		return 0;
	memset(seen, 0, sizeof(seen));
	kweb_list_walk_init(&w, text);
	while (kweb_list_next(&w, &s, &len)) {
		err = kweb_ep_entry(pages, s, len, seen, &total);
		if (err)
			goto fail;
	}
	/* More than 200 statuses would have repeated one: total is small. */
	if (total > KWEB_ERROR_PAGES_MAX) {
		err = -E2BIG;
		goto fail;
	}
	pages->nr = total;
	return 0;
fail:
	memset(pages, 0, sizeof(*pages));
	return err;
}

const struct kweb_str *kweb_error_page(const struct kweb_error_pages *pages,
				       u16 status)
{
	unsigned int i;

	if (!pages)
		return NULL;
	for (i = 0; i < pages->nr; i++)
		if (pages->p[i].status == status)
			return &pages->p[i].path;
	return NULL;
}
