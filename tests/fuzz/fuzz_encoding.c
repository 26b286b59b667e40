// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the input is an Accept-Encoding field value (or any
 * bytes). kweb_accept_encoding_mask() (kmod/http_encoding.c) must agree
 * with the reference below, written from RFC 9110 12.5.3 another way
 * (split, trim, then match whole pieces); and the value cut in two at a
 * point the first byte picks, as two field lines, must give what the two
 * pieces joined by a comma give.
 */
#include "check.h"
#include "http_encoding.h"

static bool fz_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* qvalue: 1 above 0, 0 for 0, -1 for anything else. */
static int fz_qvalue(const char *s, size_t n)
{
	static const char *const zero[] = { "0", "0.", "0.0", "0.00",
					     "0.000" };
	static const char *const one[] = { "1", "1.", "1.0", "1.00",
					    "1.000" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(zero); i++)
		if (n == strlen(zero[i]) && !memcmp(s, zero[i], n))
			return 0;
	for (i = 0; i < ARRAY_SIZE(one); i++)
		if (n == strlen(one[i]) && !memcmp(s, one[i], n))
			return 1;
	if (n < 3 || n > 5 || s[0] != '0' || s[1] != '.')
		return -1;
	for (i = 2; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return -1;
	return 1;	/* 0.xyz, not all zeros (those matched above) */
}

static u8 fz_model(const char *v, size_t len)
{
	bool listed[3] = { false }, refused[3] = { false };
	size_t start = 0, end;
	u8 mask = 0;
	int i;

	for (; start <= len; start = end + 1) {
		const char *p = v + start, *semi;
		size_t n, name_len, j;
		int q = 1, idx;

		end = start;
		while (end < len && v[end] != ',')
			end++;
		n = end - start;
		fz_trim(&p, &n);
		if (!n)
			continue;
		semi = memchr(p, ';', n);
		name_len = semi ? (size_t)(semi - p) : n;
		while (name_len && fz_ows(p[name_len - 1]))
			name_len--;
		if (!name_len)
			continue;
		for (j = 0; j < name_len && fz_tchar(p[j]); j++)
			;
		if (j < name_len)
			continue;
		if (semi) {
			const char *r = semi + 1;
			size_t rn = p + n - r;

			while (rn && fz_ows(*r)) {
				r++;
				rn--;
			}
			if (rn < 2 || fz_lower(r[0]) != 'q' || r[1] != '=')
				continue;
			q = fz_qvalue(r + 2, rn - 2);
			if (q < 0)
				continue;
		}
		if (fz_ieq(p, name_len, "br"))
			idx = 0;
		else if (fz_ieq(p, name_len, "gzip") ||
			 fz_ieq(p, name_len, "x-gzip"))
			idx = 1;
		else if (name_len == 1 && p[0] == '*')
			idx = 2;
		else
			continue;
		if (q)
			listed[idx] = true;
		else
			refused[idx] = true;
	}
	for (i = 0; i < 2; i++) {
		bool named = listed[i] || refused[i];

		if (refused[i])
			continue;
		if (listed[i] || (!named && listed[2] && !refused[2]))
			mask |= KWEB_ENC_BIT(i == 0 ? KWEB_ENC_BR : KWEB_ENC_GZIP);
	}
	return mask;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *v = (const char *)data;
	struct kweb_accept_enc a = {}, two = {};
	size_t cut;
	u8 got, want;
	char *joined;

	kweb_accept_encoding_add(&a, v, size);
	got = kweb_accept_encoding_mask(&a);
	want = fz_model(v, size);
	if (got != want) {
		fprintf(stderr, "Accept-Encoding \"%.*s\": mask %#x, model %#x\n",
			(int)size, v, got, want);
		abort();
	}
	if (!size)
		return 0;
	cut = data[0] % size;
	kweb_accept_encoding_add(&two, v, cut);
	kweb_accept_encoding_add(&two, v + cut, size - cut);
	joined = malloc(size + 1);
	if (!joined)
		abort();
	memcpy(joined, v, cut);
	joined[cut] = ',';
	memcpy(joined + cut + 1, v + cut, size - cut);
	want = fz_model(joined, size + 1);
	free(joined);
	if (kweb_accept_encoding_mask(&two) != want) {
		fprintf(stderr, "two lines, cut at %zu of \"%.*s\": %#x, not %#x\n",
			cut, (int)size, v, kweb_accept_encoding_mask(&two),
			want);
		abort();
	}
	if (kweb_encoding_choose(got, KWEB_ENC_ALL) != KWEB_ENC_IDENTITY &&
	    !(got & KWEB_ENC_BIT(kweb_encoding_choose(got, KWEB_ENC_ALL))))
		abort();
	return 0;
}
