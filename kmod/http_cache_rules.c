// SPDX-License-Identifier: GPL-2.0
/*
 * Cache-Control rules. kweb sends a rule's value verbatim as a field
 * value, so the parser is strict where a recipient would be lenient:
 * whatever it accepts is one well-formed field line (RFC 9111 5.2):
 *
 *   Cache-Control   = #cache-directive
 *   cache-directive = token [ "=" ( token / quoted-string ) ]
 *
 * Bytes are VCHAR, SP and HTAB only, so no CR, LF, NUL or DEL can end
 * the line early or start another field; and no empty list elements,
 * which a sender must not generate (RFC 9110 5.6.1).
 */
#include "http_cache_rules.h"
#include "http_token.h"

static bool kweb_cc_vchar(unsigned char c)
{
	return (c >= 0x21 && c <= 0x7e) || kweb_http_ows(c);
}

/* delta-seconds: 1*DIGIT; larger than 2^31 is 2^31 (RFC 9111 1.2.2). */
static int kweb_cc_delta(const char *p, size_t len, s64 *out)
{
	s64 v = 0;
	size_t i;

	if (!len)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (p[i] - '0');
		if (v > KWEB_CACHE_DELTA_MAX)
			v = KWEB_CACHE_DELTA_MAX;
	}
	*out = v;
	return 0;
}

/* A quoted-string at p[*i] (its DQUOTE); *i ends past the closing one. */
static int kweb_cc_quoted(const char *p, size_t len, size_t *i)
{
	size_t k = *i + 1;

	while (k < len) {
		if (p[k] == '"') {
			*i = k + 1;
			return 0;
		}
		/* quoted-pair: any byte already checked, even '"' or '\' */
		k += p[k] == '\\' ? 2 : 1;
	}
	return -EINVAL;
}

/* The value p[0..len), trimmed: check it and find its max-age. */
static int kweb_cc_value(const char *p, size_t len, s64 *max_age)
{
	size_t i, name, name_end, arg;
	bool quoted;

	*max_age = -1;
	if (!len || len > KWEB_CACHE_CONTROL_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!kweb_cc_vchar(p[i]))
			return -EINVAL;
	i = 0;
	for (;;) {
		name = i;
		while (i < len && kweb_http_tchar(p[i]))
			i++;
		if (i == name)
			return -EINVAL;
		name_end = i;
		arg = i;
		quoted = false;
		if (i < len && p[i] == '=') {
			arg = ++i;
			if (i < len && p[i] == '"') {
				quoted = true;
				if (kweb_cc_quoted(p, len, &i))
					return -EINVAL;
			} else {
				while (i < len && kweb_http_tchar(p[i]))
					i++;
				if (i == arg)
					return -EINVAL;
			}
		}
		/* A second max-age would leave caches to pick one. */
		if (kweb_http_ieq(p + name, name_end - name, "max-age") &&
		    (*max_age >= 0 || quoted ||
		     kweb_cc_delta(p + arg, i - arg, max_age)))
			return -EINVAL;
		while (i < len && kweb_http_ows(p[i]))
			i++;
		if (i == len)
			return 0;
		if (p[i++] != ',')
			return -EINVAL;
		while (i < len && kweb_http_ows(p[i]))
			i++;
	}
}

/* MATCH: a path prefix or an extension; the lead byte alone is neither. */
static int kweb_cc_match(const char *p, size_t len)
{
	size_t i;

	if (len < 2 || (p[0] != '/' && p[0] != '.'))
		return -EINVAL;
	for (i = 1; i < len; i++) {
		unsigned char c = p[i];

		if (p[0] == '.' ? !kweb_http_tchar(c) :
		    c <= 0x20 || c == 0x7f || c == '?' || c == '#')
			return -EINVAL;
	}
	return 0;
}

/* One rule, p[0..len) trimmed of OWS. */
static int kweb_cc_rule(struct kweb_cache_rule *r, const char *p, size_t len)
{
	const char *eq = memchr(p, '=', len);
	const char *v;
	size_t vlen;

	if (!eq || kweb_cc_match(p, eq - p))
		return -EINVAL;
	v = eq + 1;
	vlen = p + len - v;
	while (vlen && kweb_http_ows(v[0])) {
		v++;
		vlen--;
	}
	if (kweb_cc_value(v, vlen, &r->max_age))
		return -EINVAL;
	r->match.p = p;
	r->match.len = eq - p;
	r->value.p = v;
	r->value.len = vlen;
	return 0;
}

int kweb_cache_rules_parse(struct kweb_cache_rules *rules, const char *text)
{
	struct kweb_list_walk w;
	struct kweb_cache_rule r;
	const char *s;
	size_t len;
	int err;

	memset(rules, 0, sizeof(*rules));
	if (!text || !*text)
		return 0;
	kweb_list_walk_init(&w, text);
	while (kweb_list_next(&w, &s, &len)) {
		err = kweb_cc_rule(&r, s, len);
		if (!err && rules->nr == KWEB_CACHE_RULES_MAX)
			err = -E2BIG;
		if (err) {
			rules->nr = 0;
			return err;
		}
		rules->r[rules->nr++] = r;
	}
	return 0;
}

static bool kweb_cc_ends_with_ci(const char *s, size_t len,
				 const struct kweb_str *suffix)
{
	size_t i, off;

	if (len < suffix->len)
		return false;
	off = len - suffix->len;
	for (i = 0; i < suffix->len; i++)
		if (kweb_http_lower(s[off + i]) != kweb_http_lower(suffix->p[i]))
			return false;
	return true;
}

const struct kweb_cache_rule *
kweb_cache_rule_match(const struct kweb_cache_rules *rules, const char *path,
		      size_t len)
{
	const struct kweb_cache_rule *best = NULL, *r;
	const char *base = path;
	unsigned int i;
	size_t k;

	if (!rules || !rules->nr)
		return NULL;
	/* The last segment: "/a.css/" has no extension, "/a.css/x" not .css. */
	for (k = 0; k < len; k++)
		if (path[k] == '/')
			base = path + k + 1;
	for (i = 0; i < rules->nr; i++) {
		r = &rules->r[i];
		if (r->match.p[0] == '.' &&
		    kweb_cc_ends_with_ci(base, path + len - base, &r->match))
			return r;
	}
	for (i = 0; i < rules->nr; i++) {
		r = &rules->r[i];
		if (r->match.p[0] == '/' && len >= r->match.len &&
		    !memcmp(path, r->match.p, r->match.len) &&
		    (!best || r->match.len > best->match.len))
			best = r;
	}
	return best;
}
