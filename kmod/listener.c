// SPDX-License-Identifier: GPL-2.0
/*
 * Listening sockets: one per address family, so that a connection handed
 * to a user-space listener later is of that listener's family. Children
 * are popped from the accept queue with their request_sock, which a
 * handoff needs, in the listener's sk_data_ready (softirq) when nothing
 * stands in the way, and by the accept work otherwise.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/net.h>
#include <linux/sched/mm.h>
#include <net/inet_connection_sock.h>
#include <net/ipv6.h>
#include <net/request_sock.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "kweb.h"

/*
 * Pop the next child and its request; NULL when the queue is empty. Any
 * context: the queue has its own lock, and the listener outlives every
 * caller (kweb_listeners_stop()).
 */
static struct sock *kweb_accept_one(struct sock *lsk,
				    struct request_sock **reqp)
{
	struct request_sock_queue *queue = &inet_csk(lsk)->icsk_accept_queue;
	struct request_sock *req;
	struct sock *child;

	req = reqsk_queue_remove(queue, lsk);
	if (!req)
		return NULL;
	child = req->sk;
	/* As inet_csk_accept(): a Fast Open request stays the listener's. */
	if (tcp_rsk(req)->tfo_listener) {
		spin_lock_bh(&queue->fastopenq.lock);
		if (tcp_rsk(req)->tfo_listener) {
			req->sk = NULL;
			req = NULL;
		}
		spin_unlock_bh(&queue->fastopenq.lock);
	}
	*reqp = req;
	return child;
}

/*
 * A connection costs its listener's creator, as a user-space server's
 * cost it: charged to srv->memcg, in softirq as in the accept work. Not
 * over its limit (no __GFP_HIGH, no OOM kill): the client is refused
 * then, or left for the accept work, which may reclaim.
 */
static struct kweb_conn *kweb_listener_conn_alloc(struct kweb_listener *l,
						  gfp_t gfp)
{
	struct mem_cgroup *memcg = set_active_memcg(l->srv->memcg);
	struct kweb_conn *conn = kweb_conn_alloc(gfp | __GFP_ACCOUNT);

	set_active_memcg(memcg);
	return conn;
}

/*
 * Softirq: adopt every child waiting. Returns false, with the rest left
 * in the queue, when only the accept work can go on: kweb is at
 * max_connections (the handoff of a child sleeps), or out of atomic
 * memory.
 */
static bool kweb_accept_atomic(struct kweb_listener *l)
{
	struct sock *lsk = l->sock->sk;
	struct request_sock *req;
	struct kweb_conn *conn;
	struct sock *child;

	for (;;) {
		if (kweb_server_full(l->srv))
			return false;
		/* Before the pop: a child popped must be adopted. */
		conn = kweb_listener_conn_alloc(l, GFP_NOWAIT | __GFP_NOWARN);
		if (!conn)
			return false;
		child = kweb_accept_one(lsk, &req);
		if (!child) {
			kweb_conn_free_unused(conn);
			return true;
		}
		kweb_conn_adopt(l, conn, req, child);
	}
}

static void kweb_listen_data_ready(struct sock *sk)
{
	struct kweb_listener *l;

	/*
	 * Children inherit this callback until they are adopted, and a
	 * child's data may race with its adoption: kweb_conn_data_ready()
	 * sorts that out (it finds no connection before). The listener has
	 * a socket, children not yet adopted none. Closing a listener runs
	 * callbacks with sk_callback_lock held, hence RCU and not that lock.
	 */
	if (!sk->sk_socket) {
		kweb_conn_data_ready(sk);
		return;
	}
	if (sk->sk_state != TCP_LISTEN)
		return;
	rcu_read_lock();
	l = rcu_dereference_sk_user_data(sk);
	/* A TLS listener's children go to kwebtlsd: that sleeps. */
	if (l && !(in_softirq() && !READ_ONCE(l->srv->tls_port) &&
		   kweb_accept_atomic(l)))
		queue_work(kweb_wq, &l->accept_work);
	rcu_read_unlock();
}

static void kweb_accept_work(struct work_struct *work)
{
	struct kweb_listener *l = container_of(work, struct kweb_listener,
					       accept_work);
	struct request_sock *req;
	struct kweb_conn *conn;
	struct sock *child;

	while ((child = kweb_accept_one(l->sock->sk, &req))) {
		if (READ_ONCE(l->srv->tls_port)) {
			/* No daemon listening: reset, as with no backend. */
			if (!kweb_handoff_tls(l, req, child))
				kweb_child_drop(req, child);
			continue;
		}
		/* Full: the backend may have room; existing ones go on. */
		if (kweb_server_full(l->srv)) {
			if (!kweb_handoff_child(l, req, child))
				kweb_child_drop(req, child);
			continue;
		}
		conn = kweb_listener_conn_alloc(l, GFP_KERNEL |
						__GFP_RETRY_MAYFAIL |
						__GFP_NOWARN);
		if (!conn) {
			kweb_child_drop(req, child);
			continue;
		}
		kweb_conn_adopt(l, conn, req, child);
	}
}

static int kweb_listener_start(struct kweb_server *srv,
			       struct kweb_listener *l, int family)
{
	struct sockaddr_storage addr = {};
	struct socket *sock;
	struct sock *sk;
	int err, addrlen;

	err = sock_create_kern(srv->net, family, SOCK_STREAM, IPPROTO_TCP,
			       &sock);
	if (err)
		return err;
	sk = sock->sk;
	sock_set_reuseaddr(sk);
	/*
	 * Children inherit these. They send from softirq: no sleeping
	 * allocations, and no current->task_frag (6.2+), which belongs to
	 * whatever task softirq interrupted.
	 */
	sk->sk_allocation = GFP_ATOMIC;
	sk->sk_use_task_frag = false;
	/* Responses are whole; Nagle would only delay pipelined ones. */
	tcp_sock_set_nodelay(sk);
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&addr;

		/* IPv4 clients belong to the AF_INET listener. */
		err = ip6_sock_set_v6only(sk);
		if (err)
			goto out;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = srv->any ? in6addr_any : srv->addr6;
		sin6->sin6_port = htons(srv->port);
		addrlen = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&addr;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = srv->any ? htonl(INADDR_ANY) : srv->addr4;
		sin->sin_port = htons(srv->port);
		addrlen = sizeof(*sin);
	}
	err = kernel_bind(sock, (struct sockaddr *)&addr, addrlen);
	if (err)
		goto out;

	l->sock = sock;
	l->ops = sock->ops;
	l->srv = srv;
	INIT_WORK(&l->accept_work, kweb_accept_work);
	write_lock_bh(&sk->sk_callback_lock);
	l->orig_data_ready = sk->sk_data_ready;
	l->orig_write_space = sk->sk_write_space;
	l->orig_state_change = sk->sk_state_change;
	/* NOCOPY: children must not inherit a pointer to the listener. */
	__rcu_assign_sk_user_data_with_flags(sk, l, SK_USER_DATA_NOCOPY);
	sk->sk_data_ready = kweb_listen_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);

	err = kernel_listen(sock, SOMAXCONN);
	if (err)
		goto out;
	return 0;
out:
	l->sock = NULL;
	sock_release(sock);
	return err;
}

/* Softirq no longer adopts for l once an RCU grace period has passed. */
static void kweb_listener_detach(struct kweb_listener *l)
{
	struct sock *sk = l->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	rcu_assign_sk_user_data(sk, NULL);
	sk->sk_data_ready = l->orig_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* Detached, and a grace period past: no accept work is queued again. */
static void kweb_listener_close(struct kweb_listener *l)
{
	cancel_work_sync(&l->accept_work);
	/* Closing the listener also closes children never popped. */
	sock_release(l->sock);
	l->sock = NULL;
}

int kweb_listeners_start(struct kweb_server *srv)
{
	static const int families[] = { AF_INET, AF_INET6 };
	int i, err;

	for (i = 0; i < ARRAY_SIZE(families); i++) {
		struct kweb_listener *l = &srv->listeners[srv->nr_listeners];

		if (!srv->any && !(families[i] == AF_INET ? srv->has_addr4 :
				   srv->has_addr6))
			continue;
		err = kweb_listener_start(srv, l, families[i]);
		/* Only a wildcard listener may go without IPv6. */
		if (err == -EAFNOSUPPORT && families[i] == AF_INET6 &&
		    srv->any) {
			pr_info("IPv6 unavailable, serving IPv4 only\n");
			continue;
		}
		if (err) {
			/* Any namespace's listener-add: not a dmesg flood. */
			pr_err_ratelimited("cannot listen on port %u (%s): error %d\n",
					   srv->port,
					   families[i] == AF_INET ? "IPv4" :
					   "IPv6", err);
			kweb_listeners_stop(srv);
			return err;
		}
		srv->nr_listeners++;
	}
	return 0;
}

/*
 * One grace period for all of srv's listeners: it is waited for under
 * kweb_ctl_mutex, and a namespace's exit, which holds pernet_ops_rwsem,
 * waits for that mutex.
 */
void kweb_listeners_stop(struct kweb_server *srv)
{
	int i;

	if (!srv->nr_listeners)
		return;
	for (i = 0; i < srv->nr_listeners; i++)
		kweb_listener_detach(&srv->listeners[i]);
	synchronize_rcu();
	while (srv->nr_listeners)
		kweb_listener_close(&srv->listeners[--srv->nr_listeners]);
}
