// SPDX-License-Identifier: GPL-2.0
/*
 * kwebfloor: the benchmark's floor, not part of kweb. The same packet
 * exchange as kweb's answer to a GET, by the least code that can do it in
 * kweb's design: children popped from the accept queue in the listener's
 * sk_data_ready, every complete request head answered in the child's
 * sk_data_ready (softirq, under the socket lock it already holds) with a
 * fixed header and body, both sent by reference from pages made at load,
 * and sockets closed by a work run once the peer has closed. It parses
 * nothing but the end of a head, its version and its Connection field.
 *
 *	insmod kwebfloor.ko [port=80] [size=1024]
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <net/inet_connection_sock.h>
#include <net/ipv6.h>
#include <net/request_sock.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "compat.h"

#define FLOOR_MAX_PAGES	4
/* A longer head is not answered: the connection is shut. */
#define FLOOR_HEAD_MAX	512

static ushort port = 80;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "TCP port, IPv4 and IPv6 any-address (default 80)");

static uint size = 1024;
module_param(size, uint, 0444);
MODULE_PARM_DESC(size, "body bytes, 1 to 4 pages (default 1024)");

static atomic_long_t floor_responses, floor_errors;

static int floor_counter_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(kp->arg));
}

static const struct kernel_param_ops floor_counter_ops = {
	.get = floor_counter_get,
};

module_param_cb(responses, &floor_counter_ops, &floor_responses, 0444);
MODULE_PARM_DESC(responses, "responses sent whole");
module_param_cb(errors, &floor_counter_ops, &floor_errors, 0444);
MODULE_PARM_DESC(errors, "heads too long, sends short or failed");

/* The two responses, keep-alive and close: a header, then the body. */
static struct page *floor_head_page, *floor_body[FLOOR_MAX_PAGES];
static struct bio_vec floor_bv[2][1 + FLOOR_MAX_PAGES];
static unsigned int floor_nr_bv;
static int floor_len[2];

struct floor_listener {
	struct socket *sock;
	struct work_struct accept_work;
};

struct floor_conn {
	struct sock *sk;
	struct list_head node;		/* floor_conns, under floor_lock */
	struct llist_node close_node;	/* floor_closing */
	atomic_t closing;
};

static struct floor_listener floor_listeners[2];
static void (*floor_orig_data_ready)(struct sock *sk);
static void (*floor_orig_state_change)(struct sock *sk);
static LIST_HEAD(floor_conns);
static DEFINE_SPINLOCK(floor_lock);
static LLIST_HEAD(floor_closing);
static struct workqueue_struct *floor_wq;
static void floor_close_work(struct work_struct *work);
static DECLARE_DELAYED_WORK(floor_closer, floor_close_work);

/* ---- answering: any context, the socket lock held */

/* Copy up to len unread bytes from the receive queue. */
static int floor_peek(struct sock *sk, char *buf, int len)
{
	u32 seq = tcp_sk(sk)->copied_seq;
	struct sk_buff *skb;
	int n = 0;

	skb_queue_walk(&sk->sk_receive_queue, skb) {
		u32 off = seq - TCP_SKB_CB(skb)->seq;
		int take;

		if (TCP_SKB_CB(skb)->tcp_flags & TCPHDR_SYN)
			off--;
		if (off >= skb->len)
			continue;
		take = min_t(int, skb->len - off, len - n);
		if (skb_copy_bits(skb, off, buf + n, take))
			break;
		n += take;
		seq += take;
		if (n == len)
			break;
	}
	return n;
}

static int floor_eat(read_descriptor_t *desc, struct sk_buff *skb,
		     unsigned int off, size_t len)
{
	size_t n = min(len, desc->count);

	desc->count -= n;
	return n;
}

static bool floor_has(const char *s, size_t len, const char *word)
{
	size_t w = strlen(word);

	for (; len >= w; s++, len--)
		if (!strncasecmp(s, word, w))
			return true;
	return false;
}

/*
 * The first LF of p's n bytes, or NULL: eight bytes tested at a time, so
 * that finding a head costs about what a server's parser would pay.
 */
static const char *floor_lf(const char *p, int n)
{
	const u64 ones = 0x0101010101010101ULL;
	u64 w;

	for (; n >= sizeof(w); p += sizeof(w), n -= sizeof(w)) {
		memcpy(&w, p, sizeof(w));
		w ^= ones * '\n';
		if ((w - ones) & ~w & (ones << 7))
			break;
	}
	for (; n > 0; p++, n--)
		if (*p == '\n')
			return p;
	return NULL;
}

/*
 * One pass over the n bytes peeked, a line at a time: the length of the
 * first complete head in them, 0 if there is none yet, and whether it
 * asks to close (HTTP/1.0, or a Connection field that says close).
 */
static int floor_head(const char *h, int n, bool *close)
{
	const char *line = h, *lf;
	int len;

	*close = false;
	while ((lf = floor_lf(line, h + n - line))) {
		len = lf - line;	/* with the line's CR */
		if (line == h)
			*close = len >= 9 && !memcmp(lf - 9, "HTTP/1.0\r", 9);
		else if (len <= 1)
			return lf + 1 - h;
		else if ((*line | 0x20) == 'c' && len > 11 &&
			 !strncasecmp(line, "connection:", 11)) {
			if (floor_has(line + 11, len - 11, "close"))
				*close = true;
			else if (floor_has(line + 11, len - 11, "keep-alive"))
				*close = false;
		}
		line = lf + 1;
	}
	return 0;
}

/*
 * What shutdown(SHUT_WR) does, without the lock_sock() of inet_shutdown()
 * that softirq cannot take (and tcp_shutdown() is not exported).
 */
static void floor_fin(struct sock *sk)
{
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | SEND_SHUTDOWN);
	sk->sk_prot->shutdown(sk, SEND_SHUTDOWN);
}

/*
 * Each complete head: its response, then the head consumed, so that the
 * response carries the ACK of the request. With close the response is
 * held back (MSG_MORE) for the FIN that floor_fin() adds to it.
 */
static void floor_answer(struct sock *sk)
{
	char head[FLOOR_HEAD_MAX];
	read_descriptor_t desc;
	int n, len, sent;
	bool close;

	while (!(sk->sk_shutdown & SEND_SHUTDOWN)) {
		len = floor_peek(sk, head, sizeof(head));
		n = floor_head(head, len, &close);
		if (!n) {
			if (len < sizeof(head))
				return;
			atomic_long_inc(&floor_errors);
			floor_fin(sk);
			return;
		}
		sent = floor_send_pages(sk, floor_bv[close], floor_nr_bv,
					floor_len[close], MSG_DONTWAIT |
					(close ? MSG_MORE : 0));
		if (sent == floor_len[close]) {
			atomic_long_inc(&floor_responses);
		} else {
			atomic_long_inc(&floor_errors);
			close = true;
		}
		if (close)
			floor_fin(sk);
		desc = (read_descriptor_t){ .count = n };
		tcp_read_sock(sk, &desc, floor_eat);
	}
}

/* ---- connections */

/* Softirq or not: close sk in the closer's next run, a jiffy later. */
static void floor_close_later(struct floor_conn *c)
{
	if (atomic_xchg(&c->closing, 1))
		return;
	if (llist_add(&c->close_node, &floor_closing))
		queue_delayed_work(floor_wq, &floor_closer, 1);
}

static bool floor_peer_closed(struct sock *sk)
{
	return (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) ||
	       inet_sk_state_load(sk) == TCP_CLOSE;
}

static void floor_state_change(struct sock *sk)
{
	struct floor_conn *c;

	read_lock_bh(&sk->sk_callback_lock);
	c = sk->sk_user_data;
	if (c && floor_peer_closed(sk))
		floor_close_later(c);
	read_unlock_bh(&sk->sk_callback_lock);
}

static void floor_unhook(struct sock *sk)
{
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = floor_orig_data_ready;
	sk->sk_state_change = floor_orig_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* Process context, c off floor_conns: close its socket, free it. */
static void floor_conn_close(struct floor_conn *c, bool reset)
{
	struct sock *sk = c->sk;

	floor_unhook(sk);
	if (reset)
		sock_no_linger(sk);
	/* What sock_release() does for a socket: a child has none. */
	sk->sk_prot->close(sk, 0);
	kfree(c);
}

static void floor_close_work(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&floor_closing);
	struct floor_conn *c, *tmp;

	llist_for_each_entry_safe(c, tmp, list, close_node) {
		spin_lock_bh(&floor_lock);
		list_del(&c->node);
		spin_unlock_bh(&floor_lock);
		floor_conn_close(c, false);
	}
}

/*
 * Pop a child (and drop its request, as inet_csk_accept() does) and make
 * it ours. The child already answers requests: it inherited the
 * listener's sk_data_ready. gfp: GFP_ATOMIC in the listener's callback,
 * which may run under the spinlock of the child it is called for.
 */
static int floor_accept_one(struct sock *lsk, gfp_t gfp)
{
	struct request_sock_queue *queue = &inet_csk(lsk)->icsk_accept_queue;
	struct floor_conn *c = kzalloc(sizeof(*c), gfp | __GFP_NOWARN);
	struct request_sock *req;
	struct sock *sk;

	if (!c)
		return -ENOMEM;
	req = reqsk_queue_remove(queue, lsk);
	if (!req) {
		kfree(c);
		return 0;
	}
	sk = req->sk;
	/* A Fast Open request stays the listener's, as in accept(). */
	if (tcp_rsk(req)->tfo_listener) {
		spin_lock_bh(&queue->fastopenq.lock);
		if (tcp_rsk(req)->tfo_listener) {
			req->sk = NULL;
			req = NULL;
		}
		spin_unlock_bh(&queue->fastopenq.lock);
	}
	if (req)
		reqsk_put(req);
	c->sk = sk;
	spin_lock_bh(&floor_lock);
	list_add(&c->node, &floor_conns);
	spin_unlock_bh(&floor_lock);
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = c;
	sk->sk_state_change = floor_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	/* A FIN or reset that came before the callback was ours. */
	if (floor_peer_closed(sk))
		floor_close_later(c);
	return 1;
}

static void floor_accept_work(struct work_struct *work)
{
	struct floor_listener *l = container_of(work, struct floor_listener,
						accept_work);

	while (floor_accept_one(l->sock->sk, GFP_KERNEL) > 0)
		;
}

/* The listener's callback, inherited by its children until closed. */
static void floor_data_ready(struct sock *sk)
{
	struct floor_listener *l;
	int err;

	if (sk->sk_state != TCP_LISTEN) {
		floor_answer(sk);
		return;
	}
	/* Closing a listener calls this under sk_callback_lock: RCU. */
	rcu_read_lock();
	l = rcu_dereference_sk_user_data(sk);
	if (l) {
		while ((err = floor_accept_one(sk, GFP_ATOMIC)) > 0)
			;
		/* Out of atomic memory: the work item takes the rest. */
		if (err)
			queue_work(floor_wq, &l->accept_work);
	}
	rcu_read_unlock();
}

/* ---- listeners and module */

static int floor_listen(struct floor_listener *l, int family)
{
	struct sockaddr_storage addr = {};
	struct socket *sock;
	struct sock *sk;
	int err;

	err = sock_create_kern(&init_net, family, SOCK_STREAM, IPPROTO_TCP,
			       &sock);
	if (err)
		return err;
	sk = sock->sk;
	sock_set_reuseaddr(sk);
	/* Children inherit these: they send from softirq. */
	sk->sk_allocation = GFP_ATOMIC;
	sk->sk_use_task_frag = false;
	tcp_sock_set_nodelay(sk);
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&addr;

		err = ip6_sock_set_v6only(sk);
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_any;
		sin6->sin6_port = htons(port);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&addr;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
		sin->sin_port = htons(port);
	}
	if (!err)
		err = kernel_bind(sock, (struct sockaddr *)&addr,
				  family == AF_INET6 ?
				  sizeof(struct sockaddr_in6) :
				  sizeof(struct sockaddr_in));
	if (err) {
		sock_release(sock);
		return err;
	}
	l->sock = sock;
	INIT_WORK(&l->accept_work, floor_accept_work);
	write_lock_bh(&sk->sk_callback_lock);
	floor_orig_data_ready = sk->sk_data_ready;
	floor_orig_state_change = sk->sk_state_change;
	/* NOCOPY: children must not inherit a pointer to the listener. */
	__rcu_assign_sk_user_data_with_flags(sk, l, SK_USER_DATA_NOCOPY);
	sk->sk_data_ready = floor_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	err = kernel_listen(sock, SOMAXCONN);
	if (err) {
		l->sock = NULL;
		sock_release(sock);
	}
	return err;
}

static void floor_unlisten(struct floor_listener *l)
{
	struct sock *sk = l->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	rcu_assign_sk_user_data(sk, NULL);
	sk->sk_data_ready = floor_orig_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	synchronize_rcu();
	cancel_work_sync(&l->accept_work);
	/* Children never popped are closed with it. */
	sock_release(l->sock);
	l->sock = NULL;
}

static void floor_stop(void)
{
	struct floor_conn *c;
	int i;

	for (i = 0; i < ARRAY_SIZE(floor_listeners); i++)
		if (floor_listeners[i].sock)
			floor_unlisten(&floor_listeners[i]);
	/*
	 * No more connections now. Unhooked, none queues a close any more:
	 * those queued are closed by the closer, those left are reset.
	 */
	spin_lock_bh(&floor_lock);
	list_for_each_entry(c, &floor_conns, node)
		floor_unhook(c->sk);
	spin_unlock_bh(&floor_lock);
	flush_delayed_work(&floor_closer);
	spin_lock_bh(&floor_lock);
	while ((c = list_first_entry_or_null(&floor_conns, struct floor_conn,
					     node))) {
		list_del(&c->node);
		spin_unlock_bh(&floor_lock);
		floor_conn_close(c, true);
		spin_lock_bh(&floor_lock);
	}
	spin_unlock_bh(&floor_lock);
	/* Until the last callback has returned. */
	synchronize_rcu();
}

static int floor_make_pages(void)
{
	static const char * const conn[2] = { "keep-alive", "close" };
	unsigned int i, off = 0, nr = DIV_ROUND_UP(size, PAGE_SIZE);
	char *p, tag[24];

	floor_head_page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!floor_head_page)
		return -ENOMEM;
	for (i = 0; i < 2; i++) {
		p = page_address(floor_head_page) + off;
		floor_len[i] = snprintf(p, PAGE_SIZE / 2,
					"HTTP/1.1 200 OK\r\nServer: kwebfloor\r\n"
					"Content-Length: %u\r\nConnection: %s\r\n\r\n",
					size, conn[i]);
		bvec_set_page(&floor_bv[i][0], floor_head_page, floor_len[i],
			      off);
		off += PAGE_SIZE / 2;
	}
	for (i = 0; i < nr; i++) {
		unsigned int len = min_t(unsigned int, size - i * PAGE_SIZE,
					 PAGE_SIZE);

		floor_body[i] = alloc_page(GFP_KERNEL);
		if (!floor_body[i])
			return -ENOMEM;
		p = page_address(floor_body[i]);
		memset(p, '.', PAGE_SIZE);
		bvec_set_page(&floor_bv[0][1 + i], floor_body[i], len, 0);
		floor_bv[1][1 + i] = floor_bv[0][1 + i];
	}
	/* As every bench file: its size in 8 digits first (bench.lua). */
	i = snprintf(tag, sizeof(tag), "%08u kwebfloor\n", size);
	memcpy(page_address(floor_body[0]), tag, min(size, i));
	floor_len[0] += size;
	floor_len[1] += size;
	floor_nr_bv = 1 + nr;
	return 0;
}

static void floor_free_pages(void)
{
	int i;

	for (i = 0; i < FLOOR_MAX_PAGES; i++)
		if (floor_body[i])
			__free_page(floor_body[i]);
	if (floor_head_page)
		__free_page(floor_head_page);
}

static int __init floor_init(void)
{
	int err;

	if (!size || size > FLOOR_MAX_PAGES * PAGE_SIZE) {
		pr_err("size must be 1 to %lu\n", FLOOR_MAX_PAGES * PAGE_SIZE);
		return -EINVAL;
	}
	err = floor_make_pages();
	if (err)
		goto out;
	floor_wq = alloc_workqueue(KBUILD_MODNAME, WQ_UNBOUND, 0);
	err = -ENOMEM;
	if (!floor_wq)
		goto out;
	err = floor_listen(&floor_listeners[0], AF_INET);
	if (!err)
		err = floor_listen(&floor_listeners[1], AF_INET6);
	if (!err) {
		pr_info("port %u, %u-byte body\n", port, size);
		return 0;
	}
	pr_err("cannot listen on port %u: error %d\n", port, err);
	floor_stop();
	destroy_workqueue(floor_wq);
out:
	floor_free_pages();
	return err;
}

static void __exit floor_exit(void)
{
	floor_stop();
	destroy_workqueue(floor_wq);
	floor_free_pages();
}

module_init(floor_init);
module_exit(floor_exit);
MODULE_DESCRIPTION("kweb benchmark floor: the least in-kernel HTTP responder");
MODULE_LICENSE("GPL");
