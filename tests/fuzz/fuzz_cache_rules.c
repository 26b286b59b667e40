// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the input is a Cache-Control rules text, up to its
 * first NUL; the bytes after it, if any, a path. kweb_cache_rules_parse()
 * (kmod/http_cache_rules.c) must agree with the reference below, written
 * from http_cache_rules.h another way (a state machine per byte of a
 * value); whatever it accepts must be safe to send as a field value and
 * read back the same when written out again; and kweb_cache_rule_match()
 * must pick what a brute-force reading of the precedence rules picks, on
 * paths built from the rules themselves.
 */
#include "check.h"
#include "http_cache_rules.h"

#define FZ_DELTA_MAX 2147483648LL

struct fz_rule {
	size_t m_off, m_len, v_off, v_len;
	s64 max_age;
};

static bool fz_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool fz_field_byte(unsigned char c)
{
	return c == '\t' || (c >= ' ' && c < 0x7f);
}

/* delta-seconds, into *out clamped; false if not 1*DIGIT. */
static bool fz_delta(const char *s, size_t n, s64 *out)
{
	char num[16];
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	while (n > 1 && s[0] == '0') {
		s++;
		n--;
	}
	if (n > 10) {
		*out = FZ_DELTA_MAX;
		return true;
	}
	memcpy(num, s, n);
	num[n] = '\0';
	*out = strtoll(num, NULL, 10);
	if (*out > FZ_DELTA_MAX)
		*out = FZ_DELTA_MAX;
	return true;
}

enum fz_state {
	FZ_NAME0,	/* a directive must start */
	FZ_NAME,	/* in its name */
	FZ_ARG0,	/* after '=' */
	FZ_TOKEN,	/* in a token argument */
	FZ_QUOTED,	/* in a quoted-string */
	FZ_ESCAPE,	/* after its '\' */
	FZ_CLOSED,	/* after its closing DQUOTE */
	FZ_AFTER,	/* OWS after a directive */
	FZ_COMMA,	/* OWS after ',' */
};

/* A directive ends: false if it makes the value bad. */
static bool fz_directive(const char *v, size_t name, size_t name_end,
			 size_t arg, size_t arg_end, bool has_arg, bool quoted,
			 s64 *max_age)
{
	if (name_end - name != 7 || strncasecmp(v + name, "max-age", 7))
		return true;
	if (*max_age >= 0 || !has_arg || quoted)
		return false;
	return fz_delta(v + arg, arg_end - arg, max_age);
}

/* A Cache-Control value of VCHAR, SP and HTAB, one byte at a time. */
static bool fz_value_model(const char *v, size_t n, s64 *max_age)
{
	enum fz_state st = FZ_NAME0;
	size_t i, name = 0, name_end = 0, arg = 0;
	bool has_arg = false, quoted = false;

	*max_age = -1;
	if (!n || n > 256)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = v[i];
		bool ends = false;

		if (!fz_field_byte(c))
			return false;
		switch (st) {
		case FZ_NAME0:
		case FZ_COMMA:
			if (fz_ows(c) && st == FZ_COMMA)
				break;
			if (!fz_tchar(c))
				return false;
			st = FZ_NAME;
			name = i;
			has_arg = quoted = false;
			break;
		case FZ_NAME:
			if (fz_tchar(c))
				break;
			name_end = i;
			arg = i;
			if (c == '=') {
				st = FZ_ARG0;
				has_arg = true;
				arg = i + 1;
				break;
			}
			ends = true;
			break;
		case FZ_ARG0:
			if (c == '"') {
				quoted = true;
				st = FZ_QUOTED;
			} else if (fz_tchar(c)) {
				st = FZ_TOKEN;
			} else {
				return false;
			}
			break;
		case FZ_TOKEN:
			if (!fz_tchar(c))
				ends = true;
			break;
		case FZ_QUOTED:
			if (c == '"')
				st = FZ_CLOSED;
			else if (c == '\\')
				st = FZ_ESCAPE;
			break;
		case FZ_ESCAPE:
			st = FZ_QUOTED;
			break;
		case FZ_CLOSED:
			ends = true;
			break;
		case FZ_AFTER:
			if (c == ',')
				st = FZ_COMMA;
			else if (!fz_ows(c))
				return false;
			break;
		}
		if (!ends)
			continue;
		if (c != ',' && !fz_ows(c))
			return false;
		if (!fz_directive(v, name, name_end, arg, i, has_arg, quoted,
				  max_age))
			return false;
		st = c == ',' ? FZ_COMMA : FZ_AFTER;
	}
	if (st == FZ_NAME)
		name_end = arg = n;
	if (st == FZ_NAME || st == FZ_TOKEN || st == FZ_CLOSED)
		return fz_directive(v, name, name_end, arg, n, has_arg, quoted,
				    max_age);
	return st == FZ_AFTER;
}

static bool fz_match_ok(const char *m, size_t n)
{
	size_t i;

	if (n < 2 || (m[0] != '/' && m[0] != '.'))
		return false;
	for (i = 1; i < n; i++) {
		unsigned char c = m[i];

		if (m[0] == '.' && !fz_tchar(c))
			return false;
		if (m[0] == '/' && (iscntrl(c) || c == ' ' || c == '?' ||
				    c == '#'))
			return false;
	}
	return true;
}

/* The pieces between ';', each trimmed, then each rule on its own. */
static int fz_rules_model(const char *t, struct fz_rule *out,
			  unsigned int *nr)
{
	size_t len = strlen(t), start, end, npieces = 1, k;

	*nr = 0;
	if (!len)
		return 0;
	for (k = 0; k < len; k++)
		npieces += t[k] == ';';
	for (start = 0, k = 0; k < npieces; k++, start = end + 1) {
		const char *p = t + start, *eq, *v;
		size_t n, vn;
		s64 ma;

		for (end = start; end < len && t[end] != ';'; end++)
			;
		n = end - start;
		fz_trim(&p, &n);
		if (!n && k && k == npieces - 1)
			return 0;
		eq = memchr(p, '=', n);
		if (!eq || !fz_match_ok(p, eq - p))
			return -EINVAL;
		v = eq + 1;
		vn = p + n - v;
		fz_trim(&v, &vn);
		if (!fz_value_model(v, vn, &ma))
			return -EINVAL;
		if (*nr == 32)
			return -E2BIG;
		out[*nr].m_off = p - t;
		out[*nr].m_len = eq - p;
		out[*nr].v_off = v - t;
		out[*nr].v_len = vn;
		out[*nr].max_age = ma;
		(*nr)++;
	}
	return 0;
}

/* max-age found by searching the lowercased value for "max-age=". */
static s64 fz_naive_max_age(const struct kweb_str *v)
{
	char *low = malloc(v->len + 1), *at;
	s64 ma = -1;
	size_t i;

	if (!low)
		abort();
	for (i = 0; i < v->len; i++)
		low[i] = fz_lower(v->p[i]);
	low[v->len] = '\0';
	for (at = strstr(low, "max-age="); at; at = strstr(at + 1, "max-age=")) {
		if (at > low && !strchr(" \t,", at[-1]))
			continue;
		at += 8;
		CHECK(fz_delta(at, strspn(at, "0123456789"), &ma),
		      "max-age without digits in \"%s\"", low);
		break;
	}
	free(low);
	return ma;
}

/* Precedence, brute force: every rule's verdict, then the winner. */
static int fz_match_model(const struct kweb_cache_rules *rules,
			  const char *path, size_t len)
{
	bool ext[KWEB_CACHE_RULES_MAX], pre[KWEB_CACHE_RULES_MAX];
	size_t seg = len, i, j;
	int best = -1;

	while (seg && path[seg - 1] != '/')
		seg--;
	for (i = 0; i < rules->nr; i++) {
		const struct kweb_str *m = &rules->r[i].match;

		size_t off = len - m->len;

		ext[i] = m->p[0] == '.' && len - seg >= m->len;
		for (j = 0; ext[i] && j < m->len; j++)
			ext[i] = tolower((unsigned char)path[off + j]) ==
				 tolower((unsigned char)m->p[j]);
		pre[i] = m->p[0] == '/' && len >= m->len &&
			 !memcmp(path, m->p, m->len);
	}
	for (i = 0; i < rules->nr; i++)
		if (ext[i])
			return i;
	for (i = rules->nr; i-- > 0;)
		if (pre[i] && (best < 0 ||
			       rules->r[i].match.len >= rules->r[best].match.len))
			best = i;
	return best;
}

/* a + b + c as a path of exactly that many bytes, then both answers. */
static void fz_try(const struct kweb_cache_rules *rules, const char *a,
		   size_t an, const char *b, size_t bn, const char *c,
		   size_t cn)
{
	size_t n = an + bn + cn;
	char *path = malloc(n ? n : 1);
	const struct kweb_cache_rule *got;
	int want, idx;

	if (!path)
		abort();
	memcpy(path, a, an);
	memcpy(path + an, b, bn);
	memcpy(path + an + bn, c, cn);
	got = kweb_cache_rule_match(rules, path, n);
	idx = got ? (int)(got - rules->r) : -1;
	CHECK(!got || (got >= rules->r && got < rules->r + rules->nr),
	      "rule outside the table");
	want = fz_match_model(rules, path, n);
	CHECK(idx == want, "path \"%.*s\": rule %d, model %d", (int)n, path,
	      idx, want);
	free(path);
}

static void fz_check_matches(const struct kweb_cache_rules *rules,
			     const char *tail, size_t tail_len)
{
	unsigned int i, j;
	char *up;

	fz_try(rules, "/", 1, "", 0, "", 0);
	fz_try(rules, "/index.html", 11, "", 0, "", 0);
	fz_try(rules, "", 0, "", 0, "", 0);
	fz_try(rules, tail, tail_len, "", 0, "", 0);
	for (i = 0; i < rules->nr; i++) {
		const struct kweb_str *m = &rules->r[i].match;

		if (m->p[0] == '/') {
			fz_try(rules, m->p, m->len, "", 0, "", 0);
			fz_try(rules, m->p, m->len - 1, "", 0, "", 0);
			fz_try(rules, m->p, m->len, "index.html", 10, "", 0);
			continue;
		}
		fz_try(rules, "/f", 2, m->p, m->len, "", 0);
		fz_try(rules, "/d", 2, m->p, m->len, "/", 1);
		fz_try(rules, "/d", 2, m->p, m->len, "/x", 2);
		fz_try(rules, "/", 1, m->p + 1, m->len - 1, "", 0);
		fz_try(rules, "/", 1, m->p, m->len, "", 0);
		up = malloc(m->len);
		if (!up)
			abort();
		for (j = 0; j < m->len; j++)
			up[j] = toupper((unsigned char)m->p[j]);
		fz_try(rules, "/d/f", 4, up, m->len, "", 0);
		free(up);
		/* a file with this extension under every prefix */
		for (j = 0; j < rules->nr; j++)
			if (rules->r[j].match.p[0] == '/')
				fz_try(rules, rules->r[j].match.p,
				       rules->r[j].match.len, "f", 1, m->p,
				       m->len);
	}
	CHECK(!kweb_cache_rule_match(NULL, "/a", 2), "NULL rules");
}

/* Written out again, the rules read back the same. */
static void fz_check_roundtrip(const struct kweb_cache_rules *rules,
			       size_t text_len)
{
	struct kweb_cache_rules *again = malloc(sizeof(*again));
	char *s = malloc(text_len + 2), *o = s;
	unsigned int i;

	if (!again || !s)
		abort();
	for (i = 0; i < rules->nr; i++) {
		const struct kweb_cache_rule *r = &rules->r[i];

		memcpy(o, r->match.p, r->match.len);
		o += r->match.len;
		*o++ = '=';
		memcpy(o, r->value.p, r->value.len);
		o += r->value.len;
		if (i + 1 < rules->nr)
			*o++ = ';';
	}
	*o = '\0';
	CHECK(kweb_cache_rules_parse(again, s) == 0, "\"%s\" refused", s);
	CHECK(again->nr == rules->nr, "\"%s\": %u rules, not %u", s,
	      again->nr, rules->nr);
	for (i = 0; i < rules->nr; i++) {
		const struct kweb_cache_rule *a = &rules->r[i];
		const struct kweb_cache_rule *b = &again->r[i];

		CHECK(a->match.len == b->match.len &&
		      !memcmp(a->match.p, b->match.p, a->match.len) &&
		      a->value.len == b->value.len &&
		      !memcmp(a->value.p, b->value.p, a->value.len) &&
		      a->max_age == b->max_age, "rule %u of \"%s\"", i, s);
	}
	free(s);
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nul = memchr(data, 0, size);
	size_t n = nul ? (size_t)(nul - (const char *)data) : size;
	struct fz_rule model[KWEB_CACHE_RULES_MAX];
	struct kweb_cache_rules *rules = malloc(sizeof(*rules));
	char *text = malloc(n + 1);
	unsigned int nr, i;
	int err, want;

	if (!rules || !text)
		abort();
	memcpy(text, data, n);
	text[n] = '\0';
	memset(rules, 0xa5, sizeof(*rules));
	err = kweb_cache_rules_parse(rules, text);
	want = fz_rules_model(text, model, &nr);
	CHECK(err == want, "\"%s\": %d, model %d", text, err, want);
	if (err) {
		CHECK(err == -EINVAL || err == -E2BIG, "error %d", err);
		CHECK(!rules->nr, "%u rules after an error", rules->nr);
		goto out;
	}
	CHECK(rules->nr == nr && nr <= KWEB_CACHE_RULES_MAX,
	      "\"%s\": %u rules, model %u", text, rules->nr, nr);
	for (i = 0; i < nr; i++) {
		const struct kweb_cache_rule *r = &rules->r[i];
		const struct kweb_str *v = &r->value;
		size_t k;

		CHECK(r->match.p == text + model[i].m_off &&
		      r->match.len == model[i].m_len &&
		      v->p == text + model[i].v_off &&
		      v->len == model[i].v_len, "\"%s\": rule %u's slices",
		      text, i);
		CHECK(r->max_age == model[i].max_age,
		      "\"%s\": rule %u max-age %lld, model %lld", text, i,
		      (long long)r->max_age, (long long)model[i].max_age);
		/* What the response header will hold: one clean line. */
		CHECK(v->len && v->len <= KWEB_CACHE_CONTROL_MAX &&
		      v->p >= text && v->p + v->len <= text + n,
		      "value bounds");
		CHECK(!fz_ows(v->p[0]) && !fz_ows(v->p[v->len - 1]),
		      "value not trimmed");
		for (k = 0; k < v->len; k++)
			CHECK(fz_field_byte(v->p[k]) && v->p[k] != ';',
			      "value byte %#x", (unsigned char)v->p[k]);
		CHECK(r->match.len >= 2 && strchr("/.", r->match.p[0]) &&
		      r->match.p >= text && r->match.p + r->match.len <= text + n,
		      "match");
		CHECK(r->max_age >= -1 && r->max_age <= FZ_DELTA_MAX,
		      "max-age %lld", (long long)r->max_age);
		if (!memchr(v->p, '"', v->len))
			CHECK(fz_naive_max_age(v) == r->max_age,
			      "\"%.*s\": max-age %lld", (int)v->len, v->p,
			      (long long)r->max_age);
	}
	fz_check_roundtrip(rules, n);
	fz_check_matches(rules, nul ? nul + 1 : "", nul ? size - n - 1 : 0);
out:
	free(text);
	free(rules);
	return 0;
}
