// SPDX-License-Identifier: GPL-2.0
/*
 * Range request field (RFC 9110 14.1 and 14.2).
 *
 * The grammar is followed exactly: range-unit "=" range-set with no OWS
 * around the "=", and range-set a list, so OWS and empty elements are
 * allowed around commas only. kweb serves one range or the whole file: a
 * list of several ranges is answered with 200, which RFC 9110 14.2 allows
 * ("a server MAY ignore the Range header field").
 *
 * An empty file has no byte to send, yet a suffix range of it is
 * satisfiable (14.1.1) and no Content-Range can say so: a range from its
 * start (bytes=0-, 0-0, -N) gets the whole, empty file, as nginx answers;
 * one from further on is unsatisfiable.
 */
#include "http_range.h"

static bool kweb_rg_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* 1*DIGIT at v[*i..end) into a u64; false for none or overflow. */
static bool kweb_rg_num(const char *v, size_t end, size_t *i, u64 *out)
{
	size_t s = *i;
	u64 n = 0;

	for (; *i < end && v[*i] >= '0' && v[*i] <= '9'; (*i)++) {
		unsigned int d = v[*i] - '0';

		if (n > (~0ULL - d) / 10)
			return false;
		n = n * 10 + d;
	}
	*out = n;
	return *i > s;
}

/* One range-spec, v[s..e), trimmed; anything but a byte range is NONE. */
static enum kweb_range_result kweb_rg_spec(const char *v, size_t s, size_t e,
					   u64 size, u64 *first, u64 *last)
{
	size_t i = s;
	u64 a, b;

	if (v[i] == '-') {
		/* suffix-range: the last b bytes */
		i++;
		if (!kweb_rg_num(v, e, &i, &b) || i != e)
			return KWEB_RANGE_NONE;
		/* An empty file: its whole, as nginx (see the top). */
		if (!size)
			return KWEB_RANGE_NONE;
		if (!b)
			return KWEB_RANGE_UNSATISFIABLE;
		*first = b < size ? size - b : 0;
		*last = size - 1;
		return KWEB_RANGE_OK;
	}

	if (!kweb_rg_num(v, e, &i, &a) || i == e || v[i] != '-')
		return KWEB_RANGE_NONE;
	i++;
	if (i == e) {
		b = ~0ULL;
	} else {
		if (!kweb_rg_num(v, e, &i, &b) || i != e)
			return KWEB_RANGE_NONE;
		/* last-pos < first-pos makes the field invalid (14.1.1) */
		if (b < a)
			return KWEB_RANGE_NONE;
	}
	if (a >= size)
		return a ? KWEB_RANGE_UNSATISFIABLE : KWEB_RANGE_NONE;
	*first = a;
	*last = b < size - 1 ? b : size - 1;
	return KWEB_RANGE_OK;
}

enum kweb_range_result kweb_range_parse(const char *v, size_t len, u64 size,
					u64 *first, u64 *last)
{
	static const char unit[] = "bytes=";
	size_t i, k, s, e, spec_s = 0, spec_e = 0;
	unsigned int specs = 0;

	/* The caller may hand over an untrimmed field value. */
	while (len && kweb_rg_ows(v[len - 1]))
		len--;
	while (len && kweb_rg_ows(*v)) {
		v++;
		len--;
	}

	for (k = 0; k < sizeof(unit) - 1; k++) {
		char c = k < len ? v[k] : '\0';

		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		if (c != unit[k])
			return KWEB_RANGE_NONE;
	}
	/* OWS may follow a comma but not the "=" */
	if (k < len && kweb_rg_ows(v[k]))
		return KWEB_RANGE_NONE;

	/* 1#range-spec: "0-1, ,2-3" has two elements, ",0-1," has one. */
	for (s = k, i = k; i <= len; i++) {
		if (i < len && v[i] != ',')
			continue;
		e = i;
		while (s < e && kweb_rg_ows(v[s]))
			s++;
		while (e > s && kweb_rg_ows(v[e - 1]))
			e--;
		if (e > s) {
			if (++specs > 1)
				return KWEB_RANGE_NONE;
			spec_s = s;
			spec_e = e;
		}
		s = i + 1;
	}
	if (!specs)
		return KWEB_RANGE_NONE;
	return kweb_rg_spec(v, spec_s, spec_e, size, first, last);
}
