// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the input is an error pages text, up to its first NUL.
 * kweb_error_pages_parse() (kmod/http_error_pages.c) must agree with the
 * reference below, written from http_error_pages.h another way (one state
 * machine over the bytes of an entry, duplicates by pairwise comparison);
 * every path it accepts must pass a string-search check of the path rules
 * and come back unchanged from kweb_path_normalize(); its statuses must be
 * unique and 400..599; kweb_error_page() must give, for every status, what
 * a naive scan of the text finds; and the pages written out again must
 * read back the same.
 */
#include "check.h"
#include "http_error_pages.h"

#define FZ_EP_MAX 16
#define FZ_EP_PATH_MAX 255
/* A text with more statuses than 400..599 has repeated one. */
#define FZ_EP_STATUSES 200

struct fz_page {
	unsigned int status;
	size_t off, len;	/* the path, in the text */
};

enum fz_ep_state {
	FZ_EP_CODE,	/* in a status: digits so far in ndig */
	FZ_EP_SLASH,	/* after '=': the path's '/' must come */
	FZ_EP_SEG,	/* in a segment, seg_len bytes so far */
};

static bool fz_ep_byte(unsigned char c)
{
	return isalnum(c) || (c && strchr("-._~!$&'()*+,=:@/", c));
}

/* "", "." and "..": what may not end a segment. */
static bool fz_ep_bad_seg(const char *s, size_t n)
{
	return !n || (n == 1 && s[0] == '.') || (n == 2 && !memcmp(s, "..", 2));
}

/*
 * One entry e[0..n), trimmed: its statuses into st[*nst..], the path's
 * offset in the entry and length; false if malformed.
 */
static bool fz_ep_entry(const char *e, size_t n, unsigned int *st,
			size_t *nst, size_t *poff, size_t *plen)
{
	enum fz_ep_state s = FZ_EP_CODE;
	unsigned int ndig = 0, v = 0;
	size_t i, seg = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = e[i];

		switch (s) {
		case FZ_EP_CODE:
			if (isdigit(c)) {
				if (++ndig > 3)
					return false;
				v = v * 10 + (c - '0');
				break;
			}
			if (c != ',' && c != '=')
				return false;
			if (ndig != 3 || v < 400 || v > 599)
				return false;
			if (*nst == FZ_EP_STATUSES)	/* must be a repeat */
				return false;
			st[(*nst)++] = v;
			ndig = v = 0;
			if (c == '=')
				s = FZ_EP_SLASH;
			break;
		case FZ_EP_SLASH:
			if (c != '/')
				return false;
			*poff = i;
			seg = i + 1;
			s = FZ_EP_SEG;
			break;
		case FZ_EP_SEG:
			if (!fz_ep_byte(c))
				return false;
			if (c == '/') {
				if (fz_ep_bad_seg(e + seg, i - seg))
					return false;
				seg = i + 1;
			}
			break;
		}
	}
	if (s != FZ_EP_SEG || fz_ep_bad_seg(e + seg, n - seg))
		return false;
	*plen = n - *poff;
	return *plen <= FZ_EP_PATH_MAX;
}

/* The pieces between ';', each trimmed, then each entry on its own. */
static int fz_ep_model(const char *t, struct fz_page *out, unsigned int *nr)
{
	unsigned int st[FZ_EP_STATUSES];
	size_t len = strlen(t), start, end, npieces = 1, k, nst = 0, i, j;
	bool bad = false;

	*nr = 0;
	if (!len)
		return 0;
	for (k = 0; k < len; k++)
		npieces += t[k] == ';';
	for (start = 0, k = 0; k < npieces && !bad; k++, start = end + 1) {
		const char *p = t + start;
		size_t n, first = nst, poff = 0, plen = 0;

		for (end = start; end < len && t[end] != ';'; end++)
			;
		n = end - start;
		fz_trim(&p, &n);
		if (!n && k && k == npieces - 1)
			break;
		if (!fz_ep_entry(p, n, st, &nst, &poff, &plen)) {
			bad = true;
			break;
		}
		for (i = first; i < nst; i++) {
			for (j = 0; j < i; j++)
				if (st[j] == st[i])
					bad = true;
			if (i < FZ_EP_MAX) {
				out[i].status = st[i];
				out[i].off = p + poff - t;
				out[i].len = plen;
			}
		}
	}
	if (bad)
		return -EINVAL;
	if (nst > FZ_EP_MAX)
		return -E2BIG;
	*nr = nst;
	return 0;
}

/* The path rules once more, by searching the path as a string. */
static void fz_ep_check_path(const struct kweb_str *path)
{
	char *s = malloc(path->len + 2), *out;
	struct kweb_target t;
	size_t n = path->len, i;
	int err;

	if (!s)
		abort();
	memcpy(s, path->p, n);
	s[n] = '\0';
	CHECK(n >= 2 && n <= FZ_EP_PATH_MAX && s[0] == '/', "path \"%s\"", s);
	/* The set as what it leaves out of the printable ASCII bytes. */
	for (i = 0; i < n; i++)
		CHECK((unsigned char)s[i] > ' ' && (unsigned char)s[i] < 0x7f &&
		      !strchr("\"#%;<>?[\\]^`{|}", s[i]),
		      "path \"%s\": byte %#x", s, (unsigned char)s[i]);
	CHECK(!strstr(s, "//") && !strstr(s, "/./") && !strstr(s, "/../"),
	      "path \"%s\": a bad segment", s);
	CHECK(s[n - 1] != '/' && strcmp(s + n - 2, "/.") &&
	      (n < 3 || strcmp(s + n - 3, "/..")), "path \"%s\": its end", s);
	/* As a request's path, it normalizes to itself. */
	out = malloc(n + 1);
	if (!out)
		abort();
	err = kweb_path_normalize(s, n, out, n + 1, &t);
	CHECK(!err && t.path_len == n && !strcmp(out, s) && !t.has_query &&
	      !t.trailing_slash, "path \"%s\" normalizes to \"%s\" (%d)", s,
	      err ? "" : out, err);
	free(out);
	free(s);
}

/*
 * The page for status by reading the text naively: the entry whose part
 * before '=' has it as one of its ','-separated elements.
 */
static const char *fz_ep_naive(const char *text, unsigned int status,
			       size_t *len)
{
	char want[8];
	const char *p = text, *e, *eq, *c;
	size_t n;

	snprintf(want, sizeof(want), "%u", status);
	for (;; p = e + 1) {
		e = strchr(p, ';');
		if (!e)
			e = p + strlen(p);
		n = e - p;
		fz_trim(&p, &n);
		eq = memchr(p, '=', n);
		for (c = p; eq && c < eq; c += strcspn(c, ",=") + 1)
			if (strcspn(c, ",=") == strlen(want) &&
			    !memcmp(c, want, strlen(want))) {
				*len = p + n - eq - 1;
				return eq + 1;
			}
		if (!*e)
			return NULL;
	}
}

/* Written out again, the pages read back the same. */
static void fz_ep_roundtrip(const struct kweb_error_pages *pages)
{
	struct kweb_error_pages *again = malloc(sizeof(*again));
	char *s = malloc(pages->nr * (FZ_EP_PATH_MAX + 8) + 1), *o = s;
	unsigned int i;

	if (!again || !s)
		abort();
	for (i = 0; i < pages->nr; i++)
		o += sprintf(o, "%s%u=%.*s", i ? ";" : "",
			     pages->p[i].status, (int)pages->p[i].path.len,
			     pages->p[i].path.p);
	*o = '\0';
	CHECK(!kweb_error_pages_parse(again, s), "\"%s\" refused", s);
	CHECK(again->nr == pages->nr, "\"%s\": %u pages, not %u", s,
	      again->nr, pages->nr);
	for (i = 0; i < pages->nr; i++)
		CHECK(again->p[i].status == pages->p[i].status &&
		      again->p[i].path.len == pages->p[i].path.len &&
		      !memcmp(again->p[i].path.p, pages->p[i].path.p,
			      pages->p[i].path.len), "page %u of \"%s\"", i, s);
	free(s);
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nul = memchr(data, 0, size);
	size_t n = nul ? (size_t)(nul - (const char *)data) : size, len;
	struct fz_page model[FZ_EP_MAX];
	struct kweb_error_pages *pages = malloc(sizeof(*pages));
	char *text = malloc(n + 1);
	const struct kweb_str *got;
	const char *want;
	unsigned int nr, i, j, s;
	int err, merr;

	if (!pages || !text)
		abort();
	memcpy(text, data, n);
	text[n] = '\0';
	memset(pages, 0xa5, sizeof(*pages));
	err = kweb_error_pages_parse(pages, text);
	merr = fz_ep_model(text, model, &nr);
	CHECK(err == merr, "\"%s\": %d, model %d", text, err, merr);
	CHECK(!kweb_error_page(NULL, 404), "NULL pages");
	if (err) {
		CHECK(err == -EINVAL || err == -E2BIG, "error %d", err);
		CHECK(!pages->nr, "%u pages after an error", pages->nr);
		for (s = 0; s <= 600; s++)
			CHECK(!kweb_error_page(pages, s), "%u after an error",
			      s);
		goto out;
	}
	CHECK(pages->nr == nr && nr <= KWEB_ERROR_PAGES_MAX,
	      "\"%s\": %u pages, model %u", text, pages->nr, nr);
	for (i = 0; i < nr; i++) {
		const struct kweb_error_page *p = &pages->p[i];

		CHECK(p->status == model[i].status &&
		      p->path.p == text + model[i].off &&
		      p->path.len == model[i].len, "\"%s\": page %u", text, i);
		CHECK(p->status >= 400 && p->status <= 599, "status %u",
		      p->status);
		for (j = 0; j < i; j++)
			CHECK(pages->p[j].status != p->status, "%u twice",
			      p->status);
		CHECK(p->path.p > text && p->path.p + p->path.len <= text + n,
		      "path bounds");
		fz_ep_check_path(&p->path);
	}
	for (s = 0; s <= 65535; s += s < 700 ? 1 : 997) {
		got = kweb_error_page(pages, s);
		want = s >= 400 && s <= 599 ? fz_ep_naive(text, s, &len) : NULL;
		CHECK(!got == !want, "\"%s\": status %u: %s, naive %s", text,
		      s, got ? "a page" : "none", want ? "a page" : "none");
		if (got)
			CHECK(got->p == want && got->len == len &&
			      got >= &pages->p[0].path &&
			      got <= &pages->p[nr - 1].path,
			      "\"%s\": status %u: \"%.*s\", naive \"%.*s\"",
			      text, s, (int)got->len, got->p, (int)len, want);
	}
	fz_ep_roundtrip(pages);
out:
	free(text);
	free(pages);
	return 0;
}
