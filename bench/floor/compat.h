/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one difference kwebfloor meets between Debian's 6.1 and 6.12: how
 * pages are sent by reference on a locked TCP socket. Kernels with
 * sendpage (and so MSG_SENDPAGE_NOTLAST) have do_tcp_sendpages(), a call
 * per page; 6.5 replaced it with MSG_SPLICE_PAGES. Debian's 6.1 defines
 * MSG_SPLICE_PAGES too (a backport) but its TCP would copy, hence the
 * test on MSG_SENDPAGE_NOTLAST.
 */
#ifndef KWEBFLOOR_COMPAT_H
#define KWEBFLOOR_COMPAT_H

#include <linux/bvec.h>
#include <linux/uio.h>
#include <net/tcp.h>

/* Send nr bio_vecs, len bytes in all: the bytes taken, or an error. */
#ifdef MSG_SENDPAGE_NOTLAST
static inline int floor_send_pages(struct sock *sk, const struct bio_vec *bv,
				   unsigned int nr, size_t len, int flags)
{
	unsigned int i;
	int sent = 0;

	for (i = 0; i < nr; i++) {
		int f = i + 1 < nr ? flags | MSG_MORE : flags;
		int n;

		if (f & MSG_MORE)
			f |= MSG_SENDPAGE_NOTLAST;
		n = do_tcp_sendpages(sk, bv[i].bv_page, bv[i].bv_offset,
				     bv[i].bv_len, f);
		if (n <= 0)
			return sent ? sent : n;
		sent += n;
		if (n < bv[i].bv_len)
			break;
	}
	return sent;
}
#else
static inline int floor_send_pages(struct sock *sk, const struct bio_vec *bv,
				   unsigned int nr, size_t len, int flags)
{
	struct msghdr msg = { .msg_flags = flags | MSG_SPLICE_PAGES };

	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, nr, len);
	return tcp_sendmsg_locked(sk, &msg, len);
}
#endif

#endif /* KWEBFLOOR_COMPAT_H */
