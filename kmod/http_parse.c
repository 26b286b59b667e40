// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP/1.x request head parser (RFC 9110, RFC 9112).
 *
 * The parser keeps no state between calls: the caller hands it everything
 * received so far and it starts again from the first byte. A head is a few
 * hundred bytes, so scanning it again costs less than the bookkeeping of a
 * resumable parser, and one pass over the bytes is easier to get right.
 *
 * Every byte is checked as soon as it is seen, so a prefix that can never
 * become a valid head is an error at once; the meaning of a field value
 * (Content-Length digits, Transfer-Encoding codings, ...) is checked as
 * soon as its line ends.
 */
#include "http_host.h"
#include "http_parse.h"
#include "http_token.h"

/* Internal result of the helpers below: carry on, or wait for more bytes. */
#define KWEB_HP_DONE		0
#define KWEB_HP_MORE		1
/* kweb_hp_eol() found neither CR nor LF. */
#define KWEB_HP_NOT_EOL		2

/* RFC 9112 2.2 lets us skip empty lines before the request line. */
#define KWEB_HP_MAX_EMPTY_LINES	8

static const char kweb_hp_h2[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
#define KWEB_HP_PREFACE_LEN	(sizeof(kweb_hp_h2) - 1)
/* "PRI * HTTP/2.0\r\n", the preface's request line */
#define KWEB_HP_PREFACE_LINE	16

struct kweb_hp {
	const char *buf;
	size_t end;		/* bytes we may read: min(len, max_head) */
	struct kweb_request *req;
	bool line_done;		/* the request line has ended */
	u32 fields;
	bool conn_close;
	bool conn_keep_alive;
	bool te_seen;
	u32 te_codings;
};

/* Anything visible, and obs-text like nginx; never SP, CTL or DEL. */
static bool kweb_hp_target_char(unsigned char c)
{
	return kweb_http_is(c, KWEB_CT_TARGET);
}

/* field-content: VCHAR, obs-text, SP and HTAB. */
static bool kweb_hp_value_char(unsigned char c)
{
	return kweb_http_is(c, KWEB_CT_VALUE);
}

/* Is any of w's eight bytes not a target's: SP, a CTL or DEL? */
static bool kweb_hp_word_not_target(u64 w)
{
	return kweb_word_has_below(w, 0x21) || kweb_word_has(w, 0x7f);
}

/* Does any of w's eight bytes fall below SP or equal DEL? */
static bool kweb_hp_word_has_ctl(u64 w)
{
	return kweb_word_has_below(w, 0x20) || kweb_word_has(w, 0x7f);
}

/*
 * Where field-content starting at i ends. Values are most of a browser's
 * head (User-Agent, Accept, cookies): eight bytes are tested at a time,
 * and a word that holds a CTL (the line's CR, or an HTAB) byte by byte.
 */
static size_t kweb_hp_value_end(const char *b, size_t i, size_t end)
{
	size_t lim;

	for (;;) {
		while (end - i >= sizeof(u64) &&
		       !kweb_hp_word_has_ctl(kweb_word_load(b + i)))
			i += sizeof(u64);
		lim = end - i > sizeof(u64) ? i + sizeof(u64) : end;
		while (i < lim && kweb_hp_value_char(b[i]))
			i++;
		/* Only an HTAB, which field-content allows, goes on. */
		if (i < lim || i == end)
			return i;
	}
}

static bool kweb_hp_str_is(struct kweb_str s, const char *lit)
{
	size_t i;

	for (i = 0; i < s.len; i++)
		if (!lit[i] || s.p[i] != lit[i])
			return false;
	return !lit[s.len];
}

static struct kweb_str kweb_hp_slice(const char *b, size_t from, size_t to)
{
	struct kweb_str s = { .p = b + from, .len = (u32)(to - from) };

	return s;
}

/*
 * Consume a line end at *i: CRLF, or a bare LF (RFC 9112 2.2). A CR that
 * is followed by anything else is an error: some parsers take it for a line
 * end and some do not, which is what request smuggling feeds on.
 */
static int kweb_hp_eol(const char *b, size_t end, size_t *i)
{
	if (*i == end)
		return KWEB_HP_MORE;
	if (b[*i] == '\n') {
		*i += 1;
		return KWEB_HP_DONE;
	}
	if (b[*i] != '\r')
		return KWEB_HP_NOT_EOL;
	if (*i + 1 == end)
		return KWEB_HP_MORE;
	if (b[*i + 1] != '\n')
		return 400;
	*i += 2;
	return KWEB_HP_DONE;
}

/*
 * An absolute-form target's authority is checked as Host is (RFC 9112
 * 3.2.2): it wins over Host, so it must be no less valid. Other forms
 * are left to the path's and the route's checks.
 */
static bool kweb_hp_authority_ok(struct kweb_str t)
{
	size_t i, s;

	if (t.len >= 7 && kweb_http_ieq(t.p, 7, "http://"))
		s = 7;
	else if (t.len >= 8 && kweb_http_ieq(t.p, 8, "https://"))
		s = 8;
	else
		return true;
	for (i = s; i < t.len && t.p[i] != '/' && t.p[i] != '?' &&
	     t.p[i] != '#'; i++)
		;
	return kweb_authority_ok(t.p + s, i - s);
}

/* 1*DIGIT into a u64; no sign, no spaces, no list. */
static int kweb_hp_content_length(struct kweb_str v, u64 *out)
{
	u64 n = 0;
	u32 i;

	if (!v.len)
		return 400;
	for (i = 0; i < v.len; i++) {
		unsigned int d = (unsigned char)v.p[i] - '0';

		if (d > 9)
			return 400;
		if (n > (~0ULL - d) / 10)
			return 400;
		n = n * 10 + d;
	}
	*out = n;
	return KWEB_HP_DONE;
}

/*
 * Walk a comma-separated list (RFC 9110 5.6.1): calls back with each
 * element, OWS trimmed, empty elements skipped. Returns the first non-zero
 * result of the callback.
 */
static int kweb_hp_list(struct kweb_hp *h, struct kweb_str v,
			int (*fn)(struct kweb_hp *h, const char *p,
				  size_t len))
{
	u32 i = 0;

	while (i < v.len) {
		u32 s, e;
		int rc;

		while (i < v.len && (kweb_http_ows(v.p[i]) || v.p[i] == ','))
			i++;
		s = i;
		while (i < v.len && v.p[i] != ',')
			i++;
		e = i;
		while (e > s && kweb_http_ows(v.p[e - 1]))
			e--;
		if (e == s)
			continue;
		rc = fn(h, v.p + s, e - s);
		if (rc)
			return rc;
	}
	return KWEB_HP_DONE;
}

static int kweb_hp_connection_opt(struct kweb_hp *h, const char *p,
				  size_t len)
{
	if (kweb_http_ieq(p, len, "close"))
		h->conn_close = true;
	else if (kweb_http_ieq(p, len, "keep-alive"))
		h->conn_keep_alive = true;
	return KWEB_HP_DONE;
}

/*
 * kweb reads no request bodies beyond framing them, and the only coding
 * that frames one is chunked; like nginx, every other coding is one we do
 * not understand (501, RFC 9112 6.1), parameters included. chunked twice
 * is not a valid message (RFC 9112 6.1), hence 400.
 */
static int kweb_hp_coding(struct kweb_hp *h, const char *p, size_t len)
{
	size_t i;

	h->te_codings++;
	for (i = 0; i < len; i++)
		if (!kweb_http_tchar(p[i]))
			return p[i] == ';' || kweb_http_ows(p[i]) ? 501 : 400;
	if (!kweb_http_ieq(p, len, "chunked"))
		return 501;
	if (h->req->chunked)
		return 400;
	h->req->chunked = true;
	return KWEB_HP_DONE;
}

static int kweb_hp_transfer_encoding(struct kweb_hp *h, struct kweb_str v)
{
	struct kweb_request *req = h->req;
	u32 before = h->te_codings;
	int rc;

	/* An HTTP/1.0 message with it is faulty (RFC 9112 6.1). */
	if (req->minor == 0)
		return 400;
	/* Both framings at once: the classic smuggling vector (6.3). */
	if (req->has_content_length)
		return 400;
	h->te_seen = true;
	rc = kweb_hp_list(h, v, kweb_hp_coding);
	if (rc)
		return rc;
	/* 1#transfer-coding: an empty list is not one. */
	return h->te_codings == before ? 400 : KWEB_HP_DONE;
}

/* The fields the parser acts on; any other is skipped. */
enum kweb_hp_fid {
	KWEB_HF_OTHER,
	KWEB_HF_HOST,
	KWEB_HF_CONNECTION,
	KWEB_HF_CONTENT_LENGTH,
	KWEB_HF_TRANSFER_ENCODING,
	KWEB_HF_RANGE,
	KWEB_HF_IF_RANGE,
	KWEB_HF_IF_NONE_MATCH,
	KWEB_HF_IF_MODIFIED_SINCE,
	KWEB_HF_IF_MATCH,
	KWEB_HF_IF_UNMODIFIED_SINCE,
	KWEB_HF_ACCEPT_ENCODING,
	KWEB_HF_REFERER,
	KWEB_HF_USER_AGENT,
	KWEB_HF_UPGRADE,
	KWEB_HF_EXPECT,
	KWEB_HF_VIA,
};

/*
 * The names, by length: a browser sends a dozen fields, most of them of
 * no interest here, and each is then one index and at most two
 * comparisons rather than a comparison per known name.
 */
static const struct kweb_hp_name {
	const char *lc;
	enum kweb_hp_fid id;
} kweb_hp_names[][2] = {
	[3] = { { "via", KWEB_HF_VIA } },
	[4] = { { "host", KWEB_HF_HOST } },
	[5] = { { "range", KWEB_HF_RANGE } },
	[6] = { { "expect", KWEB_HF_EXPECT } },
	[7] = { { "referer", KWEB_HF_REFERER },
		{ "upgrade", KWEB_HF_UPGRADE } },
	[8] = { { "if-range", KWEB_HF_IF_RANGE },
		{ "if-match", KWEB_HF_IF_MATCH } },
	[10] = { { "connection", KWEB_HF_CONNECTION },
		 { "user-agent", KWEB_HF_USER_AGENT } },
	[13] = { { "if-none-match", KWEB_HF_IF_NONE_MATCH } },
	[14] = { { "content-length", KWEB_HF_CONTENT_LENGTH } },
	[15] = { { "accept-encoding", KWEB_HF_ACCEPT_ENCODING } },
	[17] = { { "transfer-encoding", KWEB_HF_TRANSFER_ENCODING },
		 { "if-modified-since", KWEB_HF_IF_MODIFIED_SINCE } },
	[19] = { { "if-unmodified-since", KWEB_HF_IF_UNMODIFIED_SINCE } },
};

/*
 * Does the name n, nl tchars, spell lc (as long, lower-case letters and
 * '-') in any case? OR-ing in 0x20 lower-cases a letter and leaves '-';
 * of the other bytes it could turn into one of lc's, none is a tchar.
 */
static bool kweb_hp_name_is(const char *n, size_t nl, const char *lc)
{
	size_t i;

	for (i = 0; i < nl; i++)
		if ((n[i] | 0x20) != lc[i])
			return false;
	return true;
}

static enum kweb_hp_fid kweb_hp_field_id(const char *n, size_t nl)
{
	const struct kweb_hp_name *e;

	if (nl >= ARRAY_SIZE(kweb_hp_names))
		return KWEB_HF_OTHER;
	for (e = kweb_hp_names[nl]; e < kweb_hp_names[nl] + 2 && e->lc; e++)
		if (kweb_hp_name_is(n, nl, e->lc))
			return e->id;
	return KWEB_HF_OTHER;
}

/*
 * Act on one field line. A repeated Range, If-Range, If-Match,
 * If-Unmodified-Since or If-Modified-Since is not an error, but the slice
 * then holds the name of the repeated field instead of a value, which
 * kweb_range_parse(), kweb_if_range(), kweb_if_match() and the date
 * parser never accept: the whole file is sent, or 412 for If-Match (never
 * a false success), and the two dates are ignored as a list of dates must
 * be (RFC 9110 13.1.3, 13.1.4). Repeated If-None-Match, Referer and
 * User-Agent keep the first. HTTP/1.0 has neither Upgrade (RFC 9110
 * 7.8) nor Expect (10.1.1): they are ignored there.
 */
static int kweb_hp_field(struct kweb_hp *h, struct kweb_str name,
			 struct kweb_str v)
{
	struct kweb_request *req = h->req;

	switch (kweb_hp_field_id(name.p, name.len)) {
	case KWEB_HF_OTHER:
		break;
	case KWEB_HF_HOST:
		/* Empty: RFC 9112 3.2 allows it without an authority. */
		if (req->host.p || (v.len && !kweb_authority_ok(v.p, v.len)))
			return 400;
		req->host = v;
		break;
	case KWEB_HF_CONNECTION:
		return kweb_hp_list(h, v, kweb_hp_connection_opt);
	case KWEB_HF_CONTENT_LENGTH:
		/* Any repeat, even an equal one, is refused like nginx. */
		if (req->has_content_length || h->te_seen)
			return 400;
		if (kweb_hp_content_length(v, &req->content_length))
			return 400;
		req->has_content_length = true;
		break;
	case KWEB_HF_TRANSFER_ENCODING:
		return kweb_hp_transfer_encoding(h, v);
	case KWEB_HF_RANGE:
		req->range = req->range.p ? name : v;
		break;
	case KWEB_HF_IF_RANGE:
		req->if_range = req->if_range.p ? name : v;
		break;
	case KWEB_HF_IF_NONE_MATCH:
		if (!req->if_none_match.p)
			req->if_none_match = v;
		break;
	case KWEB_HF_IF_MODIFIED_SINCE:
		req->if_modified_since = req->if_modified_since.p ? name : v;
		break;
	case KWEB_HF_IF_MATCH:
		req->if_match = req->if_match.p ? name : v;
		break;
	case KWEB_HF_IF_UNMODIFIED_SINCE:
		req->if_unmodified_since = req->if_unmodified_since.p ? name :
					   v;
		break;
	case KWEB_HF_ACCEPT_ENCODING:
		kweb_accept_encoding_add(&req->accept_enc, v.p, v.len);
		break;
	case KWEB_HF_REFERER:
		if (!req->referer.p)
			req->referer = v;
		break;
	case KWEB_HF_USER_AGENT:
		if (!req->user_agent.p)
			req->user_agent = v;
		break;
	case KWEB_HF_UPGRADE:
		if (req->minor != 0 && v.len)
			req->upgrade = true;
		break;
	case KWEB_HF_EXPECT:
		if (req->minor != 0 &&
		    kweb_http_ieq(v.p, v.len, "100-continue"))
			req->expect_continue = true;
		break;
	case KWEB_HF_VIA:
		req->via = true;
		break;
	}
	return KWEB_HP_DONE;
}

/*
 * The HTTP/2 prior-knowledge preface must be the very first bytes of the
 * connection (RFC 9113 3.4). Called for an HTTP/2.0 request line that
 * starts the buffer: the preface, or a prefix of it, passes; any other
 * HTTP/2.0 request is 505 like the rest of the versions we do not speak.
 */
static int kweb_hp_preface(struct kweb_hp *h)
{
	size_t n = h->end < KWEB_HP_PREFACE_LEN ? h->end : KWEB_HP_PREFACE_LEN;

	if (memcmp(h->buf, kweb_hp_h2, n))
		return 505;
	if (n < KWEB_HP_PREFACE_LEN)
		return KWEB_HP_MORE;
	h->req->h2_preface = true;
	h->req->head_len = KWEB_HP_PREFACE_LEN;
	return KWEB_HP_DONE;
}

/*
 * %s"HTTP" "/" DIGIT "." DIGIT at *i, case-sensitive (RFC 9112 2.3).
 * Nearly every request is HTTP/1.1: its eight bytes are compared at once.
 */
static int kweb_hp_version(const char *b, size_t end, size_t *i)
{
	static const char proto[] = "HTTP/1.1";
	size_t k, n = sizeof(proto) - 1;

	if (end - *i >= n && !memcmp(b + *i, proto, n)) {
		*i += n;
		return KWEB_HP_DONE;
	}
	for (k = 0; k < n; k++, (*i)++) {
		if (*i == end)
			return KWEB_HP_MORE;
		if (k == 5 || k == 7) {
			if (!kweb_http_is(b[*i], KWEB_CT_DIGIT))
				return 400;
		} else if (b[*i] != proto[k]) {
			return 400;
		}
	}
	return KWEB_HP_DONE;
}

/* method SP request-target SP HTTP-version CRLF, from *pos. */
static int kweb_hp_request_line(struct kweb_hp *h, size_t *pos)
{
	struct kweb_request *req = h->req;
	const char *b = h->buf;
	size_t end = h->end;
	size_t i = *pos, s = *pos;
	int rc;

	/* Nearly every request's method, its four bytes compared at once. */
	if (end - i >= 4 && !memcmp(b + i, "GET ", 4)) {
		i += 3;
	} else {
		while (i < end && kweb_http_tchar(b[i]))
			i++;
		if (i == end)
			return KWEB_HP_MORE;
		if (b[i] != ' ' || i == s)
			return 400;
	}
	req->method_str = kweb_hp_slice(b, s, i);
	if (kweb_hp_str_is(req->method_str, "GET"))
		req->method = KWEB_METHOD_GET;
	else if (kweb_hp_str_is(req->method_str, "HEAD"))
		req->method = KWEB_METHOD_HEAD;

	s = ++i;
	while (end - i >= sizeof(u64) &&
	       !kweb_hp_word_not_target(kweb_word_load(b + i)))
		i += sizeof(u64);
	while (i < end && kweb_hp_target_char(b[i]))
		i++;
	if (i == end)
		return KWEB_HP_MORE;
	/* Also catches HTTP/0.9's "GET /" CRLF: it has no version. */
	if (b[i] != ' ' || i == s)
		return 400;
	req->target = kweb_hp_slice(b, s, i);
	if (!kweb_hp_authority_ok(req->target))
		return 400;

	i++;
	rc = kweb_hp_version(b, end, &i);
	if (rc)
		return rc;
	req->major = b[i - 3] - '0';
	req->minor = b[i - 1] - '0';

	rc = kweb_hp_eol(b, end, &i);
	if (rc == KWEB_HP_NOT_EOL)
		return 400;
	if (rc)
		return rc;
	h->line_done = true;
	*pos = i;

	if (req->major != 1) {
		if (*pos == KWEB_HP_PREFACE_LINE && req->major == 2 &&
		    req->minor == 0)
			return kweb_hp_preface(h);
		return 505;
	}
	/* HTTP/1.N for N > 1 is read as 1.1 (RFC 9110 6.2), so keep-alive. */
	req->keep_alive = req->minor != 0;
	return KWEB_HP_DONE;
}

static int kweb_hp_head(struct kweb_hp *h)
{
	struct kweb_request *req = h->req;
	const char *b = h->buf;
	size_t end = h->end;
	size_t i = 0;
	unsigned int empty = 0;
	int rc;

	/* Empty lines some clients send after a POST body (RFC 9112 2.2). */
	for (;;) {
		rc = kweb_hp_eol(b, end, &i);
		if (rc == KWEB_HP_NOT_EOL)
			break;
		if (rc)
			return rc;
		if (++empty > KWEB_HP_MAX_EMPTY_LINES)
			return 400;
	}

	rc = kweb_hp_request_line(h, &i);
	if (rc || req->h2_preface)
		return rc;

	for (;;) {
		size_t s, e;
		struct kweb_str name;

		rc = kweb_hp_eol(b, end, &i);
		if (rc == KWEB_HP_DONE)
			break;
		if (rc != KWEB_HP_NOT_EOL)
			return rc;
		/* obs-fold, or whitespace before the first field: 400 */
		if (kweb_http_ows(b[i]))
			return 400;
		if (++h->fields > KWEB_MAX_FIELDS)
			return 431;

		s = i;
		while (i < end && kweb_http_tchar(b[i]))
			i++;
		if (i == end)
			return KWEB_HP_MORE;
		/* Covers "Name :" and a line without a colon. */
		if (b[i] != ':' || i == s)
			return 400;
		name = kweb_hp_slice(b, s, i);

		/* field-content; then a line end, or a byte that is a 400 */
		s = ++i;
		i = kweb_hp_value_end(b, i, end);
		if (i < end && b[i] != '\r' && b[i] != '\n')
			return 400;
		e = i;
		rc = kweb_hp_eol(b, end, &i);
		if (rc)
			return rc;
		while (s < e && kweb_http_ows(b[s]))
			s++;
		while (e > s && kweb_http_ows(b[e - 1]))
			e--;
		rc = kweb_hp_field(h, name, kweb_hp_slice(b, s, e));
		if (rc)
			return rc;
	}

	req->head_len = (u32)i;
	/* RFC 9112 3.2: every HTTP/1.1 request names its Host. */
	if (req->minor != 0 && !req->host.p)
		return 400;
	if (h->conn_close)
		req->keep_alive = false;
	else if (h->conn_keep_alive)
		req->keep_alive = true;
	/*
	 * Expect: 100-continue with content: answer, then close (RFC 9110
	 * 10.1.1 lets a server send the final status instead of 100). Sending
	 * 100 and then reading the content would still take the next bytes
	 * as content when a proxy never sends it, which swallows the next
	 * request (the 0.CL desync); closed, no byte after the head is ever
	 * read as a request, whether the content comes or not. It is rare
	 * (a GET with content), so a connection less costs nothing.
	 */
	if (req->expect_continue && req->content_length)
		req->keep_alive = false;
	return KWEB_HP_DONE;
}

enum kweb_parse_result kweb_http_parse(const char *buf, size_t len,
				       size_t max_head,
				       struct kweb_request *req)
{
	struct kweb_hp h = {
		.buf = buf,
		.end = len < max_head ? len : max_head,
		.req = req,
	};
	int rc;

	memset(req, 0, sizeof(*req));
	rc = kweb_hp_head(&h);
	if (rc == KWEB_HP_DONE)
		return KWEB_PARSE_OK;
	if (rc == KWEB_HP_MORE) {
		if (len < max_head)
			return KWEB_PARSE_INCOMPLETE;
		rc = h.line_done ? 431 : 414;
	}
	req->status = (u16)rc;
	return KWEB_PARSE_ERROR;
}

bool kweb_http_head_ready(const char *buf, size_t len,
			  struct kweb_head_scan *s)
{
	size_t i;

	/*
	 * Most heads arrive in one segment: bytes that end in CRLF CRLF hold
	 * a whole head, or an error to answer, but for a few leading empty
	 * lines or the HTTP/2 preface, which the scan below then looks at.
	 */
	if (!s->tail_seen && !s->ready && len >= 4) {
		s->tail_seen = true;
		if (!memcmp(buf + len - 4, "\r\n\r\n", 4))
			s->ready = true;
	}

	/*
	 * One byte at a time, with where the last bytes left us in s, so
	 * that a line end split across segments is seen all the same: a
	 * blank line is a line end right after another (a CR between them
	 * allowed). A CR followed by anything but LF is an error the parser
	 * answers at once, so it is worth a parse too.
	 */
	for (i = s->pos; i < len && !s->ready; i++) {
		char c = buf[i];

		if (s->cr && c != '\n')
			s->ready = true;
		if (c == '\n') {
			if (!s->line || s->bol)
				s->ready = true;
			s->line = true;
			s->bol = true;
			s->cr = false;
		} else if (c == '\r') {
			s->cr = true;
		} else {
			s->bol = false;
			s->cr = false;
		}
	}
	s->pos = i;
	return s->ready;
}
