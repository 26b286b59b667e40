// SPDX-License-Identifier: GPL-2.0
/*
 * Receive-queue access for a locked TCP socket: look at the bytes a
 * client sent without consuming them (what MSG_PEEK gives user space,
 * without the socket-lock round trip of recvmsg()), and consume them once
 * a request has been taken on. Either works in softirq or process context.
 */
#include <net/tcp.h>

#include "recv.h"

size_t kweb_recv_peek(struct sock *sk, size_t skip, char *buf, size_t len)
{
	u32 seq = READ_ONCE(tcp_sk(sk)->copied_seq) + skip;
	struct sk_buff *skb;
	size_t copied = 0;

	skb_queue_walk(&sk->sk_receive_queue, skb) {
		u32 offset = seq - TCP_SKB_CB(skb)->seq;

		/* Data on a SYN (Fast Open) starts one sequence number in. */
		if (TCP_SKB_CB(skb)->tcp_flags & TCPHDR_SYN)
			offset--;
		if (offset < skb->len && copied < len) {
			size_t n = min_t(size_t, skb->len - offset,
					 len - copied);

			if (skb_copy_bits(skb, offset, buf + copied, n))
				break;
			copied += n;
			seq += n;
		}
		if (copied == len ||
		    (TCP_SKB_CB(skb)->tcp_flags & TCPHDR_FIN))
			break;
	}
	return copied;
}

static int kweb_recv_drop(read_descriptor_t *desc, struct sk_buff *skb,
			  unsigned int offset, size_t len)
{
	size_t n = min_t(size_t, len, desc->count);

	desc->count -= n;
	return n;
}

size_t kweb_recv_consume(struct sock *sk, size_t len)
{
	read_descriptor_t desc = { .count = len };
	int n;

	if (!len)
		return 0;
	/* tcp_read_sock() also updates the window and sends the ACK. */
	n = tcp_read_sock(sk, &desc, kweb_recv_drop);
	return n > 0 ? n : 0;
}

size_t kweb_recv_unread(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	/* A FIN counts one: a byte too many at most. */
	return READ_ONCE(tp->rcv_nxt) - READ_ONCE(tp->copied_seq);
}

bool kweb_recv_eof(const struct sock *sk)
{
	return READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN;
}
