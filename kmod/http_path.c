// SPDX-License-Identifier: GPL-2.0
/*
 * Request-target to file path.
 *
 * Decoding and normalizing happen in one pass, and a decoded '/' (%2F)
 * separates segments just like a literal one, as in nginx: otherwise
 * "%2e%2e%2f" could smuggle a ".." past the normalizer. Segments made only
 * of one or two dots are held back instead of being written, so they are
 * recognized however they were spelled ("." "%2e" "%2E") and never take
 * room in out.
 */
#include "http_path.h"
#include "http_token.h"

struct kweb_pt {
	char *out;
	size_t size;
	size_t o;		/* bytes written to out */
	size_t seg;		/* where the current segment starts in out */
	unsigned int dots;	/* leading dots held back, at most 2 */
	bool plain;		/* the segment is more than held-back dots */
};

static int kweb_pt_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Keep one byte, leaving room for the NUL. */
static int kweb_pt_emit(struct kweb_pt *n, char c)
{
	if (n->o + 1 >= n->size)
		return -ENAMETOOLONG;
	n->out[n->o++] = c;
	return 0;
}

/* The current segment ended, with a '/' if slash. */
static int kweb_pt_end_segment(struct kweb_pt *n, bool slash)
{
	int err = 0;

	if (n->plain) {
		if (slash)
			err = kweb_pt_emit(n, '/');
	} else if (n->dots == 2) {
		/* out[seg - 1] is the '/' that ends the parent segment. */
		if (n->seg == 1)
			return -EINVAL;
		n->o = n->seg - 1;
		while (n->out[n->o - 1] != '/')
			n->o--;
	}
	/* An empty or "." segment adds nothing: out already ends in '/'. */
	n->seg = n->o;
	n->dots = 0;
	n->plain = false;
	return err;
}

static int kweb_pt_put(struct kweb_pt *n, char c)
{
	int err;

	if (c == '/')
		return kweb_pt_end_segment(n, true);
	if (!n->plain) {
		if (c == '.' && n->dots < 2) {
			n->dots++;
			return 0;
		}
		n->plain = true;
		for (; n->dots; n->dots--) {
			err = kweb_pt_emit(n, '.');
			if (err)
				return err;
		}
	}
	return kweb_pt_emit(n, c);
}

static bool kweb_pt_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* The first '?' or '#' of target, or len: eight bytes at a time. */
static size_t kweb_pt_split(const char *target, size_t len)
{
	size_t i = 0;

	while (len - i >= sizeof(u64)) {
		u64 w = kweb_word_load(target + i);

		if (kweb_word_has(w, '?') || kweb_word_has(w, '#'))
			break;
		i += sizeof(u64);
	}
	while (i < len && target[i] != '?' && target[i] != '#')
		i++;
	return i;
}

int kweb_path_normalize(const char *target, size_t len, char *out,
			size_t outsz, struct kweb_target *t)
{
	struct kweb_pt n = { .out = out, .size = outsz };
	size_t i, p, q;
	int err;

	memset(t, 0, sizeof(*t));
	if (!len)
		return -EINVAL;
	/*
	 * A fragment is never sent (RFC 9110 7.1); one here is bogus,
	 * before the query or inside it.
	 */
	q = kweb_pt_split(target, len);
	if (q < len && (target[q] == '#' ||
			memchr(target + q + 1, '#', len - q - 1)))
		return -EINVAL;

	if (target[0] == '/') {
		p = 0;
	} else {
		/* absolute-form: skip scheme and authority (RFC 9112 3.2.2) */
		if (kweb_http_iprefix(target, len, "http://"))
			p = 7;
		else if (kweb_http_iprefix(target, len, "https://"))
			p = 8;
		else
			return -EINVAL;
		i = p;
		while (p < len && target[p] != '/' && target[p] != '?') {
			/* userinfo is deprecated and a phishing trick */
			if (target[p] == '@')
				return -EINVAL;
			p++;
		}
		if (p == i)
			return -EINVAL;
		/* It wins over Host (RFC 9112 3.2.2): virtual hosts need it. */
		t->authority.p = target + i;
		t->authority.len = (u32)(p - i);
	}

	t->raw_path.p = target + p;
	t->raw_path.len = (u32)(q - p);
	if (q < len) {
		t->has_query = true;
		t->query.p = target + q + 1;
		t->query.len = (u32)(len - q - 1);
	}

	if (outsz < 2)
		return -ENAMETOOLONG;
	out[0] = '/';
	n.o = 1;
	n.seg = 1;
	for (i = p; i < q; i++) {
		char c = target[i];

		/*
		 * Most bytes: a run within a segment, copied as it is. A
		 * segment that starts with one is plain from there; one that
		 * starts with a dot may still be "." or "..".
		 */
		if (kweb_http_is(c, KWEB_CT_PATH) &&
		    (n.plain || (c != '.' && !n.dots))) {
			size_t e = i + 1;

			while (e < q && kweb_http_is(target[e], KWEB_CT_PATH))
				e++;
			if (n.o + (e - i) >= n.size)
				return -ENAMETOOLONG;
			kweb_copy_short(out + n.o, target + i, e - i);
			n.o += e - i;
			n.plain = true;
			i = e - 1;
			continue;
		}
		/* The end of a plain segment: kweb_pt_end_segment(), inline. */
		if (c == '/' && n.plain && n.o + 1 < n.size) {
			out[n.o++] = '/';
			n.seg = n.o;
			n.plain = false;
			continue;
		}
		if (c == '%') {
			int hi, lo;

			if (q - i < 3)
				return -EINVAL;
			hi = kweb_pt_hex(target[i + 1]);
			lo = kweb_pt_hex(target[i + 2]);
			if (hi < 0 || lo < 0)
				return -EINVAL;
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (kweb_pt_ctl(c))
			return -EINVAL;
		err = kweb_pt_put(&n, c);
		if (err)
			return err;
	}
	err = kweb_pt_end_segment(&n, false);
	if (err)
		return err;

	out[n.o] = '\0';
	t->path_len = (u32)n.o;
	t->trailing_slash = out[n.o - 1] == '/';
	return 0;
}
