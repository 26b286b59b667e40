// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: adopted from a listener's accept queue, driven by their
 * socket callbacks, served in softirq where nothing has to sleep and by a
 * work item under lock_sock() otherwise.
 *
 * Lifetime: conn->ref has one reference for the owner (dropped when the
 * connection is closed) and one for each queued run of conn->work. The
 * callbacks find the connection through sk_user_data under
 * sk_callback_lock, which kweb_conn_close() clears before it drops the
 * owner's reference, so a callback never sees a freed connection.
 * Closing sleeps (tcp_close() takes the socket lock): the work item
 * closes what it ends, and softirq passes what it ends to its CPU's
 * closer, one work run a jiffy later for all that ended by then. Softirq
 * marks those, and those it hands off, closed under the socket's
 * spinlock for the work runs still queued; conn holds a reference on its
 * socket for them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/percpu.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/inet_connection_sock.h>
#include <net/request_sock.h>
#include <net/tcp.h>

#include "compat.h"
#include "kweb.h"
#include "memcg.h"
#include "recv.h"
#include "tls.h"
#include "trace.h"

struct workqueue_struct *kweb_wq;
static struct kmem_cache *kweb_conn_cache;

struct kweb_conn *kweb_conn_alloc(gfp_t gfp)
{
	return kmem_cache_zalloc(kweb_conn_cache, gfp);
}

void kweb_conn_free_unused(struct kweb_conn *conn)
{
	kmem_cache_free(kweb_conn_cache, conn);
}

static void kweb_conn_free(struct kref *ref)
{
	struct kweb_conn *conn = container_of(ref, struct kweb_conn, ref);

	sock_put(conn->sk);
	kfree(conn->buf);
	kfree(conn->tls_in);
	kmem_cache_free(kweb_conn_cache, conn);
}

static void kweb_conn_put(struct kweb_conn *conn)
{
	kref_put(&conn->ref, kweb_conn_free);
}

static void kweb_conn_queue(struct kweb_conn *conn)
{
	kref_get(&conn->ref);
	if (!queue_work(conn->srv->wq, &conn->work))
		kweb_conn_put(conn);
}

static bool kweb_conn_run(struct kweb_conn *conn, bool atomic);
static int kweb_conn_head_keep(struct kweb_conn *conn);
static void kweb_conn_handoff_atomic(struct kweb_conn *conn);
static void kweb_conn_close_later(struct kweb_conn *conn);

/* Softirq: advance conn; true if the work item has to take over. */
static bool kweb_conn_run_atomic(struct kweb_conn *conn)
{
	bool worker = kweb_conn_run(conn, true);
	int err, keep;

	/* A header left unsent or a head must not stay in this CPU's scratch. */
	err = kweb_response_hdr_keep(&conn->resp);
	keep = kweb_conn_head_keep(conn);
	if (keep < 0 || err) {
		kweb_conn_done(conn, KWEB_CLOSE_ERROR);
		worker = true;
	} else if (keep) {
		worker = true;
	}
	return worker;
}

/*
 * Callbacks: softirq, or process context when release_sock() replays the
 * backlog; never sleep. In softirq the socket spinlock is held and the
 * socket is not owned, so the connection can be advanced right here;
 * whatever needs sleeping is left to the work item.
 */
static void kweb_conn_event(struct sock *sk, bool space)
{
	bool handoff = false, done = false, worker;
	struct mem_cgroup *memcg;
	struct kweb_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	/* Closed under the socket lock: the worker detaches it next. */
	if (!conn || READ_ONCE(conn->closed))
		goto out;
	/* kTLS sleeps: only the work item serves a TLS connection. */
	if (conn->file) {
		kweb_conn_queue(conn);
		goto out;
	}
	/*
	 * TCP calls sk_write_space() from inside a send of ours: when it
	 * fails with empty queues (out of memory, to wake a waiter no ACK
	 * will) and when a backlog flush finds room. The send's caller
	 * acts on its result (kweb_conn_wait_room()), with SOCK_NOSPACE
	 * set again if it waits for room.
	 */
	if (space && conn->sending)
		goto out;
	/* Only TCP's write-space signal calls with space, on conn->sock. */
	if (space && sk->sk_socket)
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	/*
	 * Any other event from inside a run of ours, for the same conn
	 * (the backlog a send flushes): running it again there would end
	 * it twice (and nest send.c's borrowed page fragment); the worker
	 * looks once we are done.
	 */
	if (sock_owned_by_user_nocheck(sk) || !in_softirq() || conn->running) {
		kweb_conn_queue(conn);
		goto out;
	}
	conn->running = true;
	/* What it allocates is charged as the worker's is (memcg.c). */
	memcg = set_active_memcg(conn->srv->memcg);
	worker = kweb_conn_run_atomic(conn);
	set_active_memcg(memcg);
	if (worker) {
		/*
		 * Ended or prepared for the move right here: a work run
		 * queued already finds it closed once it has the lock.
		 */
		handoff = conn->state == KWEB_CONN_HANDOFF;
		done = conn->state == KWEB_CONN_DONE;
		if (handoff || done)
			WRITE_ONCE(conn->closed, true);
		else
			kweb_conn_queue(conn);
	}
	conn->running = false;
out:
	read_unlock_bh(&sk->sk_callback_lock);
	/* Restoring the callbacks takes sk_callback_lock for writing. */
	if (handoff)
		kweb_conn_handoff_atomic(conn);
	else if (done)
		kweb_conn_close_later(conn);
}

void kweb_conn_data_ready(struct sock *sk)
{
	kweb_conn_event(sk, false);
}

static void kweb_conn_write_space(struct sock *sk)
{
	/* As sk_stream_write_space(): only once a useful amount is free. */
	if (sk_stream_is_writeable(sk))
		kweb_conn_event(sk, true);
}

static void kweb_conn_state_change(struct sock *sk)
{
	kweb_conn_event(sk, false);
}

static void kweb_conn_timeout(struct timer_list *t)
{
	struct kweb_conn *conn = from_timer(conn, t, timer);
	unsigned long deadline = READ_ONCE(conn->deadline);

	/* A starved send's retry, until its own timeout: kweb_conn_wait_room(). */
	if (READ_ONCE(conn->starved)) {
		if (!time_before(jiffies, READ_ONCE(conn->send_deadline)))
			WRITE_ONCE(conn->timed_out, true);
		kweb_conn_queue(conn);
		return;
	}
	/* The deadline moved on since the timer was set: follow it. */
	if (time_before(jiffies, deadline)) {
		timer_reduce(&conn->timer, deadline);
		return;
	}
	WRITE_ONCE(conn->timed_out, true);
	kweb_conn_queue(conn);
}

/*
 * Start a timeout of seconds from now. The timer is only ever brought
 * forward: a later deadline, the usual case (each request moves it on),
 * is a store, and the timer, when it fires early, follows it. A busy
 * keep-alive connection so costs no timer operation per request. Both
 * sides use timer_reduce(), so the timer never ends up after the newest
 * deadline, however they race.
 */
static void kweb_conn_arm(struct kweb_conn *conn, unsigned int seconds)
{
	unsigned long deadline = jiffies + seconds * HZ;

	WRITE_ONCE(conn->starved, false);
	WRITE_ONCE(conn->deadline, deadline);
	timer_reduce(&conn->timer, deadline);
}

/*
 * A send came up short. With data in flight, its ACKs bring
 * sk_write_space() as room frees up. With nothing in flight TCP is out of
 * memory (over tcp_mem, or the memory cgroup's limit) and no ACK will
 * come: try again a little later, as sk_stream_wait_memory() does for a
 * blocking sender, until send_timeout after the first failure. TCP's own
 * wake-up for that case comes from inside the send and is ignored
 * (kweb_conn_event()): acting on it would retry at once, for as long as
 * memory stays short.
 */
static void kweb_conn_wait_room(struct kweb_conn *conn)
{
	unsigned long retry;

	if (!tcp_rtx_and_write_queues_empty(conn->sk)) {
		kweb_conn_arm(conn, kweb_limits(conn->srv).send_timeout);
		return;
	}
	if (!conn->starved) {
		WRITE_ONCE(conn->send_deadline,
			   jiffies + kweb_limits(conn->srv).send_timeout * HZ);
		WRITE_ONCE(conn->starved, true);
	}
	retry = jiffies + get_random_u32_below(HZ / 5) + 2;
	if (time_after(retry, conn->send_deadline))
		retry = conn->send_deadline;
	mod_timer(&conn->timer, retry);
}

/*
 * The receive side: TCP's queue, peeked and consumed in place, or for a
 * TLS connection the plaintext kTLS decrypted (tls.c).
 */
static size_t kweb_conn_peek(struct kweb_conn *conn, size_t skip, char *buf,
			     size_t len)
{
	return conn->file ? kweb_tls_peek(conn, skip, buf, len) :
		kweb_recv_peek(conn->sk, skip, buf, len);
}

static size_t kweb_conn_recv_consume(struct kweb_conn *conn, size_t len)
{
	return conn->file ? kweb_tls_consume(conn, len) :
		kweb_recv_consume(conn->sk, len);
}

static size_t kweb_conn_unread(struct kweb_conn *conn, size_t want)
{
	return conn->file ? kweb_tls_unread(conn, want) :
		kweb_recv_unread(conn->sk);
}

static bool kweb_conn_eof(struct kweb_conn *conn)
{
	return conn->file ? kweb_tls_eof(conn) : kweb_recv_eof(conn->sk);
}

/* Our FIN (for TLS, after the close_notify the last response ended with). */
static void kweb_conn_fin(struct kweb_conn *conn)
{
	if (conn->file)
		kweb_tls_shutdown(conn);
	else
		kweb_send_fin(conn->sk);
}

/* The next request starts at the first unread byte. */
static void kweb_conn_head_reset(struct kweb_conn *conn)
{
	conn->peeked = 0;
	memset(&conn->scan, 0, sizeof(conn->scan));
}

/* Smallest head buffer: most request heads fit. */
#define KWEB_BUF_MIN 512

/* A head buffer for len peeked bytes, doubled as more come, up to limit. */
static size_t kweb_conn_buf_size(size_t len, size_t limit)
{
	return min_t(size_t, max_t(size_t, roundup_pow_of_two(len ?: 1),
				   KWEB_BUF_MIN), limit);
}

/* conn->buf moves to buf, with the record's strings that point into it. */
static void kweb_conn_buf_move(struct kweb_conn *conn, char *buf, size_t size)
{
	kweb_log_rebase(&conn->log, conn->buf, conn->peeked, buf);
	conn->buf = buf;
	conn->buf_size = size;
	conn->buf_scratch = false;
}

/*
 * Room in conn->buf for every unread byte, up to max. The buffer is
 * allocated when bytes arrive, sized to them and doubled as more come,
 * and freed with the request it held: an idle connection holds none, a
 * slow one about what it sent. In softirq a head that fits is peeked
 * into the CPU's scratch instead: most are answered in the same run and
 * need no buffer of their own, and one that outlives the run is copied
 * out (kweb_conn_head_keep()).
 */
static bool kweb_conn_buf_grow(struct kweb_conn *conn, size_t limit,
			       bool atomic)
{
	size_t want = min(kweb_conn_unread(conn, limit), limit);
	char *buf;

	if (want <= conn->buf_size)
		return true;
	if (atomic && !conn->buf && want <= KWEB_HEAD_SCRATCH) {
		conn->buf = kweb_request_head_scratch();
		conn->buf_size = min_t(size_t, KWEB_HEAD_SCRATCH, limit);
		conn->buf_scratch = true;
		return true;
	}
	want = kweb_conn_buf_size(want, limit);
	/*
	 * Softirq's may fail (the worker tries again, with reclaim): not
	 * GFP_ATOMIC, whose __GFP_HIGH the memory cgroup lets past its
	 * limit, as it would let a client's every head be.
	 */
	if (conn->buf_scratch) {
		buf = kmalloc(want, GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT);
		if (buf)
			memcpy(buf, conn->buf, conn->peeked);
	} else {
		buf = krealloc(conn->buf, want, atomic ?
			       GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT :
			       GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
			       __GFP_NOWARN);
	}
	if (!buf)
		return false;
	kweb_conn_buf_move(conn, buf, want);
	return true;
}

static void kweb_conn_buf_free(struct kweb_conn *conn)
{
	if (!conn->buf_scratch)
		kfree(conn->buf);
	conn->buf = NULL;
	conn->buf_size = 0;
	conn->buf_scratch = false;
}

/*
 * Softirq is ending: a head still in this CPU's scratch (not yet whole,
 * handed off, or answered by a response still waiting for room) is
 * copied out. One not yet whole that finds no room is let go: it is
 * still in the receive queue, and 1 says the worker peeks it again,
 * with reclaim, or closes conn if the memory cgroup has none to give.
 * Any other (its record's strings point into it) is kept if at all
 * possible, as its response is under way; if it cannot be, the head is
 * gone and so is conn (-ENOMEM).
 */
static int kweb_conn_head_keep(struct kweb_conn *conn)
{
	size_t size;
	char *buf;

	if (!conn->buf_scratch)
		return 0;
	if (!conn->peeked) {
		kweb_conn_buf_free(conn);
		return 0;
	}
	size = kweb_conn_buf_size(conn->peeked, conn->buf_size);
	buf = kmalloc(size, GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!buf && conn->state == KWEB_CONN_READ) {
		kweb_conn_buf_move(conn, NULL, 0);
		kweb_conn_head_reset(conn);
		return 1;
	}
	if (!buf)
		buf = kmalloc(size, GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!buf) {
		kweb_conn_buf_move(conn, NULL, 0);
		kweb_conn_head_reset(conn);
		return -ENOMEM;
	}
	memcpy(buf, conn->buf, conn->peeked);
	kweb_conn_buf_move(conn, buf, size);
	return 0;
}

/* The response is out: linger or wait for the next request. */
static void kweb_conn_response_done(struct kweb_conn *conn)
{
	bool keep_alive = conn->resp.keep_alive;

	kweb_log_end(conn, conn->resp.status, conn->resp.body_len);
	kweb_response_release(&conn->resp);
	/* The record's strings were in it; the next head is peeked anew. */
	kweb_conn_head_reset(conn);
	kweb_conn_buf_free(conn);
	conn->nr_requests++;
	if (!keep_alive) {
		/*
		 * Half-close and drain instead of closing outright: closing
		 * with unread data sends a RST that can destroy the response
		 * before the client reads it.
		 */
		conn->state = KWEB_CONN_LINGER;
		kweb_conn_fin(conn);
		kweb_conn_arm(conn, kweb_limits(conn->srv).linger_timeout);
		return;
	}
	conn->state = KWEB_CONN_READ;
	conn->idle = true;
	kweb_conn_arm(conn, kweb_limits(conn->srv).keepalive_timeout);
}

/*
 * Give conn a struct socket of its own, once it has to wait for send
 * space (see send.c): process context, under lock_sock().
 */
static int kweb_conn_sock(struct kweb_conn *conn)
{
	struct socket *sock;
	int err;

	if (conn->sock)
		return 0;
	err = sock_create_lite(conn->sk->sk_family, SOCK_STREAM, IPPROTO_TCP,
			       &sock);
	if (err)
		return err;
	/* The listener's socket may be gone: the server is stopping. */
	sock->ops = conn->listener->ops;
	__module_get(sock->ops->owner);
	sock_graft(conn->sk, sock);
	sock->state = SS_CONNECTED;
	conn->sock = sock;
	return 0;
}

enum kweb_read {
	KWEB_READ_WAIT,		/* no complete request yet */
	KWEB_READ_ANSWERED,	/* a response is ready to send */
	KWEB_READ_WORKER,	/* only the work item can answer this */
};

/*
 * The request at the head of the receive queue is the backend's: hand the
 * connection over, the request unread, once our responses are gone.
 */
static enum kweb_read kweb_conn_handoff_begin(struct kweb_conn *conn,
					      enum kweb_route why,
					      const struct kweb_request *req)
{
	conn->handoff = why;
	conn->handoff_head = req->method == KWEB_METHOD_HEAD;
	/* A head kweb would have refused: its own answer without a backend. */
	conn->handoff_status = req->status;
	conn->state = KWEB_CONN_HANDOFF_WAIT;
	/* The head stays in conn->buf: nothing is peeked until it leaves. */
	kweb_log_begin(conn, req, KWEB_ANSWERER_BACKEND);
	return KWEB_READ_ANSWERED;
}

/*
 * Wait until our responses are acknowledged: accept() charges the
 * backend's memory cgroup for what the socket holds on the receive side
 * only, and a send queue it did not fill would be uncharged from it
 * later. Each ACK brings sk_write_space() back here. Then the move is
 * prepared, or 502/503 answered if it cannot be. Returns false while
 * waiting, or when only the work item can go on.
 */
static bool kweb_conn_handoff_ready(struct kweb_conn *conn, bool atomic)
{
	struct sock *sk = conn->sk;
	u16 status;

	if (conn->file ? kweb_tls_tx_unacked(conn) : sk->sk_wmem_queued) {
		/* Only a socket of its own hears of the ACKs: the worker's. */
		if (atomic && !conn->sock)
			return false;
		if (kweb_conn_sock(conn)) {
			kweb_conn_done(conn, KWEB_CLOSE_ERROR);
			return true;
		}
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		kweb_conn_arm(conn, kweb_limits(conn->srv).send_timeout);
		return false;
	}
	/*
	 * Softirq moves it too, unless a socket of kweb's has to be
	 * released, or the move may sleep (compat.h).
	 */
	if (atomic && (conn->sock || !KWEB_HANDOFF_ATOMIC))
		return false;
	status = kweb_handoff_prepare(conn, conn->handoff);
	if (status == 502 && conn->handoff_status)
		status = conn->handoff_status;
	if (status) {
		kweb_response_error(conn, status, conn->handoff_head, false);
		/* Refused: kweb answered after all. */
		conn->log.who = atomic ? KWEB_ANSWERER_SOFTIRQ :
			KWEB_ANSWERER_WORKER;
	}
	return true;
}

/*
 * Take the next request off the receive queue, if a whole head is there.
 * In atomic context only cached files are answered; the head stays unread
 * for the worker otherwise. The worker answers it or hands it over.
 */
static enum kweb_read kweb_conn_read(struct kweb_conn *conn, bool atomic)
{
	struct sock *sk = conn->sk;
	size_t max = kweb_limits(conn->srv).max_header_size;
	struct kweb_request req __kweb_filled_by_callee;	/* kweb_http_parse() */
	enum kweb_parse_result res;
	enum kweb_route why;

	/*
	 * Urgent data: tcp_read_sock() stops at the urgent mark, and a peek
	 * would show the out-of-band byte inside the stream. kweb does not
	 * implement it; the backend's recv() skips the byte as it should.
	 * Inside a request body being dropped, there is no request to hand
	 * over: close.
	 */
	if (unlikely(!conn->file && READ_ONCE(tcp_sk(sk)->urg_data))) {
		static const struct kweb_request none;

		if (conn->discard) {
			kweb_conn_done(conn, KWEB_CLOSE_ERROR);
			return KWEB_READ_WAIT;
		}
		return kweb_conn_handoff_begin(conn, KWEB_ROUTE_UNPARSED,
					       &none);
	}

	if (conn->discard) {
		conn->discard -= kweb_conn_recv_consume(conn, conn->discard);
		if (conn->discard) {
			if (kweb_conn_eof(conn))
				kweb_conn_done(conn, KWEB_CLOSE_EOF);
			return KWEB_READ_WAIT;
		}
	}

	if (!kweb_conn_buf_grow(conn, max, atomic)) {
		if (atomic)
			return KWEB_READ_WORKER;
		kweb_conn_done(conn, KWEB_CLOSE_ERROR);
		return KWEB_READ_WAIT;
	}
	conn->peeked += kweb_conn_peek(conn, conn->peeked,
				       conn->buf + conn->peeked,
				       conn->buf_size - conn->peeked);
	if (!conn->peeked) {
		if (kweb_conn_eof(conn))
			kweb_conn_done(conn, KWEB_CLOSE_EOF);
		return KWEB_READ_WAIT;
	}
	if (conn->idle) {
		/* The first bytes of a request start its header timeout. */
		conn->idle = false;
		conn->log.start = ktime_get();
		kweb_conn_arm(conn, kweb_limits(conn->srv).header_timeout);
	}

	/* Parsed again only when a line that matters has ended. */
	res = KWEB_PARSE_INCOMPLETE;
	if (kweb_http_head_ready(conn->buf, conn->peeked, &conn->scan) ||
	    conn->peeked >= max)
		res = kweb_http_parse(conn->buf, conn->peeked, max, &req);
	if (res == KWEB_PARSE_INCOMPLETE) {
		conn->scan.ready = false;
		/* A partial request and then EOF: nothing to answer. */
		if (kweb_conn_eof(conn))
			kweb_conn_done(conn, KWEB_CLOSE_EOF);
		return KWEB_READ_WAIT;
	}
	if (atomic) {
		bool cached = false, redirect;

		/* Routed as kweb_request_handle() routes: redirects first. */
		redirect = res == KWEB_PARSE_OK && kweb_request_https_port(conn);
		why = redirect ? KWEB_ROUTE_SERVE : kweb_route_request(res, &req);
		if (why == KWEB_ROUTE_SERVE && res == KWEB_PARSE_OK && !redirect)
			cached = kweb_request_cached(conn, &req, &why);
		/* The backend's by its head and path: no file looked up. */
		if (why != KWEB_ROUTE_SERVE)
			return kweb_conn_handoff_begin(conn, why, &req);
		if (!cached) {
			/*
			 * The head is whole: the header timeout no longer
			 * applies, whenever the worker gets to it (nginx's
			 * client_header_timeout stops there too).
			 */
			kweb_conn_arm(conn, kweb_limits(conn->srv).send_timeout);
			return KWEB_READ_WORKER;
		}
		kweb_stat_add(conn->srv->stats, KWEB_STAT_REQ_SOFTIRQ, 1);
	} else {
		why = kweb_request_handle(conn, res, &req);
		if (why != KWEB_ROUTE_SERVE)
			return kweb_conn_handoff_begin(conn, why, &req);
		kweb_stat_add(conn->srv->stats, KWEB_STAT_REQ_WORKER, 1);
	}
	kweb_log_begin(conn, &req, atomic ? KWEB_ANSWERER_SOFTIRQ :
		       KWEB_ANSWERER_WORKER);
	/*
	 * A request answered as malformed is never consumed: we close. The
	 * rest is consumed once its response is queued (kweb_conn_consume()).
	 */
	if (res == KWEB_PARSE_OK) {
		conn->head_unread = req.head_len;
		conn->discard = req.has_content_length ? req.content_length : 0;
	}
	return KWEB_READ_ANSWERED;
}

/*
 * Consume the head just answered once its response is queued (and, for a
 * connection's last, our FIN), so that the response carries the ACK of
 * the request: consumed first, a connection's first request is acked in
 * a segment of its own (tcp_cleanup_rbuf(), before ping-pong mode). Bytes
 * peeked but not consumed would be answered again: a stream that cannot
 * be consumed as peeked ends the connection.
 */
static bool kweb_conn_consume(struct kweb_conn *conn)
{
	unsigned int n = conn->head_unread;

	conn->head_unread = 0;
	return kweb_conn_recv_consume(conn, n) == n;
}

/* Reads a lingering connection's run makes at most; see below. */
#define KWEB_LINGER_READS 16

/*
 * Our FIN is out: drop whatever still arrives until the peer's FIN. A
 * few reads a run: a client sending as fast as they are dropped must
 * not keep the run, and its linger timeout, from ever ending; what is
 * left waits for the next run, or the timeout's reset.
 */
static void kweb_conn_linger(struct kweb_conn *conn)
{
	unsigned int i = 0;

	while (i++ < KWEB_LINGER_READS && kweb_conn_recv_consume(conn, SIZE_MAX))
		;
	if (kweb_conn_eof(conn))
		kweb_conn_done(conn, KWEB_CLOSE_LINGER);
}

/* A socket error (as sk_err): the client's reset (tcp_reset()), or other. */
static enum kweb_close_reason kweb_close_why_err(int err)
{
	return err == ECONNRESET || err == EPIPE ? KWEB_CLOSE_RESET :
		KWEB_CLOSE_ERROR;
}

/*
 * Why conn ends with its socket closed or in error: the server's stop,
 * the error, or else both FINs went (after ours: a last response).
 */
static enum kweb_close_reason kweb_close_why_sk(const struct kweb_conn *conn)
{
	int err = READ_ONCE(conn->sk->sk_err);

	if (READ_ONCE(conn->abort))
		return KWEB_CLOSE_ABORT;
	if (err)
		return kweb_close_why_err(err);
	return conn->state == KWEB_CONN_LINGER ? KWEB_CLOSE_LINGER :
		KWEB_CLOSE_EOF;
}

/* Requests answered in one softirq run before the rest goes to the worker. */
#define KWEB_ATOMIC_BUDGET 16

/*
 * Advance the connection as far as it goes without waiting. atomic: in
 * softirq, do only what cannot sleep. Returns true when the work item
 * has to take over.
 */
static bool kweb_conn_run(struct kweb_conn *conn, bool atomic)
{
	struct sock *sk = conn->sk;
	unsigned int budget = KWEB_ATOMIC_BUDGET;
	int err;

	if (READ_ONCE(conn->abort) || sk->sk_err ||
	    sk->sk_state == TCP_CLOSE || READ_ONCE(conn->timed_out)) {
		if (atomic)
			return true;
	}
	if (READ_ONCE(conn->abort) || sk->sk_err ||
	    sk->sk_state == TCP_CLOSE) {
		kweb_conn_done(conn, kweb_close_why_sk(conn));
		return false;
	}
	/* A record that did not decrypt, or one kTLS cannot follow. */
	if (conn->tls_err) {
		conn->reset = true;
		kweb_conn_done(conn, KWEB_CLOSE_ERROR);
		return false;
	}
	if (READ_ONCE(conn->timed_out)) {
		WRITE_ONCE(conn->timed_out, false);
		/*
		 * A stale expiry after the timer was re-armed is ignored.
		 * A request that arrived whole but waited for a starved
		 * worker past the timer is still answered: what a timeout
		 * cuts is a client that has not sent its head in time.
		 */
		if (!timer_pending(&conn->timer)) {
			if (conn->state != KWEB_CONN_READ) {
				/*
				 * A response the client stopped taking is cut
				 * with a RST (nginx's reset_timedout_connection):
				 * no orphan is left probing a shut window. One
				 * that is all out (linger) ends with our FIN.
				 */
				conn->reset = conn->state != KWEB_CONN_LINGER;
				kweb_conn_done(conn, KWEB_CLOSE_TIMEOUT);
				return false;
			}
			conn->expired = true;
		}
	}
	if (!atomic && conn->state != KWEB_CONN_DONE)
		conn->worked = true;
	/*
	 * Its listener's creator pays for what the socket holds from its
	 * first run, as a server pays from accept(). At the cgroup's limit
	 * softirq leaves it to the worker; failing there (the cgroup past
	 * its limit already, TCP over its hard limit), the connection is
	 * refused.
	 */
	if (unlikely(!conn->charged)) {
		if (!kweb_sk_memcg_join(sk, conn->srv->memcg)) {
			if (atomic)
				return true;
			conn->reset = true;
			kweb_conn_done(conn, KWEB_CLOSE_ERROR);
			return false;
		}
		conn->charged = true;
	}

	for (;;) {
		switch (conn->state) {
		case KWEB_CONN_SEND:
			/* Bodies from open files are read in, which sleeps. */
			if (atomic && conn->resp.file.filp)
				return true;
			err = atomic ? 0 : kweb_conn_sock(conn);
			if (!err)
				err = kweb_send_response(conn);
			/* A last response leaves with our FIN: consume after. */
			if (!err)
				kweb_conn_response_done(conn);
			if (conn->head_unread && !kweb_conn_consume(conn)) {
				kweb_conn_done(conn, KWEB_CLOSE_ERROR);
				return atomic;
			}
			if (err == -EAGAIN) {
				/*
				 * sk_write_space() or the timer brings us
				 * back, once the worker has given conn a
				 * socket to hear the former.
				 */
				kweb_conn_wait_room(conn);
				return !conn->sock;
			}
			if (err) {
				kweb_conn_done(conn, kweb_close_why_err(-err));
				return atomic;
			}
			break;
		case KWEB_CONN_READ:
			if (atomic && !budget--)
				return true;
			switch (kweb_conn_read(conn, atomic)) {
			case KWEB_READ_WAIT:
				if (conn->expired &&
				    conn->state == KWEB_CONN_READ)
					kweb_conn_done(conn,
						       KWEB_CLOSE_TIMEOUT);
				return atomic && conn->state != KWEB_CONN_READ;
			case KWEB_READ_WORKER:
				return true;
			case KWEB_READ_ANSWERED:
				conn->expired = false;
				break;
			}
			break;
		case KWEB_CONN_HANDOFF_WAIT:
			if (!kweb_conn_handoff_ready(conn, atomic))
				return atomic && (!sk->sk_wmem_queued ||
						  !conn->sock);
			break;
		case KWEB_CONN_HANDOFF:
			/* kweb_conn_work() moves it, once unlocked. */
			return atomic;
		case KWEB_CONN_LINGER:
			kweb_conn_linger(conn);
			return atomic && conn->state == KWEB_CONN_DONE;
		case KWEB_CONN_DONE:
			return atomic;
		}
	}
}

static void kweb_conn_restore_callbacks(struct kweb_conn *conn)
{
	struct sock *sk = conn->sk;
	struct kweb_listener *l = conn->listener;

	if (conn->file) {
		kweb_tls_restore_callbacks(conn);
		return;
	}
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = l->orig_data_ready;
	sk->sk_write_space = l->orig_write_space;
	sk->sk_state_change = l->orig_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* Body bytes of the response in flight that went out. */
static u64 kweb_conn_body_sent(const struct kweb_response *r)
{
	u64 left = r->end > r->pos ? r->end - r->pos : 0;

	return r->body_len > left ? r->body_len - left : 0;
}

/*
 * Softirq and the timer are done with conn. A request it was answering
 * (cut short by an error, a timeout, a reset or the server's stop) is
 * logged with what went out, as nginx logs it; a handoff logs its own.
 */
static void kweb_conn_detach(struct kweb_conn *conn, bool log)
{
	kweb_conn_restore_callbacks(conn);
	del_timer_sync(&conn->timer);
	if (log)
		kweb_log_end(conn, conn->resp.status,
			     kweb_conn_body_sent(&conn->resp));
	kweb_response_release(&conn->resp);
}

static void kweb_conn_unlist(struct kweb_conn *conn)
{
	struct kweb_server *srv = conn->srv;
	bool last;

	spin_lock_bh(&srv->conns_lock);
	list_del(&conn->node);
	last = !--srv->nr_conns && srv->dying;
	spin_unlock_bh(&srv->conns_lock);
	/* The reap may free srv at once: nothing of it after this. */
	if (last)
		queue_work(kweb_wq, &srv->reap);
	kweb_conn_put(conn);
}

/*
 * Close with a RST rather than a FIN: nothing is left in kweb's hands
 * then, no orphan in FIN_WAIT1 or LAST_ACK and no zero-window probing.
 * For the server's stop, since children of a kernel listener hold no
 * reference on their network namespace and their timers must not
 * outlive it.
 */
static void kweb_sk_abort(struct sock *sk)
{
	sock_no_linger(sk);
}

/*
 * A connection closed with a FIN becomes an orphan that TCP finishes on
 * its own timers, as it does for a socket user space closes: it
 * retransmits data and FIN, probes a zero window (tcp_orphan_retries),
 * waits for the peer's FIN (tcp_fin_timeout, as a timewait sock) or for
 * the ACK of its own (LAST_ACK), and frees itself on reaching TCP_CLOSE
 * or on a reset. kweb keeps no reference: once closed, the socket is
 * TCP's alone, for no longer than TCP needs it.
 *
 * It does need a reference on its netns. A child of a kernel listener,
 * as each of ours, holds none, and tcp_close() stops every timer of
 * such a socket (151c9c724d05): its orphan would never retransmit or
 * probe again, and the peer would wait for good. So it takes the one a
 * user socket holds (sk_net_refcnt), which the socket drops when it is
 * freed: the namespace then lives as long as the orphan and no longer,
 * and its exit waits for it as for nginx's. Only a namespace already
 * dying (its count at zero, its exit about to stop kweb's server) has
 * none to give: the socket is reset then, as that exit would. An
 * adopted TLS socket kweb alone holds has none either (tls.c), and
 * takes one the same way, as does one going to the backend.
 */
bool kweb_sk_hold_net(struct sock *sk)
{
	struct net *net;

	if (sk->sk_net_refcnt)
		return true;
	/* The upgrade's get_net() must not revive a count at zero. */
	net = maybe_get_net(sock_net(sk));
	if (!net)
		return false;
	kweb_sk_net_refcnt_upgrade(sk);
	put_net(net);
	return true;
}

static void kweb_conn_close(struct kweb_conn *conn)
{
	struct sock *sk = conn->sk;
	bool reset;

	kweb_conn_detach(conn, true);
	trace_kweb_conn_close(conn);
	/* A record that did not decrypt ends it with a reset. */
	reset = READ_ONCE(conn->abort) || conn->reset || conn->tls_err;
	if (conn->file) {
		/*
		 * Whatever its end, back to the user socket it was (tls.c),
		 * unless its netns is dying: then it is reset.
		 */
		if (!kweb_sk_hold_net(sk))
			reset = true;
		kweb_tls_close(conn, reset);
		goto closed;
	}
	/* An orphan in TCP_CLOSE is freed by the close itself. */
	if (reset ||
	    (inet_sk_state_load(sk) != TCP_CLOSE && !kweb_sk_hold_net(sk)))
		kweb_sk_abort(sk);
	/* Without a socket, what sock_release() would do for a child. */
	if (conn->sock)
		sock_release(conn->sock);
	else
		sk->sk_prot->close(sk, 0);
	if (conn->req)
		reqsk_put(conn->req);
	/* A handoff that the server's stop overtook. */
	if (conn->backend)
		sock_put(conn->backend);
closed:
	kweb_stat_add(conn->srv->stats, KWEB_STAT_CONN_CLOSED, 1);
	if (!conn->worked)
		kweb_stat_add(conn->srv->stats, KWEB_STAT_CONN_SOFTIRQ, 1);
	kweb_conn_unlist(conn);
}

static void kweb_conn_work(struct work_struct *work)
{
	struct kweb_conn *conn = container_of(work, struct kweb_conn, work);
	struct mem_cgroup *memcg;
	bool done, handoff;
	/* kTLS takes the socket lock itself; only this work runs conn. */
	bool lock = !conn->file;
	struct net *net;

	if (READ_ONCE(conn->closed))
		goto out;
	/*
	 * A run may wait on its docroot's filesystem for as long as that
	 * likes (a tenant's FUSE daemon stopped), and the namespace's exit
	 * waits for its connections. Not from inside the exit: every
	 * namespace of the host exits in the one cleanup_net() work, and
	 * all would wait with it. So a run holds its namespace, whose exit
	 * begins only once no run is in; one that finds it dying already
	 * ends its connection, as the exit is about to.
	 */
	net = maybe_get_net(sock_net(conn->sk));
	if (!net)
		WRITE_ONCE(conn->abort, true);
	/* conn's reference keeps sk, even once softirq has handed it off. */
	if (lock)
		lock_sock(conn->sk);
	if (conn->closed) {
		if (lock)
			release_sock(conn->sk);
		goto put;
	}
	/* The files it reads are its listener's creator's to pay for. */
	memcg = set_active_memcg(conn->srv->memcg);
	kweb_conn_run(conn, false);
	set_active_memcg(memcg);
	/* Decided under the lock: softirq may move on once it is released. */
	done = conn->state == KWEB_CONN_DONE;
	handoff = conn->state == KWEB_CONN_HANDOFF;
	if (done || handoff)
		WRITE_ONCE(conn->closed, true);
	if (lock)
		release_sock(conn->sk);

	if (done) {
		kweb_conn_close(conn);
	} else if (handoff) {
		kweb_conn_detach(conn, false);
		kweb_handoff(conn, false);
		kweb_conn_unlist(conn);
	}
put:
	if (net)
		put_net(net);
out:
	kweb_conn_put(conn);
}

/*
 * Softirq, under the socket's spinlock, the handoff prepared by this
 * run and conn marked closed: what kweb_conn_work() does for a handoff,
 * without waiting for a work item. The owner's reference is ours.
 */
static void kweb_conn_handoff_atomic(struct kweb_conn *conn)
{
	lockdep_assert_held(&conn->sk->sk_lock.slock);
	kweb_conn_detach(conn, false);
	kweb_handoff(conn, true);
	kweb_conn_unlist(conn);
}

/*
 * Connections that softirq ended, waiting for their CPU's work run to
 * close them (tcp_close() sleeps). The run starts a jiffy after the first
 * of them and closes all that ended by then: an immediate run found one
 * connection each time unless closes came faster than it ran (measured
 * on an idle guest: 0.97 runs per connection, 0.12 with the jiffy, and a
 * third of the context switches). A connection that lingered has both
 * FINs behind it, and the jiffy holds only memory; a client that closed
 * first gets kweb's FIN (or a reset) up to a jiffy later.
 */
struct kweb_closer {
	struct llist_head conns;
	struct delayed_work work;
};

static DEFINE_PER_CPU(struct kweb_closer, kweb_closers);

static void kweb_closer_work(struct work_struct *work)
{
	struct kweb_closer *closer = container_of(to_delayed_work(work),
						  struct kweb_closer, work);
	struct llist_node *list = llist_del_all(&closer->conns);
	struct kweb_conn *conn, *tmp;

	/* Oldest first, as they ended. */
	list = llist_reverse_order(list);
	llist_for_each_entry_safe(conn, tmp, list, close_node) {
		kweb_conn_close(conn);
		cond_resched();
	}
}

/*
 * Softirq, conn marked closed under the socket's spinlock: the owner's
 * reference goes with it to this CPU's closer. The first on the list
 * queues the run that takes them all.
 */
static void kweb_conn_close_later(struct kweb_conn *conn)
{
	struct kweb_closer *closer = this_cpu_ptr(&kweb_closers);

	if (llist_add(&conn->close_node, &closer->conns))
		queue_delayed_work(kweb_wq, &closer->work, 1);
}

/* Close now what the closers hold, rather than a jiffy later. */
static void kweb_closers_flush(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		flush_delayed_work(&per_cpu_ptr(&kweb_closers, cpu)->work);
}

/* What every connection starts as, and its place in srv's list. */
static void kweb_conn_start(struct kweb_conn *conn, struct kweb_server *srv,
			    struct kweb_listener *l, struct sock *sk)
{
	conn->sk = sk;
	sock_hold(sk);
	conn->srv = srv;
	conn->listener = l;
	conn->state = KWEB_CONN_READ;
	conn->idle = true;
	kref_init(&conn->ref);
	INIT_WORK(&conn->work, kweb_conn_work);
	timer_setup(&conn->timer, kweb_conn_timeout, 0);

	spin_lock_bh(&srv->conns_lock);
	list_add(&conn->node, &srv->conns);
	srv->nr_conns++;
	spin_unlock_bh(&srv->conns_lock);
	kweb_stat_add(srv->stats, KWEB_STAT_CONN_ACCEPTED, 1);
}

/* Close a child that never became a connection: process context. */
void kweb_child_drop(struct request_sock *req, struct sock *child)
{
	if (req)
		reqsk_put(req);
	kweb_sk_abort(child);
	child->sk_prot->close(child, 0);
}

/*
 * Take over a child popped from l's accept queue, in softirq or process
 * context: nothing here sleeps, and the child's spinlock may be held by
 * this CPU (the listener's sk_data_ready runs under it). req is kept for
 * a later handoff; NULL for a Fast Open child, whose request the listener
 * still owns. The server cannot be stopping: kweb_listeners_stop() waits
 * for every adoption before kweb_conns_abort() runs.
 */
void kweb_conn_adopt(struct kweb_listener *l, struct kweb_conn *conn,
		     struct request_sock *req, struct sock *child)
{
	struct kweb_server *srv = l->srv;

	conn->req = req;
	/* The accept work is process context: it counts as the worker's. */
	conn->worked = !in_softirq();
	kweb_conn_start(conn, srv, l, child);

	/*
	 * Once the callbacks are ours, softirq may serve and the work item
	 * close the connection before we get further: arm the timer first
	 * (after the close's del_timer_sync() it would outlive conn), and
	 * hold the reference of a run queued below from here.
	 */
	kweb_conn_arm(conn, kweb_limits(srv).header_timeout);
	kref_get(&conn->ref);

	write_lock_bh(&child->sk_callback_lock);
	child->sk_user_data = conn;
	child->sk_data_ready = kweb_conn_data_ready;
	child->sk_write_space = kweb_conn_write_space;
	child->sk_state_change = kweb_conn_state_change;
	write_unlock_bh(&child->sk_callback_lock);

	/*
	 * Whatever arrived before the callbacks were ours (data, a FIN, a
	 * reset) met the listener's callback, which passes it on to
	 * kweb_conn_data_ready() under sk_callback_lock: it found no conn
	 * before the write_unlock above, so this sees what it saw. The
	 * worker looks, since this CPU may hold the child's spinlock. The
	 * common case, a child born of the handshake's last ACK, has
	 * nothing yet: its first request will come to kweb_conn_event().
	 */
	if (skb_queue_empty_lockless(&child->sk_receive_queue) &&
	    inet_sk_state_load(child) == TCP_ESTABLISHED &&
	    !READ_ONCE(child->sk_err))
		kweb_conn_put(conn);
	else if (!queue_work(srv->wq, &conn->work))
		kweb_conn_put(conn);
}

/*
 * Take over a kTLS socket that kwebtlsd gave back (tls.c sets conn->file
 * and conn->sock first): process context, the socket locked, before
 * kweb's hooks are installed. Its first run is queued once they are.
 */
void kweb_conn_adopt_tls(struct kweb_server *srv, struct kweb_conn *conn,
			 struct sock *sk)
{
	conn->worked = true;
	/* kwebtlsd's accept() chose its cgroup (docs/tls.md). */
	conn->charged = true;
	/* Only for its family: a TLS connection has a socket already. */
	kweb_conn_start(conn, srv, &srv->listeners[0], sk);
	kweb_conn_arm(conn, kweb_limits(srv).header_timeout);
}

/*
 * Under kweb_ctl_mutex, srv no longer listening: close every connection.
 * Nothing waits for them here: a run may be waiting on the docroot's
 * filesystem for as long as it likes, and nothing of another listener
 * or namespace may wait with it. The last to go queues srv->reap, as
 * does this if none is left; runs queued before then hold the last
 * references, and the reap's destroy_workqueue() waits for them.
 */
void kweb_conns_abort(struct kweb_server *srv)
{
	struct kweb_conn *conn;
	bool none;

	spin_lock_bh(&srv->conns_lock);
	srv->dying = true;
	list_for_each_entry(conn, &srv->conns, node) {
		WRITE_ONCE(conn->abort, true);
		kweb_conn_queue(conn);
	}
	none = !srv->nr_conns;
	spin_unlock_bh(&srv->conns_lock);
	if (none)
		queue_work(kweb_wq, &srv->reap);
}

int kweb_conn_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct kweb_closer *closer = per_cpu_ptr(&kweb_closers, cpu);

		init_llist_head(&closer->conns);
		INIT_DELAYED_WORK(&closer->work, kweb_closer_work);
	}
	/*
	 * What never waits on a filesystem: accepts, closes, cache puts,
	 * log flushes and reaps (a connection's runs have its server's).
	 * Unbound: the accept, the first request that beat it and the close
	 * then run on whichever CPU is idle, beside the softirq that queued
	 * them, rather than waiting behind it. With per-CPU work one client
	 * opening a connection per request kept a vCPU idle and the other
	 * one busy (measured: 1.5 times the connections per second unbound).
	 */
	kweb_wq = alloc_workqueue(KWEB_NAME, WQ_UNBOUND, 0);
	if (!kweb_wq)
		return -ENOMEM;
	kweb_conn_cache = KMEM_CACHE(kweb_conn, 0);
	if (!kweb_conn_cache) {
		destroy_workqueue(kweb_wq);
		return -ENOMEM;
	}
	return 0;
}

void kweb_conn_exit(void)
{
	/* Every server has stopped: no closer's timer may fire after this. */
	kweb_closers_flush();
	destroy_workqueue(kweb_wq);
	kmem_cache_destroy(kweb_conn_cache);
}
