// SPDX-License-Identifier: GPL-2.0
/*
 * HTTPS (docs/tls.md): a socket that a TLS listener handed to kwebtlsd,
 * which did the handshake and installed kTLS both ways, comes back by
 * descriptor (sock-adopt) and is served by the connection's work item
 * only: kTLS's recvmsg and sendmsg take the socket lock and sleep, so
 * softirq never touches it. Its callbacks only queue the work item.
 *
 * Plaintext comes from sock_recvmsg() into conn->tls_in, where conn.c
 * peeks and consumes it as it does TCP's receive queue for a cleartext
 * connection. A record that is not application data (an alert, a
 * close_notify, a KeyUpdate, which kTLS RX cannot follow on 6.1 and
 * 6.12) ends the stream as a FIN does, but for a TLS 1.2 request to
 * renegotiate, which is refused; a decrypt error resets it.
 *
 * sock-adopt takes the daemon's descriptor. A socket kweb then holds
 * alone is kweb's as a child of its listener is, and holds no more than
 * one on its network namespace (kweb_tls_adopt()): the namespace does
 * not outlive its processes for the sake of kweb's keep-alive clients,
 * and its exit closes them with kweb's server.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <net/inet_connection_sock.h>
#include <net/tcp.h>
#include <net/tls.h>

#include "compat.h"
#include "kweb.h"
#include "tls.h"

#define KWEB_TLS_CT_ALERT	21
#define KWEB_TLS_CT_HANDSHAKE	22
#define KWEB_TLS_CT_DATA	23
#define KWEB_TLS_ALERT_WARNING	1
#define KWEB_TLS_ALERT_FATAL	2
#define KWEB_TLS_CLOSE_NOTIFY	0
#define KWEB_TLS_NO_RENEGOTIATION 100

/* Decrypted plaintext waiting: enough for a head, or records of a body. */
#define KWEB_TLS_IN_MIN 4096

/*
 * kTLS's hooks call these: saved_data_ready once a whole record is
 * decrypted (from softirq or kTLS's own work), sk_write_space after
 * kTLS has pushed what it held. Each queues kweb's work and then calls
 * what it replaced. Once kweb has let go (sk_user_data cleared under
 * sk_callback_lock, the hooks put back) a late caller finds the
 * original in place.
 */
static void kweb_tls_hook(struct sock *sk, size_t off, bool rx)
{
	void (*orig)(struct sock *sk) = NULL;
	struct kweb_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn) {
		orig = *(void (**)(struct sock *))((char *)conn + off);
		/* Before the work is queued: kweb_tls_fill() clears it. */
		if (rx)
			WRITE_ONCE(conn->tls_more, true);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	kweb_conn_data_ready(sk);
	if (orig)
		orig(sk);
}

static void kweb_tls_data_ready(struct sock *sk)
{
	kweb_tls_hook(sk, offsetof(struct kweb_conn, tls_data_ready), true);
}

static void kweb_tls_write_space(struct sock *sk)
{
	kweb_tls_hook(sk, offsetof(struct kweb_conn, tls_write_space), false);
}

static void kweb_tls_state_change(struct sock *sk)
{
	kweb_tls_hook(sk, offsetof(struct kweb_conn, tls_state_change), true);
}

/*
 * kTLS's record parser reports a record it cannot take (a length over
 * what TLS allows, a bad version) from softirq through sk_err and
 * sk_error_report() alone, and stops: no data_ready follows.
 */
static void kweb_tls_error_report(struct sock *sk)
{
	kweb_tls_hook(sk, offsetof(struct kweb_conn, tls_error_report), true);
}

/* A kTLS socket, software or offloaded, with both directions set up. */
static bool kweb_tls_ready(struct sock *sk)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);
	const struct tls_context *ctx;

	if (!icsk->icsk_ulp_ops || strcmp(icsk->icsk_ulp_ops->name, "tls"))
		return false;
	ctx = tls_get_ctx(sk);
	/* The hooks are the software path's: offload has no strparser. */
	return ctx && ctx->tx_conf == TLS_SW && ctx->rx_conf == TLS_SW;
}

static void kweb_tls_hooks_restore(struct kweb_conn *conn)
{
	struct sock *sk = conn->sk;
	struct tls_context *ctx = tls_get_ctx(sk);

	tls_sw_ctx_rx(ctx)->saved_data_ready = conn->tls_data_ready;
	ctx->sk_write_space = conn->tls_write_space;
	sk->sk_state_change = conn->tls_state_change;
	sk->sk_error_report = conn->tls_error_report;
}

/*
 * Whether the lookup's reference is, with no more than extra others, all
 * that holds the socket's file, and no epoll set watches it (an epoll
 * item polls a file it holds no reference to). A handoff ungrafts the
 * socket from the file (kweb_handoff()): anyone else still reaching the
 * file would find no socket, or, until then, the backend's connection.
 */
static bool kweb_tls_file_ours(struct file *file, long extra)
{
#ifdef CONFIG_EPOLL
	if (READ_ONCE(file->f_ep))
		return false;
#endif
	return file_count(file) == 1 + extra;
}

/*
 * Process context, from the daemon's sock-adopt, under kweb_ctl_mutex,
 * with sock looked up from descriptor fd of the caller's file table. On
 * success the descriptor is closed and the lookup's file reference is
 * the connection's. The file must be the daemon's by that descriptor
 * alone: not dup'd, shared with a child, in flight, in use by another
 * call, or watched by epoll.
 */
int kweb_tls_adopt(struct kweb_server *srv, struct socket *sock,
		   unsigned int fd, struct netlink_ext_ack *extack)
{
	struct sock *sk = sock->sk;
	struct kweb_conn *conn;
	int err = 0;

	if (sk->sk_type != SOCK_STREAM || sk->sk_protocol != IPPROTO_TCP ||
	    (sk->sk_family != AF_INET && sk->sk_family != AF_INET6)) {
		NL_SET_ERR_MSG(extack, "not a TCP socket");
		return -EINVAL;
	}
	if (!net_eq(sock_net(sk), srv->net)) {
		NL_SET_ERR_MSG(extack, "the socket is of another network namespace");
		return -EINVAL;
	}
	/*
	 * Its children went to the daemon whatever the count: what it
	 * gives back counts here, as a cleartext child does at accept.
	 */
	if (kweb_server_full(srv)) {
		NL_SET_ERR_MSG(extack, "the listener is at max-connections");
		return -EBUSY;
	}
	conn = kweb_conn_alloc(GFP_KERNEL_ACCOUNT);
	if (!conn)
		return -ENOMEM;
	conn->tls_in = kmalloc(KWEB_TLS_IN_MIN, GFP_KERNEL_ACCOUNT);
	if (!conn->tls_in) {
		kweb_conn_free_unused(conn);
		return -ENOMEM;
	}
	conn->tls_size = KWEB_TLS_IN_MIN;
	conn->tls_more = true;

	lock_sock(sk);
	if (sk->sk_state != TCP_ESTABLISHED && sk->sk_state != TCP_CLOSE_WAIT) {
		NL_SET_ERR_MSG(extack, "the socket is not connected");
		err = -ENOTCONN;
	} else if (!kweb_tls_ready(sk)) {
		NL_SET_ERR_MSG(extack, "kTLS is not installed for sending and receiving");
		err = -EINVAL;
	} else if (sk->sk_user_data) {
		NL_SET_ERR_MSG(extack, "the socket is in use");
		err = -EBUSY;
	} else if (!kweb_tls_file_ours(sock->file, 1)) {
		NL_SET_ERR_MSG(extack, "the socket's file is shared or polled");
		err = -EBUSY;
	}
	if (err) {
		release_sock(sk);
		kfree(conn->tls_in);
		kweb_conn_free_unused(conn);
		return err;
	}
	/*
	 * Another thread of the daemon may have shared the file since (a
	 * dup): the descriptor is gone all the same, and the socket is not
	 * ours. Else no descriptor is left, nothing can take another
	 * reference, and the netns may go while kweb serves it
	 * (kweb_tls_release()). The caller's netlink socket holds the
	 * netns meanwhile.
	 */
	close_fd(fd);
	if (!kweb_tls_file_ours(sock->file, 0)) {
		release_sock(sk);
		NL_SET_ERR_MSG(extack, "the socket's file is shared or polled");
		kfree(conn->tls_in);
		kweb_conn_free_unused(conn);
		return -EBUSY;
	}
	if (sk->sk_net_refcnt)
		kweb_sk_net_refcnt_downgrade(sk);
	conn->file = sock->file;
	conn->sock = sock;
	/* Ready for the hooks before they can find it. */
	kweb_conn_adopt_tls(srv, conn, sk);
	/*
	 * Under the socket lock, as kTLS sets its hooks: softirq and
	 * kTLS's strparser work read them with the socket held.
	 */
	write_lock_bh(&sk->sk_callback_lock);
	conn->tls_data_ready = tls_sw_ctx_rx(tls_get_ctx(sk))->saved_data_ready;
	conn->tls_write_space = tls_get_ctx(sk)->sk_write_space;
	conn->tls_state_change = sk->sk_state_change;
	conn->tls_error_report = sk->sk_error_report;
	sk->sk_user_data = conn;
	tls_sw_ctx_rx(tls_get_ctx(sk))->saved_data_ready = kweb_tls_data_ready;
	tls_get_ctx(sk)->sk_write_space = kweb_tls_write_space;
	sk->sk_state_change = kweb_tls_state_change;
	sk->sk_error_report = kweb_tls_error_report;
	write_unlock_bh(&sk->sk_callback_lock);
	/*
	 * The backlog's replay may have the worker end the connection, and
	 * drop what held sk, before we look: hold it meanwhile.
	 */
	sock_hold(sk);
	release_sock(sk);

	kweb_stat_add(srv->stats, KWEB_STAT_TLS_CONNS, 1);
	/* A record decrypted before the hooks were ours: the work looks. */
	kweb_conn_data_ready(sk);
	sock_put(sk);
	return 0;
}

void kweb_tls_restore_callbacks(struct kweb_conn *conn)
{
	struct sock *sk = conn->sk;

	lock_sock(sk);
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	kweb_tls_hooks_restore(conn);
	write_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);
}

static int kweb_tls_alert(struct kweb_conn *conn, u8 level, u8 desc);

/*
 * Files of sockets whose netns is dying, which found none to take back
 * (kweb_sk_hold_net()): each must be closed before the netns's exit
 * goes on, and fput() from a kthread only queues the close. A work item
 * of its own closes them, in a kthread as 6.1's __fput_sync() requires,
 * outside every lock and work of kweb's (a socket's close takes its
 * inode's lock, which lockdep knows from a netlink socket's close, taken
 * before genetlink's cb_lock and so before kweb_ctl_mutex), and the
 * netns's exit waits for it once its servers are gone
 * (kweb_tls_dying_flush()).
 */
struct kweb_tls_dying {
	struct llist_node node;
	struct file *file;
};

static LLIST_HEAD(kweb_tls_dying_files);

static void kweb_tls_dying_close(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&kweb_tls_dying_files);
	struct kweb_tls_dying *d, *tmp;

	llist_for_each_entry_safe(d, tmp, list, node) {
		__fput_sync(d->file);
		kfree(d);
	}
}

static DECLARE_WORK(kweb_tls_dying_work, kweb_tls_dying_close);

void kweb_tls_dying_flush(void)
{
	flush_work(&kweb_tls_dying_work);
}

/* The end: the socket goes with the file's last reference. */
void kweb_tls_release(struct kweb_conn *conn, bool reset)
{
	struct kweb_tls_dying *d;

	if (reset)
		sock_no_linger(conn->sk);
	conn->sock = NULL;
	if (conn->sk->sk_net_refcnt) {
		fput(conn->file);
		kfree(conn->tls_in);
	} else {
		/* Its buffer, no longer needed, carries it: nothing to fail. */
		static_assert(sizeof(*d) <= KWEB_TLS_IN_MIN);
		d = (struct kweb_tls_dying *)conn->tls_in;
		d->file = conn->file;
		llist_add(&d->node, &kweb_tls_dying_files);
		queue_work(system_unbound_wq, &kweb_tls_dying_work);
	}
	conn->file = NULL;
	conn->tls_in = NULL;
}

/*
 * kweb closes a connection it did not end with a response's close_notify
 * (the peer's close_notify or FIN, a KeyUpdate, a timeout): RFC 8446 6.1
 * wants a close_notify before the FIN all the same, as nginx's
 * SSL_shutdown() sends. kTLS gives it to TCP at once when there is room,
 * or pushes it once at close. Not after the peer's fatal alert, nor when
 * resetting.
 */
void kweb_tls_close(struct kweb_conn *conn, bool reset)
{
	if (!reset && !conn->tls_notified)
		kweb_tls_alert(conn, KWEB_TLS_ALERT_WARNING, KWEB_TLS_CLOSE_NOTIFY);
	kweb_tls_release(conn, reset);
}

/*
 * One recvmsg through kTLS, without waiting; *type is the record's
 * content type (TLS_GET_RECORD_TYPE). kTLS returns records of one type
 * only per call.
 */
static int kweb_tls_recv(struct kweb_conn *conn, size_t len, int flags,
			 u8 *type)
{
	char cbuf[CMSG_SPACE(sizeof(unsigned char))];
	struct cmsghdr *cm = (struct cmsghdr *)cbuf;
	struct kvec iov = { .iov_base = conn->tls_in, .iov_len = len };
	struct msghdr msg = {
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	int n;

	n = kernel_recvmsg(conn->sock, &msg, &iov, 1, len,
			   flags | MSG_DONTWAIT);
	/* put_cmsg() moved msg_control past what it wrote. */
	*type = KWEB_TLS_CT_DATA;
	if (n > 0 && msg.msg_controllen < sizeof(cbuf) &&
	    cm->cmsg_level == SOL_TLS && cm->cmsg_type == TLS_GET_RECORD_TYPE)
		*type = *(u8 *)CMSG_DATA(cm);
	return n;
}

/*
 * A handshake record on a TLS 1.2 connection is the client asking to
 * renegotiate, which kTLS cannot follow and kwebtlsd would not do
 * (SSL_OP_NO_RENEGOTIATION). Refused as OpenSSL refuses it: the record
 * dropped, a no_renegotiation warning back (RFC 5746 4.5), and the
 * connection goes on with its keys; left unanswered, the client would
 * wait for a ServerHello (testssl.sh: "Secure Client-Initiated
 * Renegotiation VULNERABLE"). Once: a client that asks again is closed,
 * as is a record larger than conn->tls_in. In TLS 1.3 such a record is a
 * KeyUpdate, which kTLS RX cannot take: the stream ends there.
 */
static bool kweb_tls_refuse_renegotiation(struct kweb_conn *conn, int n)
{
	u16 version = tls_get_ctx(conn->sk)->prot_info.version;
	u8 type;

	if (version != TLS_1_2_VERSION || conn->tls_renego ||
	    (unsigned int)n == conn->tls_size)
		return false;
	conn->tls_renego = true;
	if (kweb_tls_recv(conn, n, 0, &type) != n ||
	    type != KWEB_TLS_CT_HANDSHAKE)
		return false;
	kweb_tls_alert(conn, KWEB_TLS_ALERT_WARNING, KWEB_TLS_NO_RENEGOTIATION);
	return true;
}

/*
 * Records peeked and not yet read wait on kTLS's rx_list, each in
 * buffers of its own (a page for an empty one), charged to nobody, and
 * every peek walks them again. A client that sends its request in tiny
 * or empty records (TLS 1.3 allows empty application data; OpenSSL
 * refuses more than 32 in a row) would have them pile up, a page for 22
 * bytes on the wire: past this many the connection is reset. A request
 * head takes a record or two; pipelined ones share records.
 */
#define KWEB_TLS_PEEKED_MAX 64

static bool kweb_tls_piled(struct kweb_conn *conn)
{
	struct tls_sw_context_rx *rx = tls_sw_ctx_rx(tls_get_ctx(conn->sk));

	return skb_queue_len_lockless(&rx->rx_list) > KWEB_TLS_PEEKED_MAX;
}

/*
 * Peek what kTLS has decrypted into conn->tls_in. Decrypted records stay
 * on kTLS's rx_list until read, and a peek always starts at the first
 * byte not read: so conn->tls_in mirrors the head of the stream, and a
 * request kweb hands to the backend is still there for it to read.
 *
 * A record that is not application data reaches the head only once the
 * data before it is consumed, and ends the stream there: close_notify
 * and other alerts, and handshake records (a KeyUpdate, whose new key
 * kTLS RX cannot take: the stream beyond it is unreadable).
 */
static void kweb_tls_fill(struct kweb_conn *conn)
{
	u8 type;
	int n;

	if (conn->tls_eof || conn->tls_err || conn->tls_len == conn->tls_size)
		return;
	/*
	 * Nothing was read since the last peek and no hook announced a
	 * record: a peek now would find the same bytes. Cleared before the
	 * peek, so a record the hooks announce meanwhile is looked for.
	 */
	if (!READ_ONCE(conn->tls_more))
		return;
	WRITE_ONCE(conn->tls_more, false);
	/* The clear before the peek's look; pairs with the hook's store. */
	smp_mb();
again:
	n = kweb_tls_recv(conn, conn->tls_size, MSG_PEEK, &type);
	if (kweb_tls_piled(conn)) {
		conn->tls_err = EPROTO;
		return;
	}
	if (n == -EAGAIN)
		return;
	if (n < 0) {
		/* -EBADMSG: a record that does not decrypt. */
		conn->tls_err = -n;
		return;
	}
	if (!n || type != KWEB_TLS_CT_DATA) {
		if (type == KWEB_TLS_CT_HANDSHAKE && !conn->tls_len && n > 0 &&
		    kweb_tls_refuse_renegotiation(conn, n))
			goto again;
		conn->tls_eof = true;
		/* A fatal alert: the connection is over, no alert back. */
		if (type == KWEB_TLS_CT_ALERT && n >= 2 && !conn->tls_len &&
		    conn->tls_in[0] == KWEB_TLS_ALERT_FATAL)
			conn->tls_notified = true;
		return;
	}
	conn->tls_len = max_t(unsigned int, conn->tls_len, n);
}

size_t kweb_tls_peek(struct kweb_conn *conn, size_t skip, char *buf,
		     size_t len)
{
	kweb_tls_fill(conn);
	if (skip >= conn->tls_len)
		return 0;
	len = min_t(size_t, len, conn->tls_len - skip);
	memcpy(buf, conn->tls_in + skip, len);
	return len;
}

/* Read for good what was peeked: the same bytes, over themselves. */
size_t kweb_tls_consume(struct kweb_conn *conn, size_t len)
{
	u8 type;
	int n;

	kweb_tls_fill(conn);
	len = min_t(size_t, len, conn->tls_len);
	if (!len)
		return 0;
	n = kweb_tls_recv(conn, len, 0, &type);
	if (n <= 0) {
		conn->tls_err = n ? -n : EPIPE;
		return 0;
	}
	/*
	 * More may be decrypted and waiting: behind a full buffer's peek,
	 * or a record of another type (an alert), which a peek reaches only
	 * once the data before it is read.
	 */
	WRITE_ONCE(conn->tls_more, true);
	memmove(conn->tls_in, conn->tls_in + n, conn->tls_len - n);
	conn->tls_len -= n;
	kweb_tls_fill(conn);
	return n;
}

size_t kweb_tls_unread(struct kweb_conn *conn, size_t want)
{
	char *in;

	kweb_tls_fill(conn);
	/* A head longer than the buffer: grow it, up to what is wanted. */
	if (conn->tls_len == conn->tls_size && want > conn->tls_size) {
		in = krealloc(conn->tls_in, min_t(size_t, want,
						  2 * conn->tls_size),
			      GFP_KERNEL_ACCOUNT);
		if (in) {
			conn->tls_in = in;
			conn->tls_size = min_t(size_t, want,
					       2 * conn->tls_size);
			WRITE_ONCE(conn->tls_more, true);
			kweb_tls_fill(conn);
		}
	}
	return conn->tls_len;
}

/* The stream is over: an alert, the FIN, or an error that ends it. */
bool kweb_tls_eof(struct kweb_conn *conn)
{
	return !conn->tls_len && (conn->tls_eof || conn->tls_err);
}

/* What kTLS took is what it encrypts: counted (tls_bytes). */
static int kweb_tls_sent(struct kweb_conn *conn, int n)
{
	if (n > 0)
		kweb_stat_add(conn->srv->stats, KWEB_STAT_TLS_BYTES, n);
	return n;
}

int kweb_tls_send_buf(struct kweb_conn *conn, const void *data, size_t len,
		      int flags)
{
	struct kvec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr msg = { .msg_flags = flags };

	return kweb_tls_sent(conn, kernel_sendmsg(conn->sock, &msg, &iov, 1,
						  len));
}

int kweb_tls_send_pages(struct kweb_conn *conn, struct bio_vec *bv,
			unsigned int nr, size_t len, int flags)
{
	return kweb_tls_sent(conn, kweb_sock_send_pages(conn->sock, bv, nr,
							len, flags));
}

/*
 * Records kTLS made of what kweb sent but could not yet give TCP, which
 * had no room: kTLS's tx_work pushes them once ACKs free some. Until
 * then a response is not out: a FIN would overtake them (tcp_shutdown()
 * knows nothing of kTLS), and on close kTLS tries them once, then drops
 * them. With unacked, what TCP has not had acknowledged counts too (a
 * handoff waits for it). SOCK_NOSPACE is set while anything waits, under
 * the socket lock, which tx_work needs and the worker otherwise does not
 * hold for a TLS connection: an ACK that frees the last of it is then
 * processed after the bit is set (release_sock() replays the backlog)
 * and calls sk_write_space(), which brings the work item back to look
 * again. Unlocked, the ACK could come in between and the wait last until
 * send_timeout.
 */
static bool kweb_tls_tx_wait(struct kweb_conn *conn, bool unacked)
{
	struct sock *sk = conn->sk;
	struct tls_context *ctx;
	bool pending;

	lock_sock(sk);
	ctx = tls_get_ctx(sk);
	pending = ctx->partially_sent_record ||
		  !list_empty(&tls_sw_ctx_tx(ctx)->tx_list) ||
		  (unacked && sk->sk_wmem_queued);
	if (pending)
		set_bit(SOCK_NOSPACE, &conn->sock->flags);
	release_sock(sk);
	return pending;
}

bool kweb_tls_tx_unacked(struct kweb_conn *conn)
{
	return kweb_tls_tx_wait(conn, true);
}

/* An alert record: close_notify, or a warning. */
static int kweb_tls_alert(struct kweb_conn *conn, u8 level, u8 desc)
{
	u8 alert[2] = { level, desc };
	char cbuf[CMSG_SPACE(sizeof(unsigned char))] = {};
	struct kvec iov = { .iov_base = alert, .iov_len = sizeof(alert) };
	struct msghdr msg = {
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
		.msg_flags = MSG_DONTWAIT,
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_TLS;
	cm->cmsg_type = TLS_SET_RECORD_TYPE;
	cm->cmsg_len = CMSG_LEN(sizeof(unsigned char));
	*(unsigned char *)CMSG_DATA(cm) = KWEB_TLS_CT_ALERT;
	return kweb_tls_sent(conn, kernel_sendmsg(conn->sock, &msg, &iov, 1,
						  iov.iov_len));
}

int kweb_tls_send_end(struct kweb_conn *conn, bool last)
{
	int n;

	if (last && !conn->tls_notified) {
		/* kTLS set SOCK_NOSPACE on -EAGAIN: room brings us back. */
		n = kweb_tls_alert(conn, KWEB_TLS_ALERT_WARNING,
				   KWEB_TLS_CLOSE_NOTIFY);
		if (n < 0)
			return n;
		conn->tls_notified = true;
	}
	return kweb_tls_tx_wait(conn, false) ? -EAGAIN : 0;
}

/* close_notify and every record before it are TCP's: now the FIN. */
void kweb_tls_shutdown(struct kweb_conn *conn)
{
	kernel_sock_shutdown(conn->sock, SHUT_WR);
}
