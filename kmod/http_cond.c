// SPDX-License-Identifier: GPL-2.0
/*
 * Validators and conditional requests (RFC 9110 8.8 and 13.1).
 *
 * Anything malformed means "condition not met" in the direction that sends
 * the full file: a wrong 200 costs bandwidth, a wrong 304 or 206 serves
 * stale or mixed content.
 */
#include "http_cond.h"
#include "http_date.h"

static bool kweb_cd_ows(char c)
{
	return c == ' ' || c == '\t';
}

static void kweb_cd_trim(const char **v, size_t *len)
{
	while (*len && kweb_cd_ows((*v)[*len - 1]))
		(*len)--;
	while (*len && kweb_cd_ows(**v)) {
		(*v)++;
		(*len)--;
	}
}

/* etagc: %x21 / %x23-7E / obs-text */
static bool kweb_cd_etagc(unsigned char c)
{
	return c == 0x21 || (c >= 0x23 && c != 0x7f);
}

/*
 * Length of the entity-tag [W/]"..." at v[0..len), 0 if there is none.
 * *weak tells whether it had W/.
 */
static size_t kweb_cd_etag_len(const char *v, size_t len, bool *weak)
{
	size_t i = 0;

	*weak = len >= 2 && v[0] == 'W' && v[1] == '/';
	if (*weak)
		i = 2;
	if (i >= len || v[i] != '"')
		return 0;
	for (i++; i < len && kweb_cd_etagc(v[i]); i++)
		;
	if (i >= len || v[i] != '"')
		return 0;
	return i + 1;
}

/* Opaque tags equal, a and b both starting at the opening quote. */
static bool kweb_cd_same(const char *a, size_t alen, const char *b,
			 size_t blen)
{
	return alen == blen && !memcmp(a, b, alen);
}

int kweb_etag_format(char *buf, s64 mtime, u64 size)
{
	static const char hex[] = "0123456789abcdef";
	u64 parts[2] = { mtime < 0 ? 0 : (u64)mtime, size };
	int n = 0, k, shift;

	buf[n++] = '"';
	for (k = 0; k < 2; k++) {
		if (k)
			buf[n++] = '-';
		/* "%llx": no leading zeros, but at least one digit */
		for (shift = 60; shift > 0 && !(parts[k] >> shift); shift -= 4)
			;
		for (; shift >= 0; shift -= 4)
			buf[n++] = hex[(parts[k] >> shift) & 0xf];
	}
	buf[n++] = '"';
	buf[n] = '\0';
	return n;
}

/*
 * Whether the field value v (trimmed) is "*" or a list of entity tags
 * one of which matches etag: by strong comparison (both strong, the same
 * opaque tag: If-Match) or by weak comparison (W/ ignored on both sides:
 * If-None-Match), RFC 9110 8.8.3.2. A list with anything but entity tags
 * in it matches nothing.
 */
static bool kweb_cd_list_match(const char *v, size_t len, const char *etag,
			       size_t etag_len, bool strong)
{
	bool weak, match = false;
	size_t i = 0, n;

	kweb_cd_trim(&v, &len);
	if (len == 1 && v[0] == '*')
		return true;

	n = kweb_cd_etag_len(etag, etag_len, &weak);
	if (!n || n != etag_len || (weak && strong))
		return false;
	if (weak) {
		etag += 2;
		etag_len -= 2;
	}

	/* #entity-tag, empty elements allowed; any junk spoils the list */
	while (i < len) {
		while (i < len && (kweb_cd_ows(v[i]) || v[i] == ','))
			i++;
		if (i == len)
			break;
		n = kweb_cd_etag_len(v + i, len - i, &weak);
		if (!n)
			return false;
		if (!(weak && strong) &&
		    kweb_cd_same(v + i + 2 * weak, n - 2 * weak, etag,
				 etag_len))
			match = true;
		i += n;
		while (i < len && kweb_cd_ows(v[i]))
			i++;
		if (i < len && v[i] != ',')
			return false;
	}
	return match;
}

bool kweb_if_none_match(const char *v, size_t len, const char *etag,
			size_t etag_len)
{
	return kweb_cd_list_match(v, len, etag, etag_len, false);
}

bool kweb_if_match(const char *v, size_t len, const char *etag,
		   size_t etag_len)
{
	return kweb_cd_list_match(v, len, etag, etag_len, true);
}

bool kweb_if_range(const char *v, size_t len, const char *etag,
		   size_t etag_len, s64 mtime)
{
	bool weak;
	size_t n;
	s64 t;

	kweb_cd_trim(&v, &len);
	/* RFC 9110 13.1.5: a DQUOTE or W/ in front says entity-tag. */
	if (len && (v[0] == '"' || (len > 1 && v[0] == 'W' && v[1] == '/'))) {
		n = kweb_cd_etag_len(v, len, &weak);
		/* strong comparison: a weak tag on either side fails */
		if (!n || n != len || weak)
			return false;
		n = kweb_cd_etag_len(etag, etag_len, &weak);
		if (!n || n != etag_len || weak)
			return false;
		return kweb_cd_same(v, len, etag, etag_len);
	}
	return !kweb_http_date_parse(v, len, &t) && t == mtime;
}

bool kweb_not_modified_since(const char *v, size_t len, s64 mtime)
{
	s64 t;

	kweb_cd_trim(&v, &len);
	return !kweb_http_date_parse(v, len, &t) && mtime <= t;
}

bool kweb_if_unmodified_since(const char *v, size_t len, s64 mtime)
{
	s64 t;

	kweb_cd_trim(&v, &len);
	/* Not a date (a list of them included): ignored, RFC 9110 13.1.4. */
	return kweb_http_date_parse(v, len, &t) || mtime <= t;
}

u16 kweb_preconditions(const struct kweb_preconds *c, const char *etag,
		       size_t etag_len, s64 mtime)
{
	const struct kweb_str *v;

	/* Steps 1 and 2: If-Unmodified-Since only without If-Match. */
	v = &c->if_match;
	if (v->p) {
		if (!kweb_if_match(v->p, v->len, etag, etag_len))
			return 412;
	} else if (c->if_unmodified_since.p &&
		   !kweb_if_unmodified_since(c->if_unmodified_since.p,
					     c->if_unmodified_since.len,
					     mtime)) {
		return 412;
	}

	/* Steps 3 and 4: present, even empty, If-None-Match overrides. */
	v = &c->if_none_match;
	if (v->p) {
		if (kweb_if_none_match(v->p, v->len, etag, etag_len))
			return 304;
	} else if (c->if_modified_since.len &&
		   kweb_not_modified_since(c->if_modified_since.p,
					   c->if_modified_since.len, mtime)) {
		return 304;
	}
	return 0;
}
