// SPDX-License-Identifier: GPL-2.0
/*
 * Sending a response on a locked TCP socket without blocking: the header
 * from a buffer, the body as the file's pages handed to TCP (zero-copy).
 * A full send buffer returns -EAGAIN; sk_write_space brings us back, if
 * the connection has a struct socket of its own (see kweb_send_locked()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <net/tcp.h>

#include "compat.h"
#include "kweb.h"
#include "tls.h"

/*
 * TCP's send path assumes a socket: a send that comes up short sets
 * SOCK_NOSPACE in sk->sk_socket->flags and goes through
 * sk_stream_wait_memory(), which queues on sk->sk_wq, and ACKs call
 * sk_write_space() only while that flag is set. A connection gets a
 * socket (a sockfs inode) only when it must wait for room; until then
 * softirq sends with this CPU's placeholder grafted for the duration,
 * and a short send hands the connection to the worker, which gives it
 * its own socket and tries again. Softirq owns the placeholder: it does
 * not nest, and never leaves it grafted.
 */
static struct socket * __percpu *kweb_placeholder;

static struct socket *kweb_placeholder_graft(struct sock *sk)
{
	struct socket *ph;

	if (sk->sk_socket)
		return NULL;
	if (WARN_ON_ONCE(!in_softirq()))
		return NULL;
	ph = *this_cpu_ptr(kweb_placeholder);
	ph->flags = 0;
	rcu_assign_pointer(sk->sk_wq, &ph->wq);
	sk_set_socket(sk, ph);
	return ph;
}

static void kweb_placeholder_ungraft(struct sock *sk, struct socket *ph)
{
	if (!ph)
		return;
	sk_set_socket(sk, NULL);
	RCU_INIT_POINTER(sk->sk_wq, NULL);
}

/*
 * The bytes TCP copies (headers, error pages) go to a page fragment, by
 * default the socket's own, sk->sk_frag: a 32 KiB page allocated (and
 * zeroed, init_on_alloc) on a connection's first response and pinned until
 * it closes, for a header of a few hundred bytes. User sockets share their
 * task's, current->task_frag, which softirq must not touch. kweb's
 * connections borrow a fragment per CPU in softirq, which does not nest,
 * and the worker's own task_frag in process context. TCP holds a page
 * reference for the bytes it keeps, and a fragment only moves forward (or
 * starts its page over when no reference but its own is left): bytes in
 * flight are never written over, whichever socket they were sent on.
 *
 * Under load a spent fragment's page is nearly always still held by skbs
 * in flight, and skb_page_frag_refill() would then allocate (and zero) a
 * new one every hundred-odd responses. Each CPU keeps two: when one is
 * spent and held, kweb moves to the other if TCP has let go of it, and
 * that one starts over in place. Only this CPU takes references on them,
 * so a count of one, once read, stays one.
 */
struct kweb_frag_pair {
	struct page_frag frag[2];
	unsigned int cur;
};

static DEFINE_PER_CPU(struct kweb_frag_pair, kweb_softirq_frags);

/* TCP holds part of its page: it cannot start over in place. */
static bool kweb_frag_held(const struct page_frag *frag)
{
	return frag->page && page_ref_count(frag->page) != 1;
}

static bool kweb_frag_spent(const struct page_frag *frag, unsigned int len)
{
	return kweb_frag_held(frag) && frag->offset + len > frag->size;
}

/* The fragment for @len bytes (a hint: TCP may take them in pieces). */
static struct page_frag *kweb_frag(unsigned int len)
{
	struct kweb_frag_pair *pair;
	struct page_frag *other;

	if (!in_softirq())
		return &current->task_frag;
	pair = this_cpu_ptr(&kweb_softirq_frags);
	if (!kweb_frag_spent(&pair->frag[pair->cur], len))
		return &pair->frag[pair->cur];
	other = &pair->frag[pair->cur ^ 1];
	if (kweb_frag_held(other))
		return &pair->frag[pair->cur];
	pair->cur ^= 1;
	return other;
}

static int kweb_send_buf(struct kweb_conn *conn, const void *data,
			 size_t len, int flags)
{
	struct sock *sk = conn->sk;
	struct kvec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr msg = { .msg_flags = flags };
	struct page_frag *frag;
	int n;

	/* kTLS copies (and encrypts) it into a record of its own. */
	if (conn->file)
		return kweb_tls_send_buf(conn, data, len, flags);
	frag = kweb_frag(len);
	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, &iov, 1, len);
	/* sk_page_frag() is sk->sk_frag: kweb's sockets leave task_frag off. */
	swap(*frag, sk->sk_frag);
	n = tcp_sendmsg_locked(sk, &msg, len);
	swap(*frag, sk->sk_frag);
	return n;
}

/* Slab or otherwise unsuitable pages cannot be referenced from skbs. */
static int kweb_send_copy(struct kweb_conn *conn, struct page *page,
			  int offset, size_t len, int flags)
{
	void *p = kmap_local_page(page);
	int n = kweb_send_buf(conn, p + offset, len, flags);

	kunmap_local(p);
	return n;
}

/* Pages TCP (or kTLS) may hold references on, len bytes of them. */
static int kweb_send_pages(struct kweb_conn *conn, struct bio_vec *bv,
			   unsigned int nr, size_t len, int flags)
{
	int n = conn->file ? kweb_tls_send_pages(conn, bv, nr, len, flags) :
		kweb_tcp_send_pages(conn->sk, bv, nr, len, flags);

	if (n > 0)
		kweb_stat_add(conn->srv->stats, KWEB_STAT_BODY_SPLICED, n);
	return n;
}

/* Part of one page: by reference where TCP may keep one, else copied. */
static int kweb_send_page(struct kweb_conn *conn, struct page *page,
			  size_t off, size_t len, int flags)
{
	struct bio_vec bv;
	int n;

	if (sendpage_ok(page)) {
		bvec_set_page(&bv, page, len, off);
		n = kweb_send_pages(conn, &bv, 1, len, flags);
	} else {
		n = kweb_send_copy(conn, page, off, len, flags);
		if (n > 0)
			kweb_stat_add(conn->srv->stats, KWEB_STAT_BODY_COPIED, n);
	}
	return n;
}

/*
 * MSG_MORE while more of the response follows, and on the tail of a
 * connection's last response: kweb's FIN follows it at once
 * (kweb_conn_response_done()) and goes out in the same segment.
 */
static int kweb_send_flags(const struct kweb_conn *conn, bool more)
{
	const struct kweb_response *r = &conn->resp;

	/*
	 * Not for TLS: kTLS holds a record open while MSG_MORE says more
	 * follows, and our FIN is preceded by a close_notify record.
	 */
	if (conn->file)
		return MSG_DONTWAIT | (more ? MSG_MORE : 0);
	return MSG_DONTWAIT | (more || !r->keep_alive ? MSG_MORE : 0);
}

/*
 * The cached body's next bytes, within one page: NULL if that page is no
 * longer the file's. A file truncated under us: never send what is no
 * longer the file's; the caller closes and the client sees a short body.
 * Only the page matters: bytes written in place are in it, and a file
 * renamed over or unlinked (which moves its ctime) keeps its pages and is
 * sent whole, as nginx does.
 */
static struct page *kweb_entry_page(const struct kweb_response *r,
				    size_t *off, size_t *len)
{
	pgoff_t index = r->pos >> PAGE_SHIFT;

	*off = offset_in_page(r->pos);
	*len = min_t(loff_t, PAGE_SIZE - *off, r->end - r->pos);
	/* An entry without the file's pages never gets here; if it did, end. */
	if (WARN_ON_ONCE(index >= r->entry->nr_pages))
		return NULL;
	return kweb_centry_page_ok(r->entry, index) ?
	       r->entry->pages[index] : NULL;
}

/*
 * The cached body's next pages into bv, up to KWEB_SEND_BATCH of them,
 * as long as each is still the file's and TCP may hold a reference on
 * it; their bytes into *bytes. Returns how many.
 */
static unsigned int kweb_entry_pages(const struct kweb_response *r,
				     struct bio_vec *bv, size_t *bytes)
{
	const struct kweb_centry *e = r->entry;
	loff_t pos = r->pos;
	unsigned int nr = 0;

	*bytes = 0;
	while (nr < KWEB_SEND_BATCH && pos < r->end) {
		pgoff_t index = pos >> PAGE_SHIFT;
		size_t off = offset_in_page(pos);
		size_t len = min_t(loff_t, PAGE_SIZE - off, r->end - pos);

		if (index >= e->nr_pages || !kweb_centry_page_ok(e, index) ||
		    !sendpage_ok(e->pages[index]))
			break;
		bvec_set_page(&bv[nr++], e->pages[index], len, off);
		pos += len;
		*bytes += len;
	}
	return nr;
}

/*
 * From a cache entry, whose pages it holds: never sleeps. TCP (or kTLS,
 * on 6.12) gets up to KWEB_SEND_BATCH pages a call, as splice() hands it
 * a pipe's worth: a large body costs a sixteenth of the calls, each with
 * its own locking, checks and push. Any page that cannot go so goes
 * alone, the way that tells it apart.
 */
static int kweb_send_entry(struct kweb_conn *conn)
{
	struct kweb_response *r = &conn->resp;
	struct bio_vec bv[KWEB_SEND_BATCH];

	while (r->pos < r->end) {
		unsigned int nr;
		size_t off, len;
		struct page *page;
		int n;

		nr = kweb_entry_pages(r, bv, &len);
		if (nr > 1) {
			n = kweb_send_pages(conn, bv, nr, len,
					    kweb_send_flags(conn,
							    r->pos + len <
							    r->end));
		} else {
			page = kweb_entry_page(r, &off, &len);
			if (!page)
				return -ESTALE;
			n = kweb_send_page(conn, page, off, len,
					   kweb_send_flags(conn,
							   r->pos + len <
							   r->end));
		}
		if (n < 0)
			return n;
		if (!n)
			return -EAGAIN;
		r->pos += n;
	}
	return 0;
}

/*
 * The rest of the header and the body's first page at once, the header
 * from a page fragment TCP can hold a reference on, as it holds the
 * body's: one send (on 6.12 one tcp_sendmsg_locked() instead of two, each
 * with its own push, and its probe timer armed while the header waits
 * for the body) for the response of a small cached file. The fragment
 * moves past the header whatever TCP takes: it never writes over bytes
 * it gave out. Returns 0 with as much sent as TCP took, -EAGAIN or an
 * error from TCP, or 1 if the two must go apart: among others for a
 * stale page, so that the header leaves before kweb_send_entry() fails
 * and the client sees a body cut short, not a close without a response.
 */
static int kweb_send_head_entry(struct kweb_conn *conn)
{
	struct kweb_response *r = &conn->resp;
	unsigned int hlen = r->hdr_len - r->hdr_sent;
	struct page_frag *frag = kweb_frag(hlen);
	struct bio_vec bv[2];
	struct page *page;
	size_t off, len;
	int n;

	page = kweb_entry_page(r, &off, &len);
	if (!page || hlen > PAGE_SIZE || !sendpage_ok(page) ||
	    !skb_page_frag_refill(hlen, frag, conn->sk->sk_allocation))
		return 1;
	memcpy(page_address(frag->page) + frag->offset,
	       r->hdr + r->hdr_sent, hlen);
	bvec_set_page(&bv[0], frag->page, hlen, frag->offset);
	bvec_set_page(&bv[1], page, len, off);
	frag->offset += hlen;
	n = kweb_tcp_send_pages(conn->sk, bv, 2, hlen + len,
				kweb_send_flags(conn, r->pos + len < r->end));
	if (n < 0)
		return n;
	if (!n)
		return -EAGAIN;
	if (n <= hlen) {
		r->hdr_sent += n;
		return 0;
	}
	r->hdr_sent = r->hdr_len;
	r->pos += n - hlen;
	kweb_stat_add(conn->srv->stats, KWEB_STAT_BODY_SPLICED, n - hlen);
	return 0;
}

/*
 * From the open file, up to KWEB_SEND_BATCH pages read at a time into
 * r->batch, whose references last until the next read or the response's
 * release. May sleep reading. A body shorter than promised (the file was
 * truncated, or cannot be read) is an error: the caller closes.
 */
static int kweb_send_file(struct kweb_conn *conn)
{
	struct kweb_response *r = &conn->resp;
	struct kweb_pages *pg = &r->batch;

	if (!pg->bv) {
		pg->bv = kmalloc_array(KWEB_SEND_BATCH, sizeof(*pg->bv),
				       GFP_KERNEL);
		if (!pg->bv)
			return -ENOMEM;
		pg->max = KWEB_SEND_BATCH;
		pg->nr = 0;
		r->next = 0;
	}
	while (r->pos < r->end) {
		struct bio_vec *bv;
		int n;

		if (r->next == pg->nr) {
			size_t want = min_t(loff_t, r->end - r->pos,
					    KWEB_SEND_BATCH * PAGE_SIZE -
					    offset_in_page(r->pos));
			ssize_t got = kweb_file_read_pages(&r->file, r->pos,
							   want, pg);

			r->next = 0;
			if (got <= 0)
				return got ? got : -EIO;
		}
		bv = &pg->bv[r->next];
		n = kweb_send_page(conn, bv->bv_page, bv->bv_offset,
				   bv->bv_len,
				   kweb_send_flags(conn, r->pos + bv->bv_len < r->end));
		if (n < 0)
			return n;
		if (!n)
			return -EAGAIN;
		r->pos += n;
		bv->bv_offset += n;
		bv->bv_len -= n;
		if (!bv->bv_len)
			r->next++;
	}
	return 0;
}

/* Never sleeps with a cache entry; may with a file (reading it in). */
static int kweb_send_body(struct kweb_conn *conn)
{
	if (conn->resp.pos >= conn->resp.end)
		return 0;
	return conn->resp.entry ? kweb_send_entry(conn) : kweb_send_file(conn);
}

static int kweb_send_locked(struct kweb_conn *conn)
{
	struct kweb_response *r = &conn->resp;

	/* kTLS encrypts the header and body into records anyway. */
	if (r->hdr_sent < r->hdr_len && r->entry && r->pos < r->end &&
	    !conn->file) {
		int err = kweb_send_head_entry(conn);

		if (err < 0)
			return err;
	}
	while (r->hdr_sent < r->hdr_len) {
		/* MSG_MORE: the header and the first page share a segment. */
		int n = kweb_send_buf(conn, r->hdr + r->hdr_sent,
				      r->hdr_len - r->hdr_sent,
				      kweb_send_flags(conn, r->pos < r->end));

		if (n < 0)
			return n;
		if (!n)
			return -EAGAIN;
		r->hdr_sent += n;
	}
	return kweb_send_body(conn);
}

/*
 * 0 once the response is out, -EAGAIN when TCP has no room for more, or
 * an error (the caller closes). Without a socket of its own (only in
 * softirq), -EAGAIN means the connection needs one to wait for room.
 */
int kweb_send_response(struct kweb_conn *conn)
{
	struct socket *ph = kweb_placeholder_graft(conn->sk);
	int err;

	if (!conn->sk->sk_socket)
		return -EAGAIN;
	conn->sending = true;
	err = kweb_send_locked(conn);
	conn->sending = false;
	kweb_placeholder_ungraft(conn->sk, ph);
	/* Out once kTLS has given TCP all of it, and the last, close_notify. */
	if (!err && conn->file)
		err = kweb_tls_send_end(conn, !conn->resp.keep_alive);
	return err;
}

/*
 * Our FIN, on a socket locked or in softirq: what shutdown(SHUT_WR)
 * (inet_shutdown()) does to an established TCP socket, without the
 * lock_sock() that softirq cannot take. Our own sk_state_change is not
 * called: we know.
 */
void kweb_send_fin(struct sock *sk)
{
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | SEND_SHUTDOWN);
	sk->sk_prot->shutdown(sk, SEND_SHUTDOWN);
}

int kweb_send_init(void)
{
	int cpu, err;

	kweb_placeholder = alloc_percpu(struct socket *);
	if (!kweb_placeholder)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct socket **ph = per_cpu_ptr(kweb_placeholder, cpu);

		err = sock_create_lite(AF_INET, SOCK_STREAM, IPPROTO_TCP, ph);
		if (err) {
			kweb_send_exit();
			return err;
		}
	}
	return 0;
}

void kweb_send_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct socket *ph = *per_cpu_ptr(kweb_placeholder, cpu);

		if (ph)
			sock_release(ph);
	}
	free_percpu(kweb_placeholder);
	/* Only our reference: skbs still in flight hold their own. */
	for_each_possible_cpu(cpu) {
		struct kweb_frag_pair *pair;
		int i;

		pair = per_cpu_ptr(&kweb_softirq_frags, cpu);
		for (i = 0; i < ARRAY_SIZE(pair->frag); i++) {
			if (pair->frag[i].page)
				put_page(pair->frag[i].page);
			pair->frag[i].page = NULL;
		}
	}
}
