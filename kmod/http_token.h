/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The character classes and comparisons of HTTP's grammar that several
 * pure-logic files parse with (RFC 9110 5.6). Pure logic.
 */
#ifndef KWEB_HTTP_TOKEN_H
#define KWEB_HTTP_TOKEN_H

#include "pure.h"

/* tchar: what a token (a method, a field name, a coding) is made of. */
static inline bool kweb_http_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return true;
	switch (c) {
	case '!': case '#': case '$': case '%': case '&': case '\'':
	case '*': case '+': case '-': case '.': case '^': case '_':
	case '`': case '|': case '~':
		return true;
	}
	return false;
}

/* OWS: optional whitespace. */
static inline bool kweb_http_ows(char c)
{
	return c == ' ' || c == '\t';
}

static inline char kweb_http_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* Does p[0..len) equal the lower-case string lc, ignoring case? */
static inline bool kweb_http_ieq(const char *p, size_t len, const char *lc)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!lc[i] || kweb_http_lower(p[i]) != lc[i])
			return false;
	return !lc[len];
}

#endif /* KWEB_HTTP_TOKEN_H */
