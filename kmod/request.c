// SPDX-License-Identifier: GPL-2.0
/*
 * From a parsed request to a response ready to send: path resolution,
 * validators, conditionals and ranges. The worker's side may sleep
 * (opening files); kweb_request_cached() never does.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/fs.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>

#include "http_cond.h"
#include "http_date.h"
#include "http_host.h"
#include "http_range.h"
#include "http_redirect.h"
#include "kweb.h"
#include "mime.h"
#include "mimemap.h"
#include "response.h"
#include "spare.h"

/* A redirect's Location: no more fits with the header fields. */
#define KWEB_LOCATION_MAX (KWEB_HDR_MAX / 2)

/*
 * Softirq's scratch space, one per CPU: softirq does not nest, and a
 * response header left unsent when it ends is copied out
 * (kweb_response_hdr_keep()). The worker's are spare.c's.
 */
struct kweb_req_scratch {
	char path[KWEB_REQ_BUF];
	char cc[KWEB_CACHE_CONTROL_MAX];	/* a Cache-Control rule's value */
	char exp[KWEB_HTTP_DATE_LEN + 1];	/* Expires */
};

struct kweb_scratch {
	struct kweb_req_scratch req;
	char hdr[KWEB_HDR_MAX];
	char head[KWEB_HEAD_SCRATCH];	/* see kweb_conn_buf_grow() */
};

static struct kweb_scratch __percpu *kweb_scratch;

/*
 * The Date of this second, formatted once per second and CPU rather than
 * per response: every response carries one.
 */
struct kweb_date_cache {
	s64 sec;
	char str[KWEB_HTTP_DATE_LEN + 1];
};

static DEFINE_PER_CPU(struct kweb_date_cache, kweb_date_cache) = {
	.sec = -1,
};

/*
 * Softirq shares the CPU's cache with the worker: it waits meanwhile.
 * Returns the second formatted.
 */
static s64 kweb_date_now(char out[KWEB_HTTP_DATE_LEN + 1])
{
	s64 now = ktime_get_real_seconds();
	struct kweb_date_cache *dc;

	local_bh_disable();
	dc = this_cpu_ptr(&kweb_date_cache);
	if (dc->sec != now) {
		kweb_http_date_format(now, dc->str);
		dc->sec = now;
	}
	memcpy(out, dc->str, sizeof(dc->str));
	local_bh_enable();
	return now;
}

int kweb_request_init(void)
{
	kweb_scratch = alloc_percpu(struct kweb_scratch);
	return kweb_scratch ? 0 : -ENOMEM;
}

void kweb_request_exit(void)
{
	free_percpu(kweb_scratch);
}

/* Softirq's buffer for a request head, KWEB_HEAD_SCRATCH bytes. */
char *kweb_request_head_scratch(void)
{
	return this_cpu_ptr(kweb_scratch)->head;
}

/* Where a response header is formatted, KWEB_HDR_MAX bytes. */
static int kweb_response_hdr(struct kweb_response *r)
{
	if (r->hdr)
		return 0;
	if (in_softirq()) {
		r->hdr = this_cpu_ptr(kweb_scratch)->hdr;
		return 0;
	}
	r->hdr = kweb_spare_get(KWEB_SPARE_HDR, KWEB_HDR_MAX);
	if (!r->hdr)
		return -ENOMEM;
	r->hdr_buf = KWEB_HDR_SPARE;
	return 0;
}

/*
 * Softirq is ending: a header still in this CPU's scratch is copied out
 * if part of it is unsent, else let go.
 */
int kweb_response_hdr_keep(struct kweb_response *r)
{
	char *hdr;

	if (!r->hdr || r->hdr_buf != KWEB_HDR_SCRATCH)
		return 0;
	if (r->hdr_sent == r->hdr_len) {
		r->hdr = NULL;
		r->hdr_len = 0;
		r->hdr_sent = 0;
		return 0;
	}
	hdr = kmemdup(r->hdr + r->hdr_sent, r->hdr_len - r->hdr_sent,
		      GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!hdr) {
		r->hdr = NULL;
		return -ENOMEM;
	}
	r->hdr = hdr;
	r->hdr_buf = KWEB_HDR_KEPT;
	r->hdr_len -= r->hdr_sent;
	r->hdr_sent = 0;
	return 0;
}

/* How the request wants to be answered, whatever the status. */
struct kweb_reply {
	bool head;
	bool keep_alive;
	bool http10;
	s64 now;			/* the second date says */
	char date[KWEB_HTTP_DATE_LEN + 1];
	/*
	 * The normalized path, NUL-terminated, in a KWEB_PATH_BUF buffer;
	 * with virtual hosts, "/HOST" is the host_len bytes before it.
	 */
	char *path;
	unsigned int host_len;
	/* Room for Cache-Control and Expires, with path's. */
	char *cc, *exp;
};

static void kweb_reply_init(struct kweb_reply *rp, struct kweb_resp_hdr *h,
			    u16 status)
{
	rp->now = kweb_date_now(rp->date);
	memset(h, 0, sizeof(*h));
	h->status = status;
	h->date = rp->date;
	h->close = !rp->keep_alive;
	h->keep_alive = rp->keep_alive && rp->http10;
}

/*
 * A TLS connection's responses, errors too (nginx's add_header ...
 * always), carry its listener's HSTS; cleartext never does (RFC 6797
 * 7.2).
 */
static void kweb_reply_hsts(struct kweb_conn *conn, struct kweb_resp_hdr *h)
{
	const struct kweb_site *site;

	if (!conn->file)
		return;
	kweb_rcu_lock();
	site = kweb_rcu_deref(conn->srv->site);
	h->hsts = site->hsts;
	h->hsts_subdomains = site->hsts_subdomains;
	kweb_rcu_unlock();
}

/* Format h, and for errors the body after it, into the response buffer. */
static void kweb_reply_send(struct kweb_conn *conn, struct kweb_reply *rp,
			    struct kweb_resp_hdr *h, bool error_body)
{
	struct kweb_response *r = &conn->resp;
	char *body;
	int blen = 0, n;

	if (kweb_response_hdr(r)) {
		/* Nothing can be said: close. */
		kweb_response_release(r);
		kweb_conn_done(conn, KWEB_CLOSE_ERROR);
		return;
	}
	body = r->hdr + KWEB_HDR_MAX / 2;
	kweb_reply_hsts(conn, h);
	if (error_body) {
		blen = kweb_error_body(body, KWEB_HDR_MAX / 2, h->status);
		h->content_type = "text/html";
		h->has_length = true;
		h->length = blen;
	}
	n = kweb_resp_format(r->hdr, KWEB_HDR_MAX / 2, h);
	if (n < 0) {
		/* Only a huge Location gets here: nothing sensible to send. */
		kweb_response_release(r);
		kweb_response_error(conn, 414, rp->head, false);
		return;
	}
	if (error_body && !rp->head) {
		memmove(r->hdr + n, body, blen);
		n += blen;
	}
	r->hdr_len = n;
	r->hdr_sent = 0;
	r->keep_alive = rp->keep_alive;
	r->status = h->status;
	/* As nginx's $body_bytes_sent: an error page counts. */
	r->body_len = r->end - r->pos + (error_body && !rp->head ? blen : 0);
	conn->state = KWEB_CONN_SEND;
}

/* The listener's error page for status, into page; its length, or 0. */
static size_t kweb_error_page_path(struct kweb_server *srv, u16 status,
				   char *page)
{
	const struct kweb_str *p;
	size_t len = 0;

	rcu_read_lock();
	p = kweb_error_page(&rcu_dereference(srv->site)->pages, status);
	if (p) {
		memcpy(page, p->p, p->len);
		len = p->len;
	}
	rcu_read_unlock();
	page[len] = '\0';
	return len;
}

/*
 * Answer h->status with the listener's page for it (nginx's error_page):
 * its Content-Type, length and ETag, from the cache or the file. False if
 * there is none, or it cannot be served (then the built-in page; a page
 * is never looked for a page's own error). Whatever body conn->resp had
 * gives way. Worker only: it may open a file.
 */
static bool kweb_reply_error_page(struct kweb_conn *conn,
				  struct kweb_reply *rp,
				  struct kweb_resp_hdr *h)
{
	struct kweb_server *srv = conn->srv;
	struct kweb_response *r = &conn->resp;
	char etag[KWEB_ETAG_MAX + 1];
	struct kweb_variants v = {};
	struct kweb_file f = {};
	struct kweb_centry *e;
	char *page;
	size_t len;

	if (in_softirq() || !rp->path)
		return false;
	page = kmalloc(KWEB_REQ_BUF, GFP_KERNEL);
	if (!page)
		return false;
	/* A virtual host's own page, as nginx's error_page per server. */
	len = kweb_error_page_path(srv, h->status, page + rp->host_len);
	if (len) {
		memcpy(page, rp->path - rp->host_len, rp->host_len);
		len += rp->host_len;
	}
	e = len ? kweb_cache_lookup(&srv->cache, page, len,
				    KWEB_ENC_IDENTITY) : NULL;
	/* Its bytes are sent: an entry without them does not do. */
	if (e && !kweb_centry_has_body(e) && !rp->head) {
		kweb_centry_put(e);
		e = NULL;
	}
	if (e)
		kweb_cache_hit(&srv->cache);
	if (len && !e) {
		kweb_stat_add(srv->stats, KWEB_STAT_CACHE_MISSES, 1);
		if (kweb_file_open(srv, page, len, rp->host_len, &f)) {
			kfree(page);
			return false;
		}
		kweb_file_variants(srv, page, &f, &v);
		e = kweb_cache_fill(&srv->cache, page, len, KWEB_ENC_IDENTITY,
				    page, &f, &v, true);
		if (e && !kweb_centry_has_body(e) && !rp->head) {
			kweb_centry_put(e);
			e = NULL;
		}
		if (e)
			kweb_file_close(&f);
	}
	kfree(page);
	if (!len)
		return false;

	if (r->entry)
		kweb_centry_put(r->entry);
	r->entry = NULL;
	kweb_file_close(&r->file);
	if (e) {
		h->content_type = e->content_type;
		h->length = e->size;
		memcpy(etag, e->etag, e->etag_len + 1);
		h->etag.len = e->etag_len;
		r->entry = e;
	} else {
		h->content_type = f.content_type;
		h->length = f.size;
		h->etag.len = kweb_etag_format(etag, f.mtime, f.size);
		r->file = f;
	}
	/*
	 * As nginx: the page's ETag; no Last-Modified off a 200; no Vary,
	 * the page being the same whatever the request accepts.
	 */
	h->etag.p = etag;
	h->vary = false;
	h->has_length = true;
	r->pos = 0;
	r->end = rp->head ? 0 : h->length;
	if (!r->end) {
		if (r->entry)
			kweb_centry_put(r->entry);
		r->entry = NULL;
		kweb_file_close(&r->file);
	}
	kweb_reply_send(conn, rp, h, false);
	return true;
}

static void kweb_reply_error(struct kweb_conn *conn, struct kweb_reply *rp,
			     u16 status)
{
	struct kweb_resp_hdr h;

	kweb_reply_init(rp, &h, status);
	if (!kweb_reply_error_page(conn, rp, &h))
		kweb_reply_send(conn, rp, &h, true);
	kweb_stat_add(conn->srv->stats, KWEB_STAT_REQ_ERROR, 1);
}

void kweb_response_error(struct kweb_conn *conn, u16 status, bool head,
			 bool keep_alive)
{
	struct kweb_reply rp = { .head = head, .keep_alive = keep_alive };

	kweb_reply_error(conn, &rp, status);
}

void kweb_response_release(struct kweb_response *resp)
{
	if (resp->entry)
		kweb_centry_put(resp->entry);
	resp->entry = NULL;
	kweb_pages_release(&resp->batch);
	kfree(resp->batch.bv);
	resp->batch.bv = NULL;
	resp->batch.max = 0;
	kweb_file_close(&resp->file);
	if (resp->hdr_buf == KWEB_HDR_SPARE)
		kweb_spare_put(KWEB_SPARE_HDR, resp->hdr);
	else if (resp->hdr_buf == KWEB_HDR_KEPT)
		kfree(resp->hdr);
	resp->hdr = NULL;
	resp->hdr_buf = KWEB_HDR_SCRATCH;
	resp->pos = 0;
	resp->end = 0;
	resp->hdr_len = 0;
	resp->hdr_sent = 0;
}

static u16 kweb_errno_status(int err)
{
	switch (err) {
	case -ENOENT:
	case -ENOTDIR:
	case -ENAMETOOLONG:	/* a name over NAME_MAX: no such file (nginx) */
		return 404;
	case -EACCES:
	case -EPERM:
	case -EXDEV:	/* a symlink or ".." leading out of the docroot */
	case -ELOOP:
		return 403;
	default:
		return 500;
	}
}

/*
 * 412, 304, 206 or 416 instead of 200, per the conditional fields and
 * Range, in RFC 9110 13.2.2's order.
 */
static u16 kweb_file_status(const struct kweb_request *req,
			    const struct kweb_file *f, const char *etag,
			    size_t etag_len, bool head, u64 *first, u64 *last)
{
	const struct kweb_preconds pc = {
		.if_match = req->if_match,
		.if_unmodified_since = req->if_unmodified_since,
		.if_none_match = req->if_none_match,
		.if_modified_since = req->if_modified_since,
	};
	const struct kweb_str *v;
	u16 status;

	status = kweb_preconditions(&pc, etag, etag_len, f->mtime);
	if (status)
		return status;

	/* RFC 9110 14.2: GET is the only method with ranges. */
	if (head || !req->range.len)
		return 200;
	v = &req->if_range;
	/* Even an empty one: it matches nothing, so the whole file. */
	if (v->p && !kweb_if_range(v->p, v->len, etag, etag_len, f->mtime))
		return 200;
	switch (kweb_range_parse(req->range.p, req->range.len, f->size,
				 first, last)) {
	case KWEB_RANGE_OK:
		return 206;
	case KWEB_RANGE_UNSATISFIABLE:
		return 416;
	default:
		return 200;
	}
}

/*
 * Whether the answer to req, for a file of size and these validators,
 * sends bytes of the file (200 or 206 to a GET); *whole if all of them.
 */
static bool kweb_answer_body(const struct kweb_request *req, loff_t size,
			     s64 mtime, const char *etag, size_t etag_len,
			     bool head, bool *whole)
{
	struct kweb_file f = { .size = size, .mtime = mtime };
	u64 first = 0, last = 0;
	u16 status;

	*whole = false;
	if (head || !size)
		return false;
	status = kweb_file_status(req, &f, etag, etag_len, head, &first,
				  &last);
	if (status == 200)
		*whole = true;
	else if (status == 206)
		*whole = !first && last == size - 1;
	else
		return false;
	return true;
}

/* e can answer req: it holds the file's bytes, or the answer sends none. */
static bool kweb_entry_answers(const struct kweb_request *req,
			       const struct kweb_centry *e, bool head)
{
	bool whole;

	return kweb_centry_has_body(e) ||
	       !kweb_answer_body(req, e->size, e->mtime, e->etag, e->etag_len,
				 head, &whole);
}

/*
 * Whether an entry made for the open file f on the way to answering req
 * should read and pin the file's pages: only if the answer sends them
 * all. HEAD, 304 and ranges are answered from the file; the next GET of
 * the whole file fills the entry, at no cost beyond its own read.
 */
static bool kweb_fill_pages(const struct kweb_request *req,
			    const struct kweb_file *f, bool head)
{
	char etag[KWEB_ETAG_MAX + 1];
	int n = kweb_etag_format(etag, f->mtime, f->size);
	bool whole;

	kweb_answer_body(req, f->size, f->mtime, etag, n, head, &whole);
	return whole;
}

/* What a 200 (or 206, 304, 412, 416) for a file says about it. */
struct kweb_meta {
	loff_t size;
	s64 mtime;
	const char *etag;
	int etag_len;
	const char *last_modified;
	const char *content_type;
	const char *encoding;	/* Content-Encoding; NULL for identity */
	bool vary;		/* the path has precompressed files */
	/* size, last_modified and content_type's fields for a 200, made */
	struct kweb_str file_fields;
};

/*
 * The listener's Cache-Control rule for path, NUL-terminated, the file
 * served or a directory redirected, copied to cc (the site may be
 * replaced once the RCU section ends); with Expires in exp if the
 * listener sends it. A "dir/" is answered with its index.html, as by
 * nginx's index, so that ".html" rules apply to it: the buffer
 * (KWEB_PATH_BUF) gets that name.
 */
static void kweb_reply_cache_rule(struct kweb_conn *conn,
				  struct kweb_reply *rp, char *path,
				  struct kweb_resp_hdr *h)
{
	char *cc = rp->cc, *exp = rp->exp;
	const struct kweb_cache_rule *rule;
	const struct kweb_site *site;
	size_t len;

	kweb_rcu_lock();
	site = kweb_rcu_deref(conn->srv->site);
	/* Most sites have none: no walk over the path then. */
	if (!site->cache_rules.nr)
		goto out;
	len = strlen(path);
	if (len && path[len - 1] == '/' && len <= KWEB_PATH_NORM) {
		memcpy(path + len, "index.html", sizeof("index.html"));
		len += sizeof("index.html") - 1;
	}
	rule = kweb_cache_rule_match(&site->cache_rules, path, len);
	if (rule) {
		memcpy(cc, rule->value.p, rule->value.len);
		h->cache_control.p = cc;
		h->cache_control.len = rule->value.len;
		if (site->expires && rule->max_age >= 0) {
			kweb_http_date_format(ktime_get_real_seconds() +
					      rule->max_age, exp);
			h->expires = exp;
		}
	}
out:
	kweb_rcu_unlock();
}

/*
 * Answer a request for a file described by m; the body comes from
 * conn->resp's entry or file, whichever the caller set. Never sleeps.
 */
static void kweb_reply_body(struct kweb_conn *conn, struct kweb_reply *rp,
			    const struct kweb_request *req,
			    const struct kweb_meta *m)
{
	struct kweb_response *r = &conn->resp;
	struct kweb_file f = { .size = m->size, .mtime = m->mtime };
	struct kweb_resp_hdr h __kweb_filled_by_callee;	/* kweb_reply_init() */
	u64 first = 0, last = 0;
	u16 status;

	status = kweb_file_status(req, &f, m->etag, m->etag_len, rp->head,
				  &first, &last);
	kweb_reply_init(rp, &h, status);
	h.size = m->size;
	h.vary = m->vary;
	if (status == 416 || status == 412) {
		/* The body is an error page: none of the file's fields. */
		h.unsatisfied_range = status == 416;
		if (!kweb_reply_error_page(conn, rp, &h))
			kweb_reply_send(conn, rp, &h, true);
		return;
	}
	/*
	 * Never after Date (RFC 9110 8.8.2.1): an mtime ahead of the clock
	 * (a copy from a host ahead, touch -d) is sent as Date instead.
	 */
	h.last_modified = m->mtime > rp->now ? rp->date : m->last_modified;
	h.etag.p = m->etag;
	h.etag.len = m->etag_len;
	/* As nginx's expires and add_header: on 200, 206 and 304. */
	if (rp->path)
		kweb_reply_cache_rule(conn, rp, rp->path, &h);
	if (status == 304) {
		/* Validators and Vary (RFC 9110 15.4.5), as nginx. */
		kweb_reply_send(conn, rp, &h, false);
		return;
	}
	h.content_encoding = m->encoding;
	if (status == 206) {
		h.content_range = true;
		h.first = first;
		h.last = last;
	} else if (m->size) {
		last = m->size - 1;
	}
	h.content_type = m->content_type;
	h.has_length = true;
	h.length = m->size ? last - first + 1 : 0;
	/* Made with the mtime's date: not if Date had to stand in for it. */
	if (status == 200 && h.last_modified == m->last_modified)
		h.file_fields = m->file_fields;
	/* As nginx: a 206 does not say it again. */
	h.accept_ranges = status == 200;
	if (!rp->head && h.length) {
		r->pos = first;
		r->end = last + 1;
	}
	kweb_reply_send(conn, rp, &h, false);
}

/*
 * Which precompressed files of a path count (KWEB_ENC_BIT()s): its
 * variants, if serving them is on.
 */
static u8 kweb_variants_on(struct kweb_server *srv, u8 variants)
{
	bool on;

	kweb_rcu_lock();
	on = kweb_site_precompressed(kweb_rcu_deref(srv->site),
				     kweb_srv_config(srv));
	kweb_rcu_unlock();
	return on ? variants : 0;
}

/* The coding to answer req in, of those variants. */
static enum kweb_encoding kweb_request_encoding(const struct kweb_request *req,
						u8 variants)
{
	u8 ok;

	/* Most files have no precompressed sibling: nothing to weigh. */
	if (!variants)
		return KWEB_ENC_IDENTITY;
	ok = kweb_accept_encoding_mask(&req->accept_enc);
	ok = kweb_encoding_sendable(ok, req->minor == 0, req->via);
	return kweb_encoding_choose(ok, variants);
}

/*
 * Serve from a cache entry, in its coding; vary if the path has
 * precompressed files. Takes over the caller's reference.
 */
static void kweb_reply_entry(struct kweb_conn *conn, struct kweb_reply *rp,
			     const struct kweb_request *req,
			     struct kweb_centry *e, bool vary)
{
	struct kweb_meta m = {
		.size = e->size, .mtime = e->mtime,
		.etag = e->etag, .etag_len = e->etag_len,
		.last_modified = e->last_modified,
		.content_type = e->content_type,
		.vary = vary,
		.file_fields = e->file_fields,
	};

	if (e->enc != KWEB_ENC_IDENTITY)
		m.encoding = kweb_encoding_name(e->enc);

	conn->resp.entry = e;
	kweb_reply_body(conn, rp, req, &m);
	/* No body to send from it (an error page may have taken its place). */
	if (conn->resp.entry == e && !conn->resp.end) {
		conn->resp.entry = NULL;
		kweb_centry_put(e);
	}
}

/* Serve from the open file in conn->resp.file, in coding enc. */
static void kweb_reply_file(struct kweb_conn *conn, struct kweb_reply *rp,
			    const struct kweb_request *req,
			    enum kweb_encoding enc, bool vary)
{
	struct kweb_file *f = &conn->resp.file;
	char etag[KWEB_ETAG_MAX + 1];
	char lm[KWEB_HTTP_DATE_LEN + 1];
	struct kweb_meta m = {
		.size = f->size, .mtime = f->mtime, .etag = etag,
		.last_modified = lm, .content_type = f->content_type,
		.vary = vary,
	};

	if (enc != KWEB_ENC_IDENTITY)
		m.encoding = kweb_encoding_name(enc);

	m.etag_len = kweb_etag_format(etag, f->mtime, f->size);
	kweb_http_date_format(f->mtime, lm);
	kweb_reply_body(conn, rp, req, &m);
	if (!conn->resp.end)
		kweb_file_close(f);
}

static void kweb_reply_init_req(struct kweb_conn *conn, struct kweb_reply *rp,
				const struct kweb_request *req,
				struct kweb_req_scratch *sc)
{
	rp->path = sc->path + KWEB_HOST_ROOM;
	rp->host_len = 0;
	rp->cc = sc->cc;
	rp->exp = sc->exp;
	rp->head = req->method == KWEB_METHOD_HEAD;
	/* The last request a connection may make is told so. */
	rp->keep_alive = req->keep_alive &&
			 conn->nr_requests + 1 < kweb_limits(conn->srv).max_requests;
	rp->http10 = req->minor == 0;
}

/*
 * The routes of the listener, its own or module-wide, which config-set or
 * listener-set may replace meanwhile.
 */
static enum kweb_route kweb_request_route(struct kweb_conn *conn,
					  const struct kweb_target *t,
					  const char *path)
{
	const struct kweb_config *cfg;
	const struct kweb_site *site;
	enum kweb_route why;

	kweb_rcu_lock();
	site = kweb_rcu_deref(conn->srv->site);
	cfg = kweb_srv_config(conn->srv);
	why = kweb_route_target2(&kweb_site_prefixes(site, cfg)->r,
				 &kweb_site_extensions(site, cfg)->r, t, path);
	kweb_rcu_unlock();
	return why;
}

/*
 * With virtual hosts, write "/" and the request's host directory into the
 * KWEB_HOST_ROOM bytes before path: its length; 0 without virtual hosts;
 * -EINVAL for a host that gets 400. An absolute-form target's host wins
 * over Host (RFC 9112 3.2.2); none at all is the default's. Whether the
 * directory exists is the worker's to tell (kweb_request_vhost()):
 * softirq's cache lookup for a host without one just misses.
 */
static int kweb_request_host(struct kweb_conn *conn,
			     const struct kweb_request *req,
			     const struct kweb_target *t, char *path)
{
	const struct kweb_str *h = t->authority.len ? &t->authority :
				   &req->host;
	const struct kweb_site *site;
	char *dir = path - KWEB_HOST_ROOM;	/* its NUL lands before path */
	int n = 0;
	bool on;

	kweb_rcu_lock();
	site = kweb_rcu_deref(conn->srv->site);
	on = site->vhosts;
	if (on) {
		n = kweb_host_dir(h->p ?: "", h->len, dir);
		if (!n)
			n = strscpy(dir, site->vhost_default,
				    KWEB_HOST_MAX + 1);
	}
	kweb_rcu_unlock();
	if (!on)
		return 0;
	if (n < 0)
		return n;
	memmove(path - n, dir, n);
	path[-n - 1] = '/';
	return n + 1;
}

/*
 * The worker's side: a host without a directory of its own is served
 * from the default's. One the identity may not search is the host's all
 * the same (403, as nginx with a root it cannot read). Returns the length
 * of "/HOST" before path.
 */
static unsigned int kweb_request_vhost(struct kweb_conn *conn, char *path,
				       unsigned int host_len)
{
	char dir[KWEB_HOST_MAX + 2];
	int n;

	memcpy(dir, path - host_len, host_len);
	dir[host_len] = '\0';
	n = kweb_file_dir(conn->srv, dir);
	if (n != -ENOENT && n != -ENOTDIR)
		return host_len;
	rcu_read_lock();
	n = strscpy(dir + 1, rcu_dereference(conn->srv->site)->vhost_default,
		    KWEB_HOST_MAX + 1);
	rcu_read_unlock();
	memcpy(path - n - 1, dir, n + 1);
	return n + 1;
}

static bool kweb_request_has_page(struct kweb_conn *conn, u16 status)
{
	bool has;

	kweb_rcu_lock();
	has = kweb_error_page(&kweb_rcu_deref(conn->srv->site)->pages,
			      status);
	kweb_rcu_unlock();
	return has;
}

bool kweb_request_cached(struct kweb_conn *conn, struct kweb_request *req,
			 enum kweb_route *why)
{
	struct kweb_req_scratch *sc = &this_cpu_ptr(kweb_scratch)->req;
	char *path = sc->path + KWEB_HOST_ROOM;
	struct kweb_cache *c = &conn->srv->cache;
	struct kweb_centry *e, *ve;
	enum kweb_encoding enc;
	struct kweb_reply rp;
	struct kweb_target t __kweb_filled_by_callee;	/* kweb_path_normalize() */
	size_t klen;
	char *key;
	u8 variants;
	int hlen, err;

	/* A body to drop, or a path kweb cannot take: the worker's. */
	*why = KWEB_ROUTE_SERVE;
	if (req->has_content_length && req->content_length)
		return false;
	err = kweb_path_normalize(req->target.p, req->target.len, path,
				  KWEB_PATH_NORM, &t);
	if (err) {
		*why = kweb_route_bad_target(&t, err);
		return false;
	}
	*why = kweb_request_route(conn, &t, path);
	if (*why != KWEB_ROUTE_SERVE)
		return false;
	/* A 416 or 412 may need its page opened: the worker's. */
	if (req->range.len && kweb_request_has_page(conn, 416))
		return false;
	if ((req->if_match.p || req->if_unmodified_since.p) &&
	    kweb_request_has_page(conn, 412))
		return false;
	hlen = kweb_request_host(conn, req, &t, path);
	if (hlen < 0)
		return false;
	/* The cache's key: the path below the docroot, the host's included. */
	key = path - hlen;
	klen = t.path_len + hlen;
	e = kweb_cache_lookup(c, key, klen, KWEB_ENC_IDENTITY);
	if (!e)
		return false;
	variants = kweb_variants_on(conn->srv, e->variants);
	enc = kweb_request_encoding(req, variants);
	if (enc != KWEB_ENC_IDENTITY) {
		ve = kweb_cache_lookup(c, key, klen, enc);
		kweb_centry_put(e);
		if (!ve)
			return false;
		e = ve;
	}
	kweb_reply_init_req(conn, &rp, req, sc);
	/* Without the file's pages, a body is the worker's to read. */
	if (!kweb_entry_answers(req, e, rp.head)) {
		kweb_centry_put(e);
		return false;
	}
	kweb_cache_hit(c);
	if (enc != KWEB_ENC_IDENTITY)
		kweb_cache_hit(c);	/* the file's own entry, which led here */
	rp.host_len = hlen;
	kweb_reply_entry(conn, &rp, req, e, variants);
	return true;
}

/*
 * Fill the cache for the open file f, found at file_path and served for
 * key in coding enc, on the way to answering req: its pages only if the
 * answer sends them whole (kweb_fill_pages()). Not again if the key had
 * an entry without pages already (had_meta) and would only get another
 * such. Returns the entry if it can answer req, else NULL: the caller
 * answers from f.
 */
static struct kweb_centry *kweb_reply_fill(struct kweb_conn *conn,
					   const struct kweb_request *req,
					   bool head, const char *key,
					   size_t len, enum kweb_encoding enc,
					   const char *file_path,
					   struct kweb_file *f,
					   const struct kweb_variants *v,
					   bool had_meta)
{
	struct kweb_cache *c = &conn->srv->cache;
	bool pages = kweb_fill_pages(req, f, head);
	struct kweb_centry *e;

	if (had_meta && !(pages && kweb_cache_fits(c, f->size)))
		return NULL;
	e = kweb_cache_fill(c, key, len, enc, file_path, f, v, pages);
	if (e && !kweb_entry_answers(req, e, head)) {
		kweb_centry_put(e);
		e = NULL;
	}
	return e;
}

/*
 * Answer from the precompressed file in coding enc of the request path
 * (path, len; "index.html" follows a directory's in the buffer), whose
 * uncompressed file has base's Content-Type and v's siblings. From the
 * cache, or from the file, cached if it may be. False if there is none
 * after all (removed since, or not servable): the caller serves the
 * uncompressed.
 */
static bool kweb_reply_variant(struct kweb_conn *conn, struct kweb_reply *rp,
			       const struct kweb_request *req, char *path,
			       size_t len, enum kweb_encoding enc,
			       const struct kweb_file *base,
			       struct kweb_variants *v)
{
	struct kweb_server *srv = conn->srv;
	struct kweb_file vf = {};
	struct kweb_centry *ve;
	bool had_meta = false;
	size_t flen;

	ve = kweb_cache_lookup(&srv->cache, path, len, enc);
	if (ve && kweb_entry_answers(req, ve, rp->head)) {
		kweb_cache_hit(&srv->cache);
		kweb_reply_entry(conn, rp, req, ve, true);
		return true;
	}
	if (ve) {
		had_meta = true;
		kweb_centry_put(ve);
	}
	kweb_stat_add(srv->stats, KWEB_STAT_CACHE_MISSES, 1);
	flen = strlen(path);
	strscpy(path + flen, kweb_encoding_suffix(enc),
		KWEB_ENC_SUFFIX_MAX + 1);
	if (kweb_file_open(srv, path, strlen(path), rp->host_len, &vf)) {
		path[flen] = '\0';
		return false;
	}
	/* The type of what was asked for, as the MIME map had it then. */
	vf.content_type = base->content_type;
	vf.mime_gen = base->mime_gen;
	/* NAME is missing (kweb_reply_orphan()): the directory's is now. */
	if (!v->dir_stamp.ctime.tv_sec && !v->dir_stamp.ctime.tv_nsec)
		kweb_file_dir_stamp(&vf, &v->dir_stamp);
	ve = kweb_reply_fill(conn, req, rp->head, path, len, enc, path, &vf,
			     v, had_meta);
	path[flen] = '\0';
	if (ve) {
		kweb_file_close(&vf);
		kweb_reply_entry(conn, rp, req, ve, true);
		return true;
	}
	conn->resp.file = vf;
	kweb_reply_file(conn, rp, req, enc, true);
	return true;
}

/*
 * The request path key (klen bytes, not a "dir/") names no file. As
 * nginx's gzip_static and brotli_static, a NAME.br or NAME.gz beside it
 * is served all the same to a client that accepts its coding, with
 * NAME's Content-Type. True if answered: with that file, or with a 404
 * that says Vary (as nginx's gzip_vary) when the request accepts none of
 * the codings there; false if there is no such file, or the backend is
 * to have the request: the caller goes on as for any missing file. The
 * worker's only: no entry of NAME's own tells softirq of its siblings.
 */
static bool kweb_reply_orphan(struct kweb_conn *conn, struct kweb_reply *rp,
			      const struct kweb_request *req, char *key,
			      size_t klen)
{
	struct kweb_server *srv = conn->srv;
	struct kweb_variants v = {};
	struct kweb_file base = {};
	enum kweb_encoding enc;
	struct kweb_resp_hdr h;
	u8 variants;

	/* No file of NAME's: base says only where its host's directory ends. */
	base.host_len = rp->host_len;
	kweb_file_variants(srv, key, &base, &v);
	variants = kweb_variants_on(srv, v.mask);
	if (!variants)
		return false;
	enc = kweb_request_encoding(req, variants);
	if (enc != KWEB_ENC_IDENTITY) {
		base.mime_gen = kweb_cache_mime_gen(&srv->cache);
		rcu_read_lock();
		base.content_type =
			kweb_site_mime_lookup(rcu_dereference(srv->site),
					      kweb_config(srv->net), key, klen);
		rcu_read_unlock();
		if (kweb_reply_variant(conn, rp, req, key, klen, enc, &base,
				       &v))
			return true;
	}
	if (kweb_backend_missing(srv))
		return false;
	kweb_reply_init(rp, &h, 404);
	h.vary = true;
	if (!kweb_reply_error_page(conn, rp, &h))
		kweb_reply_send(conn, rp, &h, true);
	kweb_stat_add(srv->stats, KWEB_STAT_REQ_ERROR, 1);
	return true;
}

static enum kweb_route kweb_request_serve(struct kweb_conn *conn,
					  struct kweb_request *req,
					  struct kweb_req_scratch *sc)
{
	char *path = sc->path + KWEB_HOST_ROOM;
	struct kweb_file *f = &conn->resp.file;
	struct kweb_cache *c = &conn->srv->cache;
	enum kweb_encoding enc;
	struct kweb_reply rp;
	struct kweb_target t;
	struct kweb_resp_hdr h;
	struct kweb_variants v = {};
	struct kweb_centry *e;
	bool had_meta = false;
	enum kweb_route why;
	size_t klen;
	char *key;
	u8 variants;
	int err;

	kweb_reply_init_req(conn, &rp, req, sc);

	err = kweb_path_normalize(req->target.p, req->target.len, path,
				  KWEB_PATH_NORM, &t);
	if (err) {
		why = kweb_route_bad_target(&t, err);
		if (why != KWEB_ROUTE_SERVE)
			return why;
		rp.keep_alive = false;
		kweb_reply_error(conn, &rp, 400);
		return KWEB_ROUTE_SERVE;
	}
	why = kweb_request_route(conn, &t, path);
	if (why != KWEB_ROUTE_SERVE)
		return why;
	err = kweb_request_host(conn, req, &t, path);
	if (err < 0) {
		/* Not a host name, e.g. "../x" or "a/b": as nginx, 400. */
		rp.path = NULL;
		kweb_reply_error(conn, &rp, 400);
		return KWEB_ROUTE_SERVE;
	}
	if (err)
		err = kweb_request_vhost(conn, path, err);
	rp.host_len = err;
	key = path - rp.host_len;
	klen = t.path_len + rp.host_len;

	/* Softirq may have missed only for want of send space or budget. */
	e = kweb_cache_lookup(c, key, klen, KWEB_ENC_IDENTITY);
	if (e) {
		bool ok;

		variants = kweb_variants_on(conn->srv, e->variants);
		enc = kweb_request_encoding(req, variants);
		if (enc != KWEB_ENC_IDENTITY) {
			struct kweb_file base = {
				.content_type = e->content_type,
				.mime_gen = e->mime_gen,
			};

			v.mask = e->variants;
			v.dir_stamp = e->dir_stamp;

			/* The file served for path, for its variant's name. */
			if (path[t.path_len - 1] == '/')
				memcpy(path + t.path_len, "index.html",
				       sizeof("index.html"));
			if (kweb_reply_variant(conn, &rp, req, key, klen, enc,
					       &base, &v)) {
				kweb_cache_hit(c);
				kweb_centry_put(e);
				return KWEB_ROUTE_SERVE;
			}
			/* Not servable now (chmod): look again next time. */
			kweb_cache_flush_key(c, key, klen, KWEB_CACHE_STALE);
			path[t.path_len] = '\0';
		}
		ok = kweb_entry_answers(req, e, rp.head);
		if (ok) {
			kweb_cache_hit(c);
			kweb_reply_entry(conn, &rp, req, e, variants);
			return KWEB_ROUTE_SERVE;
		}
		/* Its validators, not its bytes: read them from the file. */
		kweb_centry_put(e);
		had_meta = enc == KWEB_ENC_IDENTITY;
	}
	kweb_stat_add(conn->srv->stats, KWEB_STAT_CACHE_MISSES, 1);
	err = kweb_file_open(conn->srv, key, klen, rp.host_len, f);
	if (err == -EISDIR) {
		kweb_reply_init(&rp, &h, 301);
		h.location.p = path;
		h.location.len = t.path_len;
		/* nginx's expires and add_header apply to redirects too. */
		kweb_reply_cache_rule(conn, &rp, path, &h);
		kweb_reply_send(conn, &rp, &h, true);
		return KWEB_ROUTE_SERVE;
	}
	/* NAME missing, NAME.gz there: nginx's gzip_static serves it. */
	if (err == -ENOENT && path[t.path_len - 1] != '/' &&
	    kweb_reply_orphan(conn, &rp, req, key, klen))
		return KWEB_ROUTE_SERVE;
	if (kweb_errno_status(err) == 404 && kweb_backend_missing(conn->srv))
		return KWEB_ROUTE_MISSING;
	if (err) {
		u16 status = kweb_errno_status(err);

		if (status == 500) {
			pr_warn_ratelimited("open %s: error %d\n", key, err);
			rp.keep_alive = false;
		}
		kweb_reply_error(conn, &rp, status);
		return KWEB_ROUTE_SERVE;
	}
	/* key is now the file opened: its index.html for a "dir/". */
	kweb_file_variants(conn->srv, key, f, &v);
	variants = kweb_variants_on(conn->srv, v.mask);
	enc = kweb_request_encoding(req, variants);
	if (enc != KWEB_ENC_IDENTITY) {
		struct kweb_file base = *f;

		/*
		 * Cached even when a variant is served, softirq starting
		 * from it; without pages: nobody asked for its bytes.
		 */
		if (!had_meta) {
			e = kweb_cache_fill(c, key, klen, KWEB_ENC_IDENTITY, key,
					    f, &v, false);
			if (e)
				kweb_centry_put(e);
		}
		had_meta = true;
		f->filp = NULL;
		if (kweb_reply_variant(conn, &rp, req, key, klen, enc,
				       &base, &v)) {
			kweb_file_close(&base);
			return KWEB_ROUTE_SERVE;
		}
		*f = base;
	}
	e = kweb_reply_fill(conn, req, rp.head, key, klen, KWEB_ENC_IDENTITY,
			    key, f, &v, had_meta);
	if (e) {
		kweb_file_close(f);
		kweb_reply_entry(conn, &rp, req, e, variants);
	} else {
		kweb_reply_file(conn, &rp, req, KWEB_ENC_IDENTITY, variants);
	}
	return KWEB_ROUTE_SERVE;
}

/* The listener's https-redirect port, or 0: never over TLS itself. */
u16 kweb_request_https_port(struct kweb_conn *conn)
{
	u16 port;

	if (conn->file)
		return 0;
	kweb_rcu_lock();
	port = kweb_rcu_deref(conn->srv->site)->https_redirect;
	kweb_rcu_unlock();
	return port;
}

/*
 * A listener with https-redirect answers every request but ACME's
 * challenges with a 301 to the same URL over HTTPS, whatever its method,
 * as nginx's "return 301 https://$host$request_uri" in a server block.
 * The host is that of the target or Host, as kweb_host_dir() makes it;
 * without one (HTTP/1.0), or one that names no directory, the address
 * the client reached. Returns whether it answered.
 */
static bool kweb_request_redirect(struct kweb_conn *conn,
				  const struct kweb_request *req)
{
	const struct kweb_str *t = &req->target;
	u16 port = kweb_request_https_port(conn);
	struct kweb_str auth = req->host;
	char host[KWEB_HOST_MAX + 1];
	struct kweb_resp_hdr h;
	struct kweb_reply rp;
	const char *s;
	char *loc;
	int n;

	if (!port || req->h2_preface || !t->len)
		return false;
	/* An absolute-form target's authority wins over Host. */
	if (t->p[0] != '/') {
		s = strnstr(t->p, "://", t->len);
		if (!s)
			return false;
		auth.p = s + 3;
		auth.len = t->len - (auth.p - t->p);
		for (n = 0; n < auth.len; n++)
			if (auth.p[n] == '/' || auth.p[n] == '?')
				break;
		auth.len = n;
	}
	n = kweb_host_dir(auth.p ?: "", auth.len, host);
	if (n < 0)
		return false;
	if (!n && conn->sk->sk_family == AF_INET6 &&
	    !ipv6_addr_v4mapped(&conn->sk->sk_v6_rcv_saddr))
		snprintf(host, sizeof(host), "[%pI6c]",
			 &conn->sk->sk_v6_rcv_saddr);
	else if (!n)
		snprintf(host, sizeof(host), "%pI4",
			 &inet_sk(conn->sk)->inet_rcv_saddr);
	loc = kmalloc(KWEB_LOCATION_MAX, GFP_KERNEL);
	if (!loc)
		return false;
	n = kweb_https_location(loc, KWEB_LOCATION_MAX, host, port, t->p,
				t->len);
	if (n < 0) {
		kfree(loc);
		/* ACME's, another form: as any request; too long: 414. */
		if (n != -ENOSPC)
			return false;
		kweb_response_error(conn, 414, req->method == KWEB_METHOD_HEAD,
				    false);
		return true;
	}
	memset(&rp, 0, sizeof(rp));
	rp.head = req->method == KWEB_METHOD_HEAD;
	/* A chunked body cannot be told from the next request: close. */
	rp.keep_alive = req->keep_alive && !req->chunked &&
			conn->nr_requests + 1 <
			kweb_limits(conn->srv).max_requests;
	rp.http10 = req->minor == 0;
	kweb_reply_init(&rp, &h, 301);
	h.redirect.p = loc;
	h.redirect.len = n;
	kweb_reply_send(conn, &rp, &h, true);
	kfree(loc);
	return true;
}

enum kweb_route kweb_request_handle(struct kweb_conn *conn,
				    enum kweb_parse_result res,
				    struct kweb_request *req)
{
	struct kweb_req_scratch *sc;
	enum kweb_route why;

	if (res == KWEB_PARSE_OK && kweb_request_redirect(conn, req))
		return KWEB_ROUTE_SERVE;
	why = kweb_route_request(res, req);
	if (why != KWEB_ROUTE_SERVE)
		return why;
	if (res == KWEB_PARSE_ERROR) {
		kweb_response_error(conn, req->status,
				    req->method == KWEB_METHOD_HEAD, false);
		return KWEB_ROUTE_SERVE;
	}
	/* The normalized path: only while the request is being resolved. */
	sc = kweb_spare_get(KWEB_SPARE_REQ, sizeof(*sc));
	if (!sc) {
		kweb_response_error(conn, 503, req->method == KWEB_METHOD_HEAD,
				    false);
		return KWEB_ROUTE_SERVE;
	}
	why = kweb_request_serve(conn, req, sc);
	kweb_spare_put(KWEB_SPARE_REQ, sc);
	return why;
}
