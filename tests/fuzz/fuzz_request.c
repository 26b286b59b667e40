// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the input is what a client sent on one connection.
 * It goes through what kmod/conn.c and kmod/request.c do with it, using
 * the pure-logic files of kmod/ themselves: kweb_http_parse() (with the
 * default max_header_size and one picked from the input), then for each
 * request kweb would answer the path, the route, Range, the conditionals,
 * MIME and the response header, then the next pipelined request after the
 * head and its Content-Length body. Every result is checked against the
 * invariants in check.h and the ones below; a violation aborts.
 */
#include "check.h"

static const char kweb_h2_preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/* Some of them below the module's 256: the parser takes any bound. */
static const size_t max_heads[8] = { 8192, 256, 1024, 24, 100, 4096, 65536,
				     300 };

static struct kweb_route_rules rules;
static const char prefixes[] = "/api/,/dyn/,/cgi-bin/";
static const char extensions[] = ".php,.CGI";

static bool tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Same result and same fields, slices compared as offsets. */
static void same_parse(enum kweb_parse_result r1, const struct kweb_request *a,
		       const char *b1, enum kweb_parse_result r2,
		       const struct kweb_request *b, const char *b2,
		       const char *what)
{
	const struct kweb_str *sa[] = { &a->method_str, &a->target, &a->host,
					&a->range, &a->if_range,
					&a->if_none_match,
					&a->if_modified_since,
					&a->referer, &a->user_agent };
	const struct kweb_str *sb[] = { &b->method_str, &b->target, &b->host,
					&b->range, &b->if_range,
					&b->if_none_match,
					&b->if_modified_since,
					&b->referer, &b->user_agent };
	size_t k;

	CHECK(r1 == r2, "%s: result %d vs %d", what, r1, r2);
	if (r1 == KWEB_PARSE_INCOMPLETE)
		return;
	if (r1 == KWEB_PARSE_ERROR) {
		CHECK(a->status == b->status, "%s: status %u vs %u", what,
		      a->status, b->status);
		return;
	}
	CHECK(a->head_len == b->head_len && a->status == b->status &&
	      a->method == b->method && a->major == b->major &&
	      a->minor == b->minor && a->keep_alive == b->keep_alive &&
	      a->upgrade == b->upgrade && a->h2_preface == b->h2_preface &&
	      a->chunked == b->chunked &&
	      a->has_content_length == b->has_content_length &&
	      a->expect_continue == b->expect_continue &&
	      a->content_length == b->content_length &&
	      a->accept_enc.listed == b->accept_enc.listed &&
	      a->accept_enc.refused == b->accept_enc.refused,
	      "%s: head_len %u vs %u", what, a->head_len, b->head_len);
	for (k = 0; k < ARRAY_SIZE(sa); k++) {
		CHECK(!sa[k]->p == !sb[k]->p && sa[k]->len == sb[k]->len,
		      "%s: slice %zu", what, k);
		if (sa[k]->p)
			CHECK(sa[k]->p - b1 == sb[k]->p - b2,
			      "%s: slice %zu offset", what, k);
	}
}

static enum kweb_parse_result parse(const char *b, size_t len, size_t max,
				    struct kweb_request *req)
{
	return kweb_http_parse(b, len, max, req);
}

/* parse b[0..len) again from a copy of exactly len bytes (for ASan) */
static enum kweb_parse_result parse_copy(const char *b, size_t len,
					 size_t max, struct kweb_request *req,
					 const char *tail, size_t tail_len,
					 char **copy)
{
	*copy = malloc(len + tail_len + 1);
	if (!*copy)
		abort();
	memcpy(*copy, b, len);
	memcpy(*copy + len, tail, tail_len);
	return parse(*copy, len + tail_len, max, req);
}

static bool slice_in(const struct kweb_str *s, const char *b, size_t n)
{
	return !s->p || (s->p >= b && s->p + s->len <= b + n);
}

/* Is v (trimmed) exactly the slice s? An empty one may point anywhere. */
static bool slice_is(const struct kweb_str *s, const char *v, size_t vl)
{
	return s->p && s->len == vl && (!vl || s->p == v);
}

/*
 * Read an OK head again, the simple way (split at LF), and check what the
 * parser reported against it: the smuggling-relevant facts above all.
 */
static void rescan_head(const char *b, const struct kweb_request *r)
{
	size_t n = r->head_len, i = 0, nfields = 0;
	size_t hosts = 0, cls = 0, tes = 0, ranges = 0, ifranges = 0;
	size_t inms = 0, imss = 0, refs = 0, uas = 0, ims = 0, iuss = 0;
	bool upgrade = false, expect = false, conn_close = false, via = false;
	bool conn_ka = false, keep, is_get, is_head;
	struct kweb_str range = { 0 }, if_range = { 0 }, if_match = { 0 };
	struct kweb_str ius = { 0 }, imsv = { 0 };
	const char *nl, *e, *line;
	char rl[32];
	u64 cl = 0;

	/* leading empty lines */
	while (i < n && (b[i] == '\n' || (b[i] == '\r' && b[i + 1] == '\n')))
		i += b[i] == '\n' ? 1 : 2;
	CHECK(i <= 16, "%zu bytes of empty lines", i);
	nl = memchr(b + i, '\n', n - i);
	CHECK(nl, "request line end");
	e = nl > b + i && nl[-1] == '\r' ? nl - 1 : nl;
	line = b + i;
	CHECK(r->method_str.p == line && r->method_str.len &&
	      line[r->method_str.len] == ' ' &&
	      r->target.p == line + r->method_str.len + 1 && r->target.len &&
	      r->target.p + r->target.len + 9 == e &&
	      r->target.p[r->target.len] == ' ', "request line slices");
	snprintf(rl, sizeof(rl), "HTTP/%u.%u", r->major, r->minor);
	CHECK(!memcmp(e - 8, rl, 8), "version '%.8s' vs %s", e - 8, rl);
	for (line = r->method_str.p; line < r->method_str.p + r->method_str.len;
	     line++)
		CHECK(tchar(*line), "method byte %#x", (unsigned char)*line);
	for (line = r->target.p; line < r->target.p + r->target.len; line++)
		CHECK((unsigned char)*line > 0x20 && *line != 0x7f,
		      "target byte %#x", (unsigned char)*line);
	is_get = r->method_str.len == 3 && !memcmp(r->method_str.p, "GET", 3);
	is_head = r->method_str.len == 4 &&
		  !memcmp(r->method_str.p, "HEAD", 4);
	CHECK(r->method == (is_get ? KWEB_METHOD_GET :
			    is_head ? KWEB_METHOD_HEAD : KWEB_METHOD_OTHER),
	      "method %d for '%.*s'", r->method, (int)r->method_str.len,
	      r->method_str.p);
	CHECK(r->major == 1, "major %u", r->major);
	i = nl + 1 - b;

	for (;;) {
		const char *colon, *v;
		size_t vl, k;

		nl = memchr(b + i, '\n', n - i);
		CHECK(nl, "field line end");
		line = b + i;
		e = nl > line && nl[-1] == '\r' ? nl - 1 : nl;
		i = nl + 1 - b;
		if (e == line)
			break;
		nfields++;
		for (k = 0; line + k < e; k++)
			CHECK(line[k] == '\t' ||
			      ((unsigned char)line[k] >= 0x20 && line[k] != 0x7f),
			      "byte %#x in a field line", (unsigned char)line[k]);
		CHECK(!fz_ows(line[0]), "obs-fold or leading whitespace");
		colon = memchr(line, ':', e - line);
		CHECK(colon && colon > line, "field without a name");
		for (k = 0; line + k < colon; k++)
			CHECK(tchar(line[k]), "field name byte %#x",
			      (unsigned char)line[k]);
		v = colon + 1;
		vl = e - v;
		fz_trim(&v, &vl);
#define NAME(lc) fz_ieq(line, colon - line, lc)
		if (NAME("host")) {
			hosts++;
			CHECK(slice_is(&r->host, v, vl), "Host slice");
			CHECK(!fz_contains(v, vl, "..", 2), "Host with ..");
			for (k = 0; k < vl; k++)
				CHECK(isalnum((unsigned char)v[k]) ||
				      strchr("-._~!$&'()*+,;=:%[]", v[k]),
				      "Host byte %#x", (unsigned char)v[k]);
		} else if (NAME("content-length")) {
			cls++;
			CHECK(fz_digits(v, vl, &cl), "Content-Length '%.*s'",
			      (int)vl, v);
		} else if (NAME("transfer-encoding")) {
			tes++;
		} else if (NAME("range")) {
			if (!ranges++)
				range = (struct kweb_str){ v, (u32)vl };
		} else if (NAME("if-range")) {
			if (!ifranges++)
				if_range = (struct kweb_str){ v, (u32)vl };
		} else if (NAME("if-none-match")) {
			if (!inms++)
				CHECK(slice_is(&r->if_none_match, v, vl),
				      "If-None-Match");
		} else if (NAME("if-modified-since")) {
			if (!imss++)
				imsv = (struct kweb_str){ v, (u32)vl };
		} else if (NAME("if-match")) {
			if (!ims++)
				if_match = (struct kweb_str){ v, (u32)vl };
		} else if (NAME("if-unmodified-since")) {
			if (!iuss++)
				ius = (struct kweb_str){ v, (u32)vl };
		} else if (NAME("referer")) {
			if (!refs++)
				CHECK(slice_is(&r->referer, v, vl), "Referer");
		} else if (NAME("user-agent")) {
			if (!uas++)
				CHECK(slice_is(&r->user_agent, v, vl),
				      "User-Agent");
		} else if (NAME("via")) {
			via = true;
		} else if (NAME("upgrade")) {
			upgrade |= vl > 0;
		} else if (NAME("expect")) {
			expect |= fz_ieq(v, vl, "100-continue");
		} else if (NAME("connection")) {
			const char *s = v, *c;

			while (s < v + vl) {
				const char *tok;
				size_t tl;

				c = memchr(s, ',', v + vl - s);
				if (!c)
					c = v + vl;
				tok = s;
				tl = c - s;
				fz_trim(&tok, &tl);
				conn_close |= fz_ieq(tok, tl, "close");
				conn_ka |= fz_ieq(tok, tl, "keep-alive");
				s = c + 1;
			}
		}
#undef NAME
	}
	CHECK(i == n, "head ends at %zu, head_len %zu", i, n);
	CHECK(nfields <= KWEB_MAX_FIELDS, "%zu fields", nfields);

	/* one Host, required in 1.1; one framing, one Content-Length */
	CHECK(hosts <= 1 && (r->minor == 0 || hosts == 1), "%zu Host", hosts);
	CHECK(!!r->host.p == (hosts == 1), "Host slice set");
	CHECK(cls <= 1, "%zu Content-Length", cls);
	CHECK(r->has_content_length == (cls == 1) &&
	      (!cls || r->content_length == cl), "Content-Length value");
	CHECK(!(cls && tes), "Content-Length and Transfer-Encoding");
	CHECK(r->chunked == (tes > 0), "chunked %d with %zu TE", r->chunked,
	      tes);
	CHECK(!tes || r->minor != 0, "Transfer-Encoding in HTTP/1.0");

	/* a repeated Range or If-Range leaves a name, no value */
	CHECK(ranges == 1 ? slice_is(&r->range, range.p, range.len) :
	      ranges ? fz_ieq(r->range.p, r->range.len, "range") :
	      !r->range.p, "Range x%zu", ranges);
	CHECK(ifranges == 1 ? slice_is(&r->if_range, if_range.p,
				       if_range.len) :
	      ifranges ? fz_ieq(r->if_range.p, r->if_range.len, "if-range") :
	      !r->if_range.p, "If-Range x%zu", ifranges);
	/* so do a repeated If-Match and If-Unmodified-Since */
	CHECK(ims == 1 ? slice_is(&r->if_match, if_match.p, if_match.len) :
	      ims ? fz_ieq(r->if_match.p, r->if_match.len, "if-match") :
	      !r->if_match.p, "If-Match x%zu", ims);
	CHECK(iuss == 1 ? slice_is(&r->if_unmodified_since, ius.p, ius.len) :
	      iuss ? fz_ieq(r->if_unmodified_since.p,
			    r->if_unmodified_since.len,
			    "if-unmodified-since") :
	      !r->if_unmodified_since.p, "If-Unmodified-Since x%zu", iuss);
	CHECK(!!r->if_none_match.p == !!inms, "If-None-Match");
	CHECK(imss == 1 ? slice_is(&r->if_modified_since, imsv.p, imsv.len) :
	      imss ? fz_ieq(r->if_modified_since.p, r->if_modified_since.len,
			    "if-modified-since") :
	      !r->if_modified_since.p, "If-Modified-Since x%zu", imss);
	CHECK(!!r->referer.p == !!refs, "Referer");
	CHECK(!!r->user_agent.p == !!uas, "User-Agent");

	CHECK(r->upgrade == (upgrade && r->minor != 0), "upgrade");
	CHECK(r->via == via, "Via");
	CHECK(r->expect_continue == (expect && r->minor != 0), "expect");
	keep = r->minor != 0;
	if (conn_close)
		keep = false;
	else if (conn_ka)
		keep = true;
	/* Expect: 100-continue with content is answered, then closed */
	if (r->expect_continue && cl)
		keep = false;
	CHECK(r->keep_alive == keep, "keep_alive %d, want %d", r->keep_alive,
	      keep);
}

/*
 * Parse b[0..len) with max and check it against the parser's contract:
 * deterministic, stable when bytes are appended or max grows, prefixes of
 * a head incomplete, and an OK head the way rescan_head() reads it.
 */
static enum kweb_parse_result check_parse(const char *b, size_t len,
					  size_t max, struct kweb_request *req)
{
	static const char junk[] = "\r\n\r\nGET / HTTP/1.1\r\n\0\r\x80 :";
	enum kweb_parse_result res, r2;
	struct kweb_request q;
	size_t lim = len < max ? len : max, k;
	char *copy;

	res = parse(b, len, max, req);
	r2 = parse(b, len, max, &q);
	same_parse(res, req, b, r2, &q, b, "twice");

	switch (res) {
	case KWEB_PARSE_INCOMPLETE:
		CHECK(len < max, "incomplete with len %zu >= max %zu", len,
		      max);
		break;
	case KWEB_PARSE_ERROR:
		CHECK(req->status == 400 || req->status == 414 ||
		      req->status == 431 || req->status == 501 ||
		      req->status == 505, "status %u", req->status);
		CHECK(req->status != 414 || len >= max, "414 with len < max");
		break;
	case KWEB_PARSE_OK:
		CHECK(req->status == 0, "OK with status %u", req->status);
		CHECK(req->head_len > 0 && req->head_len <= lim,
		      "head_len %u, len %zu, max %zu", req->head_len, len, max);
		CHECK(slice_in(&req->method_str, b, req->head_len) &&
		      slice_in(&req->target, b, req->head_len) &&
		      slice_in(&req->host, b, req->head_len) &&
		      slice_in(&req->range, b, req->head_len) &&
		      slice_in(&req->if_range, b, req->head_len) &&
		      slice_in(&req->if_none_match, b, req->head_len) &&
		      slice_in(&req->if_modified_since, b, req->head_len) &&
		      slice_in(&req->referer, b, req->head_len) &&
		      slice_in(&req->user_agent, b, req->head_len),
		      "a slice outside the head");
		if (req->h2_preface)
			CHECK(req->head_len == 24 &&
			      !memcmp(b, kweb_h2_preface, 24), "h2 preface");
		else
			rescan_head(b, req);
		break;
	}

	/* A result that is not "incomplete" is final: more bytes change nothing. */
	if (res != KWEB_PARSE_INCOMPLETE) {
		r2 = parse_copy(b, len, max, &q, junk, sizeof(junk) - 1, &copy);
		same_parse(res, req, b, r2, &q, copy, "junk appended");
		free(copy);
		r2 = parse_copy(b, len, max, &q, b, len, &copy);
		same_parse(res, req, b, r2, &q, copy, "input twice");
		free(copy);
	}
	/* ... and a prefix that was final already is the same */
	for (k = 1; k <= 2 && k <= len; k++) {
		struct kweb_request p;
		enum kweb_parse_result rp;

		rp = parse_copy(b, len / k - (k == 1), max, &p, "", 0, &copy);
		if (rp != KWEB_PARSE_INCOMPLETE)
			same_parse(rp, &p, copy, res, req, b, "prefix");
		free(copy);
	}

	if (res != KWEB_PARSE_OK)
		return res;

	/* exactly the head: the same; one byte less: incomplete */
	r2 = parse_copy(b, req->head_len, max, &q, "", 0, &copy);
	same_parse(res, req, b, r2, &q, copy, "head alone");
	free(copy);
	r2 = parse_copy(b, req->head_len - 1, max, &q, "", 0, &copy);
	CHECK(r2 == KWEB_PARSE_INCOMPLETE, "head_len - 1 gives %d (%u)", r2,
	      q.status);
	free(copy);
	/* any bound that fits the head gives the same; a smaller one 414/431 */
	r2 = parse(b, len, (size_t)-1, &q);
	same_parse(res, req, b, r2, &q, b, "unbounded");
	r2 = parse(b, len, req->head_len, &q);
	same_parse(res, req, b, r2, &q, b, "max = head_len");
	r2 = parse(b, len, req->head_len - 1, &q);
	CHECK(r2 == KWEB_PARSE_ERROR && (q.status == 414 || q.status == 431),
	      "max = head_len - 1 gives %d (%u)", r2, q.status);
	return res;
}

/* kmod/request.c's kweb_file_status() and kweb_reply_body(), on a file. */
static void check_file_response(const struct kweb_request *req,
				const char *path, size_t plen, u64 size,
				s64 mtime)
{
	char etag[KWEB_ETAG_MAX + 1], lm[KWEB_HTTP_DATE_LEN + 1];
	char hdr[FZ_HDR_OUT], body[FZ_HDR_OUT], want[96];
	bool head = req->method == KWEB_METHOD_HEAD;
	struct kweb_resp_hdr h = { .date = "Sun, 06 Nov 1994 08:49:37 GMT" };
	u64 first = 0, last = 0;
	int en, n, bl = 0;
	long long cl;
	u16 status = 0;

	en = kweb_etag_format(etag, mtime, size);
	kweb_http_date_format(mtime, lm);
	{
		const struct kweb_preconds pc = {
			.if_match = req->if_match,
			.if_unmodified_since = req->if_unmodified_since,
			.if_none_match = req->if_none_match,
			.if_modified_since = req->if_modified_since,
		};

		status = kweb_preconditions(&pc, etag, en, mtime);
	}
	/* 412 never without a precondition, 304 never without a condition */
	CHECK(status != 412 || req->if_match.p || req->if_unmodified_since.p,
	      "412 unasked");
	CHECK(status != 304 || req->if_none_match.p ||
	      req->if_modified_since.p, "304 unasked");
	CHECK(status != 412 || !req->if_match.p ||
	      !kweb_if_match(req->if_match.p, req->if_match.len, etag, en),
	      "412 with a matching If-Match");
	if (status) {
		/* 304 */
	} else if (head || !req->range.len) {
		status = 200;
	} else if (req->if_range.len &&
		   !kweb_if_range(req->if_range.p, req->if_range.len, etag, en,
				  mtime)) {
		status = 200;
	} else {
		switch (kweb_range_parse(req->range.p, req->range.len, size,
					 &first, &last)) {
		case KWEB_RANGE_OK:
			status = 206;
			break;
		case KWEB_RANGE_UNSATISFIABLE:
			status = 416;
			break;
		default:
			status = 200;
		}
	}

	h.status = status;
	h.close = !req->keep_alive;
	h.keep_alive = req->keep_alive && req->minor == 0;
	h.last_modified = lm;
	h.etag.p = etag;
	h.etag.len = en;
	h.size = size;
	if (status == 416 || status == 412 || status == 304) {
		h.unsatisfied_range = status == 416;
		if (status != 304) {
			bl = kweb_error_body(body, sizeof(body), status);
			h.content_type = "text/html";
			h.has_length = true;
			h.length = bl;
		}
	} else {
		if (status == 206) {
			CHECK(first <= last && last < size, "206 range");
			h.content_range = true;
			h.first = first;
			h.last = last;
		} else if (size) {
			last = size - 1;
		}
		h.content_type = kweb_mime_type(path, plen);
		h.has_length = true;
		h.length = size ? last - first + 1 : 0;
		h.accept_ranges = true;
	}
	n = kweb_resp_format(hdr, sizeof(hdr), &h);
	CHECK(n > 0 && (size_t)n == strlen(hdr), "format %d", n);
	cl = check_resp_header(hdr, n, status);
	switch (status) {
	case 304:
		CHECK(cl == -1 && !strstr(hdr, "Content-Type"), "304 fields");
		break;
	case 412:
		CHECK(cl == bl && !strstr(hdr, "Content-Range"), "412 fields");
		break;
	case 416:
		CHECK(cl == bl, "416 length");
		snprintf(want, sizeof(want), "\r\nContent-Range: bytes */%llu\r\n",
			 (unsigned long long)size);
		CHECK(strstr(hdr, want), "416 Content-Range");
		break;
	case 206:
		snprintf(want, sizeof(want),
			 "\r\nContent-Range: bytes %llu-%llu/%llu\r\n",
			 (unsigned long long)first, (unsigned long long)last,
			 (unsigned long long)size);
		CHECK(strstr(hdr, want), "206 Content-Range");
		CHECK((u64)cl == last - first + 1, "206 length");
		break;
	default:
		CHECK((u64)cl == size, "200 length");
	}
	CHECK(!!strstr(hdr, "\r\nConnection: close\r\n") == !req->keep_alive,
	      "Connection: close");
}

/* What kweb_route_request() must say (http_route.h). */
static enum kweb_route check_route_request(enum kweb_parse_result res,
					   const struct kweb_request *req)
{
	enum kweb_route r = kweb_route_request(res, req), want;

	if (res == KWEB_PARSE_ERROR)
		want = req->status == 400 ? KWEB_ROUTE_SERVE :
		       KWEB_ROUTE_UNPARSED;
	else if (res == KWEB_PARSE_INCOMPLETE)
		want = KWEB_ROUTE_SERVE;
	else if (req->h2_preface)
		want = KWEB_ROUTE_H2;
	else if (req->method == KWEB_METHOD_OTHER)
		want = KWEB_ROUTE_METHOD;
	else if (req->upgrade)
		want = KWEB_ROUTE_UPGRADE;
	else if (req->chunked)
		want = KWEB_ROUTE_UNPARSED;
	else
		want = KWEB_ROUTE_SERVE;
	CHECK(r == want, "route_request %d, want %d", r, want);
	/* what kweb serves itself is plain HTTP/1.x GET or HEAD */
	if (res == KWEB_PARSE_OK && r == KWEB_ROUTE_SERVE)
		CHECK(req->major == 1 && !req->chunked && !req->upgrade &&
		      (req->method == KWEB_METHOD_GET ||
		       req->method == KWEB_METHOD_HEAD), "served");
	return r;
}

/* One OK request kweb answers itself. */
static void check_request(const struct kweb_request *req)
{
	static char out[FZ_KERNEL_PATH_OUT];
	const struct kweb_str *conds[3] = { &req->if_none_match,
					    &req->if_modified_since,
					    &req->if_range };
	u64 size = req->has_content_length ? req->content_length :
		   req->head_len * 37u;
	s64 mtime = 1700000000, t;
	struct kweb_target tg;
	size_t k;
	int err;

	err = check_path(req->target.p, req->target.len,
			 (req->target.len * 7u + req->head_len) % 64, out, &tg);
	if (!err) {
		check_route_target(&rules, &tg, out);
		check_mime(out, tg.path_len);
	}

	if (req->range.p) {
		const u64 sizes[] = { 0, 1, 2, 100, req->head_len,
				      10 * 1024 * 1024, UINT64_MAX, size };

		for (k = 0; k < ARRAY_SIZE(sizes); k++)
			check_range(req->range.p, req->range.len, sizes[k]);
	}
	if (req->if_modified_since.p &&
	    !check_date(req->if_modified_since.p, req->if_modified_since.len,
			&t))
		mtime = t;
	if (req->if_range.p)
		check_date(req->if_range.p, req->if_range.len, NULL);
	for (k = 0; k < ARRAY_SIZE(conds); k++)
		if (conds[k]->p)
			check_cond(conds[k]->p, conds[k]->len, mtime, size);

	if (!err && kweb_route_target(&rules, &tg, out) == KWEB_ROUTE_SERVE) {
		check_file_response(req, out, tg.path_len, size, mtime);
		check_file_response(req, out, tg.path_len, 0, mtime + 1);
	} else if (err) {
		check_error_response(err == -ENAMETOOLONG ? 414 : 400, true);
	}
}

/* A connection's bytes, as kmod/conn.c takes requests off it. */
static void run_connection(const char *b, size_t len, size_t max)
{
	size_t pos = 0;
	int n;

	for (n = 0; n < 8 && pos < len; n++) {
		struct kweb_request req;
		enum kweb_parse_result res;
		u64 body;

		res = check_parse(b + pos, len - pos, max, &req);
		if (check_route_request(res, &req) != KWEB_ROUTE_SERVE)
			return;	/* handed to the backend, unread */
		if (res == KWEB_PARSE_ERROR)
			check_error_response(req.status, true);
		if (res != KWEB_PARSE_OK)
			return;
		check_request(&req);
		pos += req.head_len;
		body = req.has_content_length ? req.content_length : 0;
		pos += body < len - pos ? body : len - pos;
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (kweb_route_rules_parse(&rules, prefixes, extensions))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data;
	size_t alt = size ? max_heads[(data[0] + data[size - 1]) & 7] : 8192;

	run_connection(b, size, 8192);
	if (alt != 8192)
		run_connection(b, size, alt);
	return 0;
}
