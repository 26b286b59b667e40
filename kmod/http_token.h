/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The character classes and comparisons of HTTP's grammar that several
 * pure-logic files parse with (RFC 9110 5.6). Pure logic.
 */
#ifndef KWEB_HTTP_TOKEN_H
#define KWEB_HTTP_TOKEN_H

#include "pure.h"

/*
 * Character classes (http_token.c): one table entry per byte, a bit per
 * class. Every byte of every head is tested against one of them.
 */
#define KWEB_CT_TCHAR	0x01	/* tchar (RFC 9110 5.6.2) */
#define KWEB_CT_VALUE	0x02	/* field-content: VCHAR, obs-text, SP, HTAB */
#define KWEB_CT_TARGET	0x04	/* a target's: VCHAR and obs-text, like nginx */
#define KWEB_CT_HOST	0x08	/* unreserved / sub-delims (RFC 3986 2.3, 2.2) */
#define KWEB_CT_HEX	0x10	/* HEXDIG */
#define KWEB_CT_DIGIT	0x20	/* DIGIT */
#define KWEB_CT_PATH	0x40	/* a target's but "/%?#": copied as it is */

extern const u8 kweb_http_ctype[256];

static inline bool kweb_http_is(unsigned char c, u8 class)
{
	return kweb_http_ctype[c] & class;
}

/* tchar: ALPHA, DIGIT and "!#$%&'*+-.^_`|~" (RFC 9110 5.6.2). */
static inline bool kweb_http_tchar(unsigned char c)
{
	return kweb_http_is(c, KWEB_CT_TCHAR);
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

/* Does p[0..len) start with the lower-case string lc, ignoring case? */
static inline bool kweb_http_iprefix(const char *p, size_t len, const char *lc)
{
	size_t i;

	for (i = 0; lc[i]; i++)
		if (i == len || kweb_http_lower(p[i]) != lc[i])
			return false;
	return true;
}

/*
 * Eight bytes at a time, for the long runs of a head (field values, a
 * target's path): exact as a whole, since a borrow only runs on from a
 * byte that is itself a hit. Whatever the word's byte order.
 */
#define KWEB_WORD_ONES	0x0101010101010101ULL
#define KWEB_WORD_HIGHS	0x8080808080808080ULL

static inline u64 kweb_word_load(const char *p)
{
	u64 w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/* Is any byte of w zero? */
static inline bool kweb_word_has_zero(u64 w)
{
	return (w - KWEB_WORD_ONES) & ~w & KWEB_WORD_HIGHS;
}

/* Is any byte of w equal to c? */
static inline bool kweb_word_has(u64 w, u8 c)
{
	return kweb_word_has_zero(w ^ (c * KWEB_WORD_ONES));
}

/* Is any byte of w below c (at most 0x80)? obs-text never is. */
static inline bool kweb_word_has_below(u64 w, u8 c)
{
	return (w - c * KWEB_WORD_ONES) & ~w & KWEB_WORD_HIGHS;
}

/*
 * memcpy() of the few to few dozen bytes of a header's pieces or a
 * path's segments, in eight-byte moves, the last one overlapping the one
 * before: gcc makes a kernel memcpy() of such a size a rep movsb or a
 * call, each slower for so few bytes than the moves (and under TCG a rep
 * movsb is one instruction per byte). d and s never overlap.
 */
static __always_inline void kweb_copy_short(char *d, const char *s, size_t n)
{
	size_t i;
	u64 w;
	u32 h;

	if (n >= sizeof(w)) {
		for (i = 0; i + sizeof(w) < n; i += sizeof(w)) {
			memcpy(&w, s + i, sizeof(w));
			memcpy(d + i, &w, sizeof(w));
		}
		memcpy(&w, s + n - sizeof(w), sizeof(w));
		memcpy(d + n - sizeof(w), &w, sizeof(w));
	} else if (n >= sizeof(h)) {
		memcpy(&h, s, sizeof(h));
		memcpy(d, &h, sizeof(h));
		memcpy(&h, s + n - sizeof(h), sizeof(h));
		memcpy(d + n - sizeof(h), &h, sizeof(h));
	} else {
		for (i = 0; i < n; i++)
			d[i] = s[i];
	}
}

/*
 * A setting's ';'-separated list (cache_rules, error_pages): a walk over
 * its elements, OWS trimmed. The empty element after a last ';' ends the
 * list; any other empty one is yielded, for the caller to refuse.
 */
struct kweb_list_walk {
	const char *pos;	/* NULL once the last element was yielded */
	bool started;
};

static inline void kweb_list_walk_init(struct kweb_list_walk *w,
				       const char *text)
{
	w->pos = text;
	w->started = false;
}

static inline bool kweb_list_next(struct kweb_list_walk *w,
				  const char **elem, size_t *len)
{
	const char *s = w->pos, *end;
	size_t n;

	if (!s)
		return false;
	end = strchr(s, ';');
	n = end ? (size_t)(end - s) : strlen(s);
	while (n && kweb_http_ows(s[0])) {
		s++;
		n--;
	}
	while (n && kweb_http_ows(s[n - 1]))
		n--;
	w->pos = end ? end + 1 : NULL;
	if (!end && !n && w->started)
		return false;
	w->started = true;
	*elem = s;
	*len = n;
	return true;
}

#endif /* KWEB_HTTP_TOKEN_H */
