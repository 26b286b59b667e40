// SPDX-License-Identifier: GPL-2.0
/*
 * Handoff: a connection whose request kweb does not serve is moved, with
 * every byte of that request still unread, into the accept queue of the
 * backend's listener (an unmodified user-space server). Its accept()
 * then returns an ordinary socket whose peer is the real client.
 *
 * The request_sock that brought the child to kweb's listener is kept
 * (conn->req) and re-parented to the backend listener, as the reuseport
 * migration in inet_csk_listen_stop() does. A TLS connection's went with
 * kwebtlsd's accept(): it gets a new one (kweb_handoff_tls_req()).
 * Children go to the backend listener of their own family: an AF_INET
 * sock in an AF_INET6 listener's queue would reach inet6 code without
 * IPv6 state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/inet.h>
#include <linux/uidgid.h>
#include <net/inet6_hashtables.h>
#include <net/inet_connection_sock.h>
#include <net/inet_hashtables.h>
#include <net/request_sock.h>
#include <net/tcp.h>

#include "compat.h"
#include "kweb.h"
#include "memcg.h"
#include "tls.h"
#include "trace.h"

/*
 * The listener on port (the backend's, or kwebtlsd's) for sk's family,
 * at the backend's addresses, with a reference; NULL if none.
 */
static struct sock *kweb_backend_lookup(struct kweb_server *srv,
					struct sock *sk, u16 port)
{
	struct net *net = sock_net(sk);
	struct inet_hashinfo *hinfo = net->ipv4.tcp_death_row.hashinfo;
	struct sock *lsk = NULL;

	rcu_read_lock();
	if (sk->sk_family == AF_INET)
		lsk = __inet_lookup_listener(net, hinfo, NULL, 0,
					     sk->sk_daddr, sk->sk_dport,
					     srv->backend.addr4, port, 0, 0);
#if IS_ENABLED(CONFIG_IPV6)
	else
		lsk = inet6_lookup_listener(net, hinfo, NULL, 0,
					    &sk->sk_v6_daddr, sk->sk_dport,
					    &srv->backend.addr6, port, 0, 0);
#endif
	if (lsk && lsk->sk_family != sk->sk_family) {
		/* A dual-stack AF_INET6 listener answered an IPv4 lookup. */
		pr_warn_ratelimited("the backend on port %u takes IPv4 on an IPv6 socket; give it an IPv4 listener (nginx: listen 127.0.0.1:%u)\n",
				    port, port);
		lsk = NULL;
	}
	if (lsk && !refcount_inc_not_zero(&lsk->sk_refcnt))
		lsk = NULL;
	rcu_read_unlock();
	return lsk;
}

/*
 * Whether lsk may be given kweb's connections: made by the root of its
 * namespace (as nginx's master makes its listeners, and systemd its
 * sockets), by the user that made kweb's listener, or by the listener's
 * backend-user (an application server that binds its own port). Any user
 * of the namespace can bind an unprivileged port while the backend is
 * down (a restart, a crash): it would read other clients' requests, and
 * over HTTPS their decrypted sessions.
 */
static bool kweb_backend_trusted(const struct kweb_server *srv,
				 const struct sock *lsk)
{
	kuid_t uid = READ_ONCE(lsk->sk_uid);
	bool named;

	if (uid_eq(uid, make_kuid(sock_net(lsk)->user_ns, 0)) ||
	    uid_eq(uid, srv->ident.base->euid))
		return true;
	rcu_read_lock();
	named = uid_eq(uid, rcu_dereference(srv->site)->backend_uid);
	rcu_read_unlock();
	if (named)
		return true;
	pr_warn_ratelimited("not handing off to port %u: its listener belongs to uid %u, not root of its namespace, the creator of kweb's listener on port %u or its backend-user\n",
			    lsk->sk_num,
			    from_kuid_munged(sock_net(lsk)->user_ns, uid),
			    srv->port);
	return false;
}

/*
 * The backend listener sk can go to, referenced, in *lskp
 * (KWEB_HANDOFF_MOVED); or why it cannot, counted as a failure. owned:
 * only a listener kweb_backend_trusted(). kwebtlsd's need not be, and
 * runs unprivileged: what it is given is still encrypted, and only a
 * caller with CAP_NET_ADMIN in the namespace can give a socket back.
 */
static enum kweb_handoff_result kweb_backend_get(struct kweb_server *srv,
						 struct sock *sk, u16 port,
						 bool owned,
						 struct sock **lskp)
{
	struct sock *lsk = kweb_backend_lookup(srv, sk, port);

	if (!lsk || lsk->sk_state != TCP_LISTEN ||
	    (owned && !kweb_backend_trusted(srv, lsk))) {
		if (lsk)
			sock_put(lsk);
		kweb_stat_add(srv->stats, KWEB_STAT_HANDOFF_NO_BACKEND, 1);
		return KWEB_HANDOFF_NO_BACKEND;
	}
	if (sk_acceptq_is_full(lsk)) {
		sock_put(lsk);
		kweb_stat_add(srv->stats, KWEB_STAT_HANDOFF_QUEUE_FULL, 1);
		return KWEB_HANDOFF_QUEUE_FULL;
	}
	*lskp = lsk;
	return KWEB_HANDOFF_MOVED;
}

/*
 * A child of kweb's (kernel) listener holds no reference on its netns
 * until it leaves: the backend's socket must. A TLS connection takes
 * it again in kweb_handoff_move_tls(), where it may sleep.
 */
static void kweb_handoff_hold_net(struct sock *sk)
{
	if (!sk->sk_net_refcnt)
		kweb_sk_net_refcnt_upgrade(sk);
}

/* Leave as a socket fresh from accept() would be; sk locked or unseen. */
static void kweb_handoff_reset(struct sock *sk)
{
	sk->sk_allocation = GFP_KERNEL;
	sk->sk_use_task_frag = true;
	tcp_sk(sk)->nonagle &= ~(TCP_NAGLE_OFF | TCP_NAGLE_PUSH);
}

/*
 * Move sk and its request into lsk's accept queue; takes over the
 * references on all three. sk's spinlock held, BHs off: as
 * inet_csk_listen_stop() migrates a child. lsk's reference moves to the
 * request, which drops its reference on kweb's listener, if it has one:
 * a SYN cookie's request never had (inet_reqsk_alloc() without
 * attach_listener). A listener that stopped listening meanwhile resets
 * the child and drops a reference on it: the caller holds one more.
 * The caller has given sk its netns reference. Returns whether sk was
 * queued.
 */
static bool __kweb_handoff_move(struct kweb_server *srv, struct sock *sk,
				struct request_sock *req, struct sock *lsk)
{
	struct sock *old;
	bool queued;

	lockdep_assert_held(&sk->sk_lock.slock);
	/*
	 * Ungraft kweb's struct socket, if any, as sock_orphan() does:
	 * under the spinlock, since softirq reads sk_socket (e.g.
	 * tcp_check_space()) with only that held. The backend's accept()
	 * grafts sk on a socket of its own.
	 */
	if (sk->sk_socket) {
		write_lock(&sk->sk_callback_lock);
		sk_set_socket(sk, NULL);
		RCU_INIT_POINTER(sk->sk_wq, NULL);
		write_unlock(&sk->sk_callback_lock);
	}
	old = req->rsk_listener;
	req->rsk_listener = lsk;
	queued = inet_csk_reqsk_queue_add(lsk, req, sk);
	if (queued)
		lsk->sk_data_ready(lsk);
	else
		reqsk_put(req);
	if (old)
		sock_put(old);
	if (!queued)
		kweb_stat_add(srv->stats, KWEB_STAT_HANDOFF_FAILED, 1);
	return queued;
}

/* The same from process context. */
static bool kweb_handoff_move(struct kweb_server *srv, struct sock *sk,
			      struct request_sock *req, struct sock *lsk)
{
	bool queued;

	sock_hold(sk);
	/*
	 * Before BHs go off: the upgrade allocates with GFP_KERNEL where
	 * netns references are tracked. Unlocked is safe: until sk is
	 * queued, only kweb looks at its sk_net_refcnt.
	 */
	kweb_handoff_hold_net(sk);
	local_bh_disable();
	bh_lock_sock(sk);
	queued = __kweb_handoff_move(srv, sk, req, lsk);
	bh_unlock_sock(sk);
	local_bh_enable();
	sock_put(sk);
	return queued;
}

/*
 * A request_sock to carry a TLS connection into lsk's accept queue, as a
 * SYN cookie's carries its child (cookie_tcp_reqsk_alloc(),
 * tcp_get_cookie_sock()): the one that brought it went with kwebtlsd's
 * accept(). Of its fields past struct request_sock, accept() reads only
 * tfo_listener; all are zeroed. One reference: the accept queue's.
 */
static struct request_sock *kweb_handoff_tls_req(struct sock *lsk)
{
	const struct request_sock_ops *ops = lsk->sk_prot->rsk_prot;
	struct request_sock *req;

	req = inet_reqsk_alloc(ops, lsk, false);
	if (!req)
		return NULL;
	memset((char *)req + sizeof(*req), 0, ops->obj_size - sizeof(*req));
	refcount_set(&req->rsk_refcnt, 1);
	return req;
}

/*
 * A TLS connection goes to its listener's own backend port, never the
 * namespace's: the backend knows the scheme by the port it is reached on
 * (docs/tls.md). The worker calls without the socket lock (kTLS takes it
 * itself); it is taken here.
 */
static enum kweb_handoff_result kweb_handoff_tls_get(struct kweb_conn *conn,
						     struct sock **lskp)
{
	u16 port = READ_ONCE(conn->srv->backend.port);
	struct sock *sk = conn->sk;
	enum kweb_handoff_result res;
	bool left;

	if (!port) {
		kweb_stat_add(conn->srv->stats, KWEB_STAT_HANDOFF_NO_BACKEND, 1);
		return KWEB_HANDOFF_NO_BACKEND;
	}
	res = kweb_backend_get(conn->srv, sk, port, true, lskp);
	if (res != KWEB_HANDOFF_MOVED)
		return res;
	conn->req = kweb_handoff_tls_req(*lskp);
	lock_sock(sk);
	left = conn->req && kweb_sk_memcg_leave(sk);
	if (left)
		kweb_handoff_reset(sk);
	release_sock(sk);
	if (left)
		return KWEB_HANDOFF_MOVED;
	if (conn->req)
		reqsk_put(conn->req);
	conn->req = NULL;
	sock_put(*lskp);
	kweb_stat_add(conn->srv->stats, KWEB_STAT_HANDOFF_FAILED, 1);
	return KWEB_HANDOFF_FAILED;
}

/*
 * Worker, with the request unread at the head of the receive queue and
 * nothing of ours left in the send queue: under lock_sock(conn->sk), but
 * for a TLS connection. Finds the backend and readies the socket to
 * leave; returns 0 (the connection is then in KWEB_CONN_HANDOFF, for
 * kweb_handoff() once unlocked) or the status to answer instead.
 */
u16 kweb_handoff_prepare(struct kweb_conn *conn, enum kweb_route why)
{
	enum kweb_handoff_result res;
	struct sock *lsk;
	u16 status;

	if (conn->file) {
		res = kweb_handoff_tls_get(conn, &lsk);
	} else if (!conn->req) {
		/* A Fast Open child's request stays with kweb's listener. */
		kweb_stat_add(conn->srv->stats, KWEB_STAT_HANDOFF_FAILED, 1);
		res = KWEB_HANDOFF_FAILED;
	} else {
		res = kweb_backend_get(conn->srv, conn->sk,
				       kweb_server_backend_port(conn->srv),
				       true, &lsk);
		/* Its memory is the backend's to pay for from accept() on. */
		if (res == KWEB_HANDOFF_MOVED &&
		    !kweb_sk_memcg_leave(conn->sk)) {
			sock_put(lsk);
			kweb_stat_add(conn->srv->stats,
				      KWEB_STAT_HANDOFF_FAILED, 1);
			res = KWEB_HANDOFF_FAILED;
		}
	}
	if (res != KWEB_HANDOFF_MOVED) {
		status = res == KWEB_HANDOFF_NO_BACKEND ? 502 : 503;
		trace_kweb_handoff(conn->srv, conn->sk, why, res, status);
		return status;
	}
	if (!conn->file)
		kweb_handoff_reset(conn->sk);
	conn->backend = lsk;
	conn->handoff = why;
	conn->state = KWEB_CONN_HANDOFF;
	return 0;
}

/*
 * A kTLS socket must never meet inet_child_forget(), which the backend
 * listener's stop would apply to it between our look and the move: that
 * disconnects and destroys it without kTLS's close, whose context would
 * leak. With the listener locked it cannot stop; if it has, nothing
 * moves and the caller resets the socket.
 */
static bool kweb_handoff_move_tls(struct kweb_conn *conn)
{
	struct sock *lsk = conn->backend;
	bool queued = false;

	/* The move gives our reference to the request: this one unlocks. */
	sock_hold(lsk);
	lock_sock(lsk);
	/*
	 * One kweb alone held had let its netns go: it takes it back, for
	 * user space, or for its close if the move fails (tls.c).
	 */
	if (kweb_sk_hold_net(conn->sk) && lsk->sk_state == TCP_LISTEN)
		queued = kweb_handoff_move(conn->srv, conn->sk, conn->req, lsk);
	release_sock(lsk);
	if (!queued) {
		reqsk_put(conn->req);
		sock_put(lsk);
		kweb_stat_add(conn->srv->stats, KWEB_STAT_HANDOFF_FAILED, 1);
	}
	sock_put(lsk);
	return queued;
}

/*
 * kweb's callbacks already gone and its timer stopped. Process context
 * with the socket unlocked; or atomic: softirq, with the socket's
 * spinlock held and no struct socket to release. Takes over conn->sock,
 * conn->req and conn->backend; conn holds a reference on conn->sk.
 */
void kweb_handoff(struct kweb_conn *conn, bool atomic)
{
	struct socket *sock = conn->sock;
	bool tls = conn->file;
	bool queued;

	if (atomic) {
		/* Never allocates here: see KWEB_HANDOFF_ATOMIC. */
		kweb_handoff_hold_net(conn->sk);
		queued = __kweb_handoff_move(conn->srv, conn->sk, conn->req,
					     conn->backend);
	} else if (tls) {
		queued = kweb_handoff_move_tls(conn);
		/* Ungrafted, the file's release frees only itself. */
		if (queued)
			sock->sk = NULL;
		kweb_tls_release(conn, !queued);
	} else {
		queued = kweb_handoff_move(conn->srv, conn->sk, conn->req,
					   conn->backend);
	}
	/* sk was ungrafted from it: releasing it now frees only itself. */
	if (sock && !tls) {
		sock->sk = NULL;
		sock_release(sock);
		conn->sock = NULL;
	}
	trace_kweb_handoff(conn->srv, conn->sk, conn->handoff,
			   queued ? KWEB_HANDOFF_MOVED : KWEB_HANDOFF_FAILED, 0);
	if (queued) {
		kweb_stat_add(conn->srv->stats, KWEB_STAT_HANDOFF_METHOD +
			      conn->handoff - KWEB_ROUTE_METHOD, 1);
		if (atomic)
			kweb_stat_add(conn->srv->stats,
				      KWEB_STAT_HANDOFF_SOFTIRQ, 1);
		kweb_log_end(conn, 0, 0);
	} else {
		/* Closed without a response: nginx's 444. */
		kweb_log_end(conn, 444, 0);
	}
	conn->req = NULL;
	conn->backend = NULL;
}

/*
 * A child just popped from l's accept queue goes, unread, to the listener
 * on port, for why (KWEB_HANDOFF_CONN_LIMIT or _TLS). Returns false, with
 * nothing taken over, if it cannot.
 */
static bool kweb_handoff_new(struct kweb_listener *l, struct request_sock *req,
			     struct sock *child, u16 port, int why)
{
	enum kweb_handoff_result res = KWEB_HANDOFF_FAILED;
	struct sock *lsk;
	bool moved, traced;

	if (req)
		res = kweb_backend_get(l->srv, child, port,
				       why != KWEB_HANDOFF_TLS, &lsk);
	if (res != KWEB_HANDOFF_MOVED) {
		/* The caller resets it. */
		trace_kweb_handoff(l->srv, child, why, res, 0);
		return false;
	}
	/* It inherited kweb's listener callbacks: give back the socket's. */
	write_lock_bh(&child->sk_callback_lock);
	child->sk_data_ready = l->orig_data_ready;
	child->sk_write_space = l->orig_write_space;
	child->sk_state_change = l->orig_state_change;
	write_unlock_bh(&child->sk_callback_lock);
	lock_sock(child);
	kweb_handoff_reset(child);
	release_sock(child);
	/* Queued or reset, child is no longer ours: the event holds it. */
	traced = trace_kweb_handoff_enabled();
	if (traced)
		sock_hold(child);
	moved = kweb_handoff_move(l->srv, child, req, lsk);
	if (traced) {
		trace_kweb_handoff(l->srv, child, why, moved ?
				   KWEB_HANDOFF_MOVED : KWEB_HANDOFF_FAILED, 0);
		sock_put(child);
	}
	if (moved && why == KWEB_HANDOFF_CONN_LIMIT)
		kweb_stat_add(l->srv->stats, KWEB_STAT_HANDOFF_CONN_LIMIT, 1);
	return true;
}

/* A child kweb, at max_connections, has no room for: the backend's. */
bool kweb_handoff_child(struct kweb_listener *l, struct request_sock *req,
			struct sock *child)
{
	return kweb_handoff_new(l, req, child,
				kweb_server_backend_port(l->srv),
				KWEB_HANDOFF_CONN_LIMIT);
}

/*
 * A TLS listener's child: to kwebtlsd, before a byte of it is read. The
 * daemon's accept() makes it a socket with a file, as for any server,
 * and its handshake never runs in kweb (docs/tls.md).
 */
bool kweb_handoff_tls(struct kweb_listener *l, struct request_sock *req,
		      struct sock *child)
{
	return kweb_handoff_new(l, req, child, READ_ONCE(l->srv->tls_port),
				KWEB_HANDOFF_TLS);
}
