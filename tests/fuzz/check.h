/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Invariants and small reference models shared by the libFuzzer targets in
 * this directory. Each check_*() runs one of kweb's pure-logic functions
 * (built from kmod/ itself) on fuzzer input and abort()s with a message
 * when something holds that must not: an answer that differs from an
 * independent model written from the header comments and
 * docs/behaviour.md, a result that changes when it cannot, a path that
 * escapes, a response header that is not well formed.
 */
#ifndef KWEB_FUZZ_CHECK_H
#define KWEB_FUZZ_CHECK_H

#include <ctype.h>
#include <stdlib.h>
#include <strings.h>

#include "http_cond.h"
#include "http_date.h"
#include "http_parse.h"
#include "http_path.h"
#include "http_range.h"
#include "http_route.h"
#include "mime.h"
#include "response.h"

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: invariant failed: %s: ",\
				__FILE__, __LINE__, #cond);		\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			abort();					\
		}							\
	} while (0)

/* What kmod/request.c hands kweb_path_normalize(): PATH_MAX - "index.html". */
#define FZ_KERNEL_PATH_OUT (4096 - sizeof("index.html"))
/* kmod/request.c formats headers into half of KWEB_HDR_MAX (kweb.h). */
#define FZ_HDR_OUT (2048 / 2)

static inline char fz_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static inline bool fz_ieq(const char *p, size_t len, const char *lc)
{
	return strlen(lc) == len &&
	       !strncasecmp(p, lc, len);
}

static inline bool fz_ows(char c)
{
	return c == ' ' || c == '\t';
}

static inline void fz_trim(const char **p, size_t *len)
{
	while (*len && fz_ows((*p)[*len - 1]))
		(*len)--;
	while (*len && fz_ows(**p)) {
		(*p)++;
		(*len)--;
	}
}

static inline bool fz_contains(const char *h, size_t hl, const char *n,
			       size_t nl)
{
	size_t i;

	if (!nl)
		return true;
	for (i = 0; i + nl <= hl; i++)
		if (!memcmp(h + i, n, nl))
			return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* Paths: a reference normalizer, written as a segment stack. */

#define FZ_MAX_SEGS 16384

struct fz_path_ref {
	int err;		/* 0 or -EINVAL */
	bool early;		/* refused before any output is written */
	size_t peak;		/* most bytes out held (without the NUL) */
	char *out;		/* the normalized path, malloc'd, on success */
	size_t out_len;
	size_t raw_off, raw_len, query_off, query_len;
	bool has_query;
};

static inline int fz_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = fz_lower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A segment kweb holds back: "", "." or "..". */
static inline bool fz_dots_only(const char *s, size_t n)
{
	return n == 0 || (n == 1 && s[0] == '.') ||
	       (n == 2 && s[0] == '.' && s[1] == '.');
}

/*
 * The contract of kweb_path_normalize() from http_path.h and
 * docs/behaviour.md, computed without its single-pass trick: decode into
 * a list of segments, resolve "." and ".." on a stack, then join. peak is
 * what the single pass needs in out at most: every plain segment and the
 * '/' after it are written as soon as they are read.
 */
static inline void fz_path_model(const char *t, size_t len,
				 struct fz_path_ref *r)
{
	size_t i, p, q, seg_start = 0, cur_len = 0, total, nseg = 0;
	static size_t seg_off[FZ_MAX_SEGS], seg_len[FZ_MAX_SEGS];
	char *dec;
	size_t dl = 0;

	memset(r, 0, sizeof(*r));
	r->err = -EINVAL;
	r->early = true;
	if (!len || memchr(t, '#', len))
		return;
	if (t[0] == '/') {
		p = 0;
	} else {
		if (len >= 7 && !strncasecmp(t, "http://", 7))
			p = 7;
		else if (len >= 8 && !strncasecmp(t, "https://", 8))
			p = 8;
		else
			return;
		i = p;
		while (p < len && t[p] != '/' && t[p] != '?')
			p++;
		if (p == i || memchr(t + i, '@', p - i))
			return;
	}
	q = p;
	while (q < len && t[q] != '?')
		q++;
	r->raw_off = p;
	r->raw_len = q - p;
	if (q < len) {
		r->has_query = true;
		r->query_off = q + 1;
		r->query_len = len - q - 1;
	}
	r->early = false;

	/* decoded bytes; segments are slices of it */
	dec = malloc(q - p + 1);
	if (!dec)
		abort();
	total = 1;	/* the leading '/' */
	r->peak = 1;
	for (i = p; i <= q; i++) {
		char c;
		bool end = i == q;

		if (!end) {
			c = t[i];
			if (c == '%') {
				if (q - i < 3 || fz_hex(t[i + 1]) < 0 ||
				    fz_hex(t[i + 2]) < 0)
					goto fail;
				c = (char)(fz_hex(t[i + 1]) << 4 |
					   fz_hex(t[i + 2]));
				i += 2;
			}
			if ((unsigned char)c < 0x20 || c == 0x7f)
				goto fail;
			if (c != '/') {
				dec[dl++] = c;
				cur_len++;
				if (!fz_dots_only(dec + seg_start, cur_len)) {
					size_t now = total + cur_len;

					if (now > r->peak)
						r->peak = now;
				}
				continue;
			}
		}
		/* a segment ends, with a '/' unless end */
		if (!fz_dots_only(dec + seg_start, cur_len)) {
			if (nseg == FZ_MAX_SEGS)
				abort();
			seg_off[nseg] = seg_start;
			seg_len[nseg++] = cur_len;
			total += cur_len + !end;
			if (total > r->peak)
				r->peak = total;
		} else if (cur_len == 2) {
			if (!nseg)
				goto fail;
			nseg--;
			total -= seg_len[nseg] + 1;
		}
		if (end) {
			/* a trailing '/' unless the last segment was plain */
			bool slash = fz_dots_only(dec + seg_start, cur_len);
			size_t k, o = 0;

			r->out = malloc(dl + nseg + 2);
			if (!r->out)
				abort();
			r->out[o++] = '/';
			for (k = 0; k < nseg; k++) {
				memcpy(r->out + o, dec + seg_off[k],
				       seg_len[k]);
				o += seg_len[k];
				if (k + 1 < nseg || slash)
					r->out[o++] = '/';
			}
			r->out[o] = '\0';
			r->out_len = o;
			r->err = 0;
			break;
		}
		seg_start = dl;
		cur_len = 0;
	}
fail:
	free(dec);
}

/* What kweb_path_normalize() must return for an out of outsz bytes. */
static inline int fz_path_expect(const struct fz_path_ref *r, size_t outsz)
{
	if (r->early)
		return r->err;
	if (outsz < 2 || r->peak >= outsz)
		return -ENAMETOOLONG;
	return r->err;
}

/* The properties a normalized path has whatever the model says. */
static inline void fz_path_props(const char *out, const struct kweb_target *t,
				 size_t outsz)
{
	size_t n = strlen(out), i;

	CHECK(n == t->path_len, "strlen %zu path_len %u", n, t->path_len);
	CHECK(n + 1 <= outsz, "path_len %zu outsz %zu", n, outsz);
	CHECK(out[0] == '/', "'%s'", out);
	CHECK(t->trailing_slash == (out[n - 1] == '/'), "'%s'", out);
	CHECK(!strstr(out, "//") && !strstr(out, "/./") &&
	      !strstr(out, "/../"), "'%s'", out);
	CHECK(!(n >= 2 && !strcmp(out + n - 2, "/.")) &&
	      !(n >= 3 && !strcmp(out + n - 3, "/..")), "'%s'", out);
	for (i = 0; i < n; i++)
		CHECK((unsigned char)out[i] >= 0x20 && out[i] != 0x7f,
		      "control byte %#x at %zu", out[i], i);
}

static inline int fz_check_one_path(const char *target, size_t len,
				    const struct fz_path_ref *ref, char *out,
				    size_t outsz, struct kweb_target *t)
{
	int err = kweb_path_normalize(target, len, out, outsz, t);
	int want = fz_path_expect(ref, outsz);

	CHECK(err == want, "outsz %zu: kweb %d, model %d (peak %zu)", outsz,
	      err, want, ref->peak);
	if (err)
		return err;
	fz_path_props(out, t, outsz);
	CHECK(t->path_len == ref->out_len && !memcmp(out, ref->out,
						     ref->out_len),
	      "kweb '%s', model '%s'", out, ref->out);
	CHECK(t->raw_path.p == target + ref->raw_off &&
	      t->raw_path.len == ref->raw_len, "raw_path");
	CHECK(t->has_query == ref->has_query, "has_query");
	if (ref->has_query)
		CHECK(t->query.p == target + ref->query_off &&
		      t->query.len == ref->query_len, "query");
	return 0;
}

/*
 * The 301 Location of a path without a trailing slash is that path,
 * percent-encoded, plus '/', and normalizes back to exactly that. A
 * buffer too small for it all is -ENOSPC.
 */
static inline long long check_resp_header(const char *b, size_t n,
					  u16 status);

static inline void fz_check_location(const char *path, size_t n)
{
	struct kweb_resp_hdr h = {
		.status = 301, .date = "Sun, 06 Nov 1994 08:49:37 GMT",
		.location = { path, (u32)n },
	};
	char *buf, *v, *e, out[FZ_KERNEL_PATH_OUT + 2];
	size_t size = 3 * n + 256, i;
	struct kweb_target t;
	int len, k;

	buf = malloc(size);
	if (!buf)
		abort();
	len = kweb_resp_format(buf, size, &h);
	CHECK(len > 0 && (size_t)len == strlen(buf), "kweb_resp_format %d",
	      len);
	check_resp_header(buf, len, 301);
	v = strstr(buf, "\r\nLocation: ");
	CHECK(v, "no Location");
	v += strlen("\r\nLocation: ");
	e = strstr(v, "\r\n");
	CHECK(e && e > v && e[-1] == '/', "Location ends");
	for (i = 0; v + i < e; i++)
		CHECK((v[i] && strchr("-._~!$&'()*+,;=:@/%", v[i])) ||
		      (v[i] >= '0' && v[i] <= '9') ||
		      (fz_lower(v[i]) >= 'a' && fz_lower(v[i]) <= 'z'),
		      "Location byte %#x", (unsigned char)v[i]);
	/* "//host" would be another host */
	CHECK(v[0] == '/' && v[1] != '/', "Location '%.*s'", (int)(e - v), v);
	if ((size_t)(e - v) < FZ_KERNEL_PATH_OUT) {
		CHECK(!kweb_path_normalize(v, e - v, out, sizeof(out), &t),
		      "Location '%.*s' does not normalize", (int)(e - v), v);
		CHECK(!t.has_query, "Location has a query");
		CHECK(t.path_len == n + 1 && !memcmp(out, path, n) &&
		      out[n] == '/', "'%s' -> '%s'", path, out);
	}
	free(buf);

	/* exactly len + 1 bytes fit (the NUL); fewer never do */
	for (k = 0; k < 3; k++) {
		size_t sz = k == 0 ? (size_t)len + 1 : k == 1 ? (size_t)len :
			    (size_t)len / 2;
		int r;

		buf = malloc(sz ? sz : 1);
		if (!buf)
			abort();
		r = kweb_resp_format(buf, sz, &h);
		CHECK(k == 0 ? r == len : r == -ENOSPC, "size %zu: %d", sz, r);
		free(buf);
	}

}

/*
 * Normalize target with the kernel's out size and a few others, each
 * against the model. out gets the kernel-sized result; returns its error.
 */
static inline int check_path(const char *target, size_t len,
			     size_t extra_outsz, char out[FZ_KERNEL_PATH_OUT],
			     struct kweb_target *t)
{
	struct fz_path_ref ref;
	size_t sizes[8], k, nsizes = 0;
	struct kweb_target t2;
	char *o2;
	int err;

	fz_path_model(target, len, &ref);
	sizes[nsizes++] = 0;
	sizes[nsizes++] = 1;
	sizes[nsizes++] = 2;
	sizes[nsizes++] = ref.peak;
	sizes[nsizes++] = ref.peak + 1;
	sizes[nsizes++] = len + 2;	/* always enough */
	sizes[nsizes++] = extra_outsz;
	o2 = malloc((len + 2 > extra_outsz ? len + 2 : extra_outsz) + 1);
	if (!o2)
		abort();
	for (k = 0; k < nsizes; k++)
		fz_check_one_path(target, len, &ref, o2, sizes[k], &t2);
	CHECK(fz_path_expect(&ref, len + 2) != -ENAMETOOLONG, "len + 2");
	free(o2);

	err = fz_check_one_path(target, len, &ref, out, FZ_KERNEL_PATH_OUT, t);
	/* kweb redirects a directory named without its trailing slash */
	if (!err && !t->trailing_slash)
		fz_check_location(out, t->path_len);
	free(ref.out);
	return err;
}

/* ------------------------------------------------------------------ */
/* Ranges: a reference for kweb_range_parse(). */

/* 1*DIGIT exactly, into a u64; false when empty, not digits or too big. */
static inline bool fz_digits(const char *s, size_t n, u64 *out)
{
	unsigned __int128 v = 0;
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
		if (v > UINT64_MAX)
			return false;
	}
	*out = (u64)v;
	return true;
}

/*
 * http_range.h and RFC 9110 14.1: "bytes" (any case) "=" 1#range-spec with
 * no OWS after "=", exactly one non-empty element, a-b / a- / -n; a
 * number that does not fit in 64 bits is bad syntax. An empty file is
 * sent whole for a range from its start.
 */
static inline enum kweb_range_result fz_range_model(const char *v, size_t len,
						    u64 size, u64 *first,
						    u64 *last)
{
	const char *el = NULL, *dash;
	size_t i, s, n_el = 0, el_len = 0;
	u64 a, b;

	fz_trim(&v, &len);
	if (len < 6 || strncasecmp(v, "bytes=", 6))
		return KWEB_RANGE_NONE;
	v += 6;
	len -= 6;
	if (len && fz_ows(v[0]))
		return KWEB_RANGE_NONE;
	for (s = 0, i = 0; i <= len; i++) {
		if (i < len && v[i] != ',')
			continue;
		{
			const char *e = v + s;
			size_t el_n = i - s;

			fz_trim(&e, &el_n);
			if (el_n) {
				n_el++;
				el = e;
				el_len = el_n;
			}
		}
		s = i + 1;
	}
	if (n_el != 1)
		return KWEB_RANGE_NONE;
	dash = memchr(el, '-', el_len);
	if (!dash)
		return KWEB_RANGE_NONE;
	if (dash == el) {
		if (!fz_digits(el + 1, el_len - 1, &b))
			return KWEB_RANGE_NONE;
		if (!size)	/* an empty file is sent whole */
			return KWEB_RANGE_NONE;
		if (!b)
			return KWEB_RANGE_UNSATISFIABLE;
		*first = b >= size ? 0 : size - b;
		*last = size - 1;
		return KWEB_RANGE_OK;
	}
	if (!fz_digits(el, dash - el, &a))
		return KWEB_RANGE_NONE;
	if (dash + 1 == el + el_len) {
		b = UINT64_MAX;
	} else {
		if (!fz_digits(dash + 1, el + el_len - dash - 1, &b))
			return KWEB_RANGE_NONE;
		if (b < a)
			return KWEB_RANGE_NONE;
	}
	if (!size && !a)
		return KWEB_RANGE_NONE;
	if (a >= size)
		return KWEB_RANGE_UNSATISFIABLE;
	*first = a;
	*last = b < size - 1 ? b : size - 1;
	return KWEB_RANGE_OK;
}

static inline void check_range(const char *v, size_t len, u64 size)
{
	u64 f = 0xdead, l = 0xbeef, mf = 0, ml = 0;
	enum kweb_range_result r = kweb_range_parse(v, len, size, &f, &l);
	enum kweb_range_result m = fz_range_model(v, len, size, &mf, &ml);

	CHECK(r == m, "size %llu: kweb %d, model %d", (unsigned long long)size,
	      r, m);
	if (r != KWEB_RANGE_OK)
		return;
	CHECK(f <= l && l < size, "%llu-%llu/%llu", (unsigned long long)f,
	      (unsigned long long)l, (unsigned long long)size);
	CHECK(f == mf && l == ml, "kweb %llu-%llu, model %llu-%llu",
	      (unsigned long long)f, (unsigned long long)l,
	      (unsigned long long)mf, (unsigned long long)ml);
}

/* ------------------------------------------------------------------ */
/* Dates */

#define FZ_DATE_MAX 253402300799LL

static inline void check_date_format(s64 t)
{
	char out[KWEB_HTTP_DATE_LEN + 2];
	s64 back = -1, want = t < 0 ? 0 : t > FZ_DATE_MAX ? FZ_DATE_MAX : t;

	out[KWEB_HTTP_DATE_LEN + 1] = 'X';
	kweb_http_date_format(t, out);
	CHECK(strlen(out) == KWEB_HTTP_DATE_LEN && out[KWEB_HTTP_DATE_LEN + 1] == 'X',
	      "format %lld: '%s'", (long long)t, out);
	CHECK(!kweb_http_date_parse(out, KWEB_HTTP_DATE_LEN, &back) &&
	      back == want, "format %lld '%s' parses as %lld", (long long)t,
	      out, (long long)back);
}

/* Parse v; returns 0 and *t as kweb_http_date_parse() does. */
static inline int check_date(const char *v, size_t len, s64 *tp)
{
	char out[KWEB_HTTP_DATE_LEN + 1];
	s64 t = 0x5a5a;
	int err = kweb_http_date_parse(v, len, &t);

	CHECK(err == 0 || err == -EINVAL, "err %d", err);
	if (err)
		return err;
	/* IMF-fixdate, asctime, RFC 850 with a 6..9 letter day */
	CHECK(len == 29 || len == 24 || (len >= 30 && len <= 33),
	      "len %zu", len);
	if (t >= 0 && t <= FZ_DATE_MAX) {
		check_date_format(t);
		/* IMF-fixdate is canonical but for the weekday and :60 */
		kweb_http_date_format(t, out);
		if (len == 29 && v[3] == ',' && memcmp(v + 23, "60", 2))
			CHECK(!memcmp(v + 3, out + 3, 26),
			      "'%.*s' is %lld, formatted '%s'", (int)len, v,
			      (long long)t, out);
	}
	if (tp)
		*tp = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Conditionals */

/*
 * If-None-Match, If-Modified-Since and If-Range values against validators
 * derived from them, so that matches happen.
 */
static inline void check_cond(const char *v, size_t len, s64 mtime, u64 size)
{
	char etag[KWEB_ETAG_MAX + 1], want[64], wetag[KWEB_ETAG_MAX + 3];
	const char *tv = v;
	size_t tl = len;
	int n;
	s64 t;
	bool m;

	n = kweb_etag_format(etag, mtime, size);
	snprintf(want, sizeof(want), "\"%llx-%llx\"",
		 (unsigned long long)(mtime < 0 ? 0 : mtime),
		 (unsigned long long)size);
	CHECK(n > 0 && n <= KWEB_ETAG_MAX && (size_t)n == strlen(etag) &&
	      !strcmp(etag, want), "etag '%s', want '%s'", etag, want);
	snprintf(wetag, sizeof(wetag), "W/%s", etag);

	fz_trim(&tv, &tl);

	/* If-None-Match: weak comparison, so W/ on our side changes nothing */
	m = kweb_if_none_match(v, len, etag, n);
	CHECK(m == kweb_if_none_match(v, len, wetag, n + 2), "W/ changes INM");
	if (m)
		CHECK((tl == 1 && tv[0] == '*') ||
		      fz_contains(v, len, etag, n), "INM matched without the tag");
	CHECK(kweb_if_none_match(etag, n, etag, n), "own tag");
	CHECK(kweb_if_none_match(wetag, n + 2, etag, n), "own weak tag");

	/* If-Range: a strong tag equal to ours, or exactly mtime */
	if (kweb_if_range(v, len, etag, n, mtime))
		CHECK((tl == (size_t)n && !memcmp(tv, etag, n)) ||
		      (!kweb_http_date_parse(tv, tl, &t) && t == mtime),
		      "If-Range matched");
	CHECK(!kweb_if_range(v, len, wetag, n + 2, mtime) ||
	      (!kweb_http_date_parse(tv, tl, &t) && t == mtime),
	      "If-Range with a weak tag of ours");
	CHECK(kweb_if_range(etag, n, etag, n, mtime), "own tag");

	/* A valid date: modified since any later time, not since earlier */
	if (!kweb_http_date_parse(tv, tl, &t)) {
		CHECK(kweb_not_modified_since(v, len, t), "IMS same");
		CHECK(kweb_not_modified_since(v, len, t - 1), "IMS older");
		CHECK(!kweb_not_modified_since(v, len, t + 1), "IMS newer");
		CHECK(kweb_if_range(v, len, etag, n, t), "If-Range date");
		CHECK(!kweb_if_range(v, len, etag, n, t + 1),
		      "If-Range date + 1");
	} else {
		CHECK(!kweb_not_modified_since(v, len, mtime), "IMS invalid");
	}
}

/* ------------------------------------------------------------------ */
/* MIME */

static inline const char *check_mime(const char *path, size_t len)
{
	const char *type = kweb_mime_type(path, len), *base;
	char *low;
	size_t i;

	CHECK(type && *type && !strpbrk(type, "\r\n"), "type");
	low = malloc(len + 1);
	if (!low)
		abort();
	for (i = 0; i < len; i++)
		low[i] = fz_lower(path[i]);
	CHECK(!strcmp(type, kweb_mime_type(low, len)), "case changes type");
	free(low);
	/* no '.' after the first byte of the last segment: no extension */
	for (base = path + len; base > path && base[-1] != '/'; base--)
		;
	if (path + len - base < 2 ||
	    !memchr(base + 1, '.', path + len - base - 1))
		CHECK(!strcmp(type, "application/octet-stream"),
		      "'%.*s' has no extension but type %s", (int)len, path,
		      type);
	return type;
}

/* ------------------------------------------------------------------ */
/* Routing */

/* What kweb_route_target() must say, from http_route.h. */
static inline void check_route_target(const struct kweb_route_rules *rules,
				      const struct kweb_target *t,
				      const char *path)
{
	enum kweb_route r = kweb_route_target(rules, t, path), want;
	size_t len = t->path_len, blen;
	const char *base = strrchr(path, '/') + 1;
	unsigned int i;

	blen = path + len - base;
	want = KWEB_ROUTE_SERVE;
	if (t->has_query) {
		want = KWEB_ROUTE_QUERY;
		goto out;
	}
	for (i = 0; i < rules->nr_prefix; i++)
		if (len >= rules->prefix[i].len &&
		    !strncmp(path, rules->prefix[i].p, rules->prefix[i].len)) {
			want = KWEB_ROUTE_PREFIX;
			goto out;
		}
	for (i = 0; i < rules->nr_ext; i++)
		if (blen >= rules->ext[i].len &&
		    !strncasecmp(base + blen - rules->ext[i].len,
				 rules->ext[i].p, rules->ext[i].len)) {
			want = KWEB_ROUTE_EXTENSION;
			goto out;
		}
out:
	CHECK(r == want, "route '%s': kweb %d, want %d", path, r, want);
}

/* ------------------------------------------------------------------ */
/* Response headers */

/*
 * A response header as kweb_resp_format() wrote it: a status line, then
 * field lines "Name: value" each ending in CRLF, a blank line, nothing
 * else; no NUL, no bare CR or LF, no field twice. Returns the value of
 * Content-Length or -1.
 */
static inline long long check_resp_header(const char *b, size_t n, u16 status)
{
	char line[32];
	const char *p = b, *e, *end = b + n;
	long long cl = -1;
	size_t k, nf = 0;
	const char *names[32];
	size_t nlen[32];

	CHECK(memchr(b, 0, n) == NULL, "NUL in header");
	snprintf(line, sizeof(line), "HTTP/1.1 %03u ", status);
	CHECK(n > strlen(line) && !memcmp(b, line, strlen(line)),
	      "status line '%.20s'", b);
	CHECK(n >= 4 && !memcmp(end - 4, "\r\n\r\n", 4), "header end");
	for (k = 0; k < n; k++) {
		if (b[k] == '\r')
			CHECK(k + 1 < n && b[k + 1] == '\n', "bare CR at %zu", k);
		if (b[k] == '\n')
			CHECK(k && b[k - 1] == '\r', "bare LF at %zu", k);
	}
	p = memchr(b, '\n', n) + 1;
	while (p < end - 2) {
		const char *colon;

		e = memchr(p, '\r', end - p);
		CHECK(e, "line end");
		colon = memchr(p, ':', e - p);
		CHECK(colon && colon > p && colon[1] == ' ', "field '%.*s'",
		      (int)(e - p), p);
		for (k = 0; k < nf; k++)
			CHECK(!(nlen[k] == (size_t)(colon - p) &&
				!strncasecmp(names[k], p, nlen[k])),
			      "field twice: '%.*s'", (int)(e - p), p);
		CHECK(nf < 32, "fields");
		names[nf] = p;
		nlen[nf++] = colon - p;
		if (fz_ieq(p, colon - p, "content-length")) {
			u64 v;

			CHECK(fz_digits(colon + 2, e - colon - 2, &v),
			      "Content-Length '%.*s'", (int)(e - p), p);
			cl = (long long)v;
		}
		p = e + 2;
	}
	CHECK(p == end - 2, "blank line");
	return cl;
}

/* The error response kweb sends for status: header, then body. */
static inline void check_error_response(u16 status, bool close)
{
	char body[FZ_HDR_OUT], hdr[FZ_HDR_OUT];
	struct kweb_resp_hdr h = {
		.status = status, .date = "Sun, 06 Nov 1994 08:49:37 GMT",
		.close = close, .content_type = "text/html", .has_length = true,
	};
	int bl = kweb_error_body(body, sizeof(body), status), hl;
	char want[64];

	CHECK(bl > 0 && (size_t)bl == strlen(body), "error body %d", bl);
	CHECK(strcmp(kweb_status_reason(status), "Unknown"),
	      "no reason for %u", status);
	snprintf(want, sizeof(want), "<title>%u %s</title>", status,
		 kweb_status_reason(status));
	CHECK(strstr(body, want), "error body for %u", status);
	h.length = bl;
	hl = kweb_resp_format(hdr, sizeof(hdr), &h);
	CHECK(hl > 0, "error header %d", hl);
	CHECK(check_resp_header(hdr, hl, status) == bl, "error Content-Length");
}

#endif /* KWEB_FUZZ_CHECK_H */
