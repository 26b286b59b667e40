/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything that differs between the kernels kweb supports (Debian's 6.1
 * and 6.12) lives here, so the rest of the code has no version checks.
 * Differences are detected by the feature, not by version number.
 */
#ifndef KWEB_COMPAT_H
#define KWEB_COMPAT_H

#include <linux/bvec.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/pagemap.h>
#include <linux/uio.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp.h>

/*
 * Zero-copy send of a run of pages (nr bio_vecs, len bytes in all) on a
 * locked TCP socket: the bytes taken, maybe fewer, or an error if none.
 * Kernels with sendpage (and so MSG_SENDPAGE_NOTLAST) have
 * do_tcp_sendpages(), a call per page; 6.5 replaced both with
 * MSG_SPLICE_PAGES, one call for the run. Debian's 6.1 defines
 * MSG_SPLICE_PAGES too (a stable backport) but its TCP ignores the flag
 * and would silently copy, so the test is for sendpage.
 */
#ifdef MSG_SENDPAGE_NOTLAST
/* A page a call: on the locked sk, or through sock (which locks it). */
static inline int kweb_sendpage_each(struct sock *sk, struct socket *sock,
				     struct bio_vec *bv, unsigned int nr,
				     int flags)
{
	unsigned int i;
	int sent = 0;

	for (i = 0; i < nr; i++) {
		int f = i + 1 < nr ? flags | MSG_MORE : flags;
		int n;

		if (f & MSG_MORE)
			f |= MSG_SENDPAGE_NOTLAST;
		n = sock ? kernel_sendpage(sock, bv[i].bv_page,
					   bv[i].bv_offset, bv[i].bv_len, f) :
			do_tcp_sendpages(sk, bv[i].bv_page, bv[i].bv_offset,
					 bv[i].bv_len, f);
		if (n <= 0)
			return sent ? sent : n;
		sent += n;
		if (n < bv[i].bv_len)
			break;
	}
	return sent;
}

static inline int kweb_tcp_send_pages(struct sock *sk, struct bio_vec *bv,
				      unsigned int nr, size_t len, int flags)
{
	return kweb_sendpage_each(sk, NULL, bv, nr, flags);
}
#else
static inline int kweb_tcp_send_pages(struct sock *sk, struct bio_vec *bv,
				      unsigned int nr, size_t len, int flags)
{
	struct msghdr msg = { .msg_flags = flags | MSG_SPLICE_PAGES };

	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, nr, len);
	return tcp_sendmsg_locked(sk, &msg, len);
}
#endif

/*
 * Pages by reference on a socket of its own, the socket unlocked (a
 * kTLS socket: tls_sw_sendpage() a page at a time on 6.1, one
 * tls_sw_sendmsg() with MSG_SPLICE_PAGES for them all on 6.12; either
 * encrypts into records of its own).
 */
#ifdef MSG_SENDPAGE_NOTLAST
static inline int kweb_sock_send_pages(struct socket *sock, struct bio_vec *bv,
				       unsigned int nr, size_t len, int flags)
{
	return kweb_sendpage_each(sock->sk, sock, bv, nr, flags);
}
#else
static inline int kweb_sock_send_pages(struct socket *sock, struct bio_vec *bv,
				       unsigned int nr, size_t len, int flags)
{
	struct msghdr msg = { .msg_flags = flags | MSG_SPLICE_PAGES };

	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, nr, len);
	return sock_sendmsg(sock, &msg);
}
#endif

/*
 * Reading a file's pages needs nothing here: both kernels have the
 * exported splice_direct_to_actor() and __splice_from_pipe() that
 * file.c uses. On 6.1 most filesystems splice through
 * generic_file_splice_read() (a read_iter into an ITER_PIPE), which hands
 * out page-cache page references as 6.12's filemap_splice_read() does.
 */

/*
 * open(2)'s permission check for reading, with the mount's idmapping:
 * inode_permission() takes a struct mnt_idmap since 6.3, a struct
 * user_namespace before (Kbuild looks in <linux/mount.h>).
 */
static inline int kweb_may_open_read(const struct path *p)
{
#ifdef KWEB_HAVE_MNT_IDMAP
	return inode_permission(mnt_idmap(p->mnt), d_inode(p->dentry),
				MAY_OPEN | MAY_READ);
#else
	return inode_permission(mnt_user_ns(p->mnt), d_inode(p->dentry),
				MAY_OPEN | MAY_READ);
#endif
}

/* May the current identity search dir, a directory on mnt? */
static inline int kweb_may_search(struct vfsmount *mnt, struct inode *dir)
{
#ifdef KWEB_HAVE_MNT_IDMAP
	return inode_permission(mnt_idmap(mnt), dir, MAY_EXEC);
#else
	return inode_permission(mnt_user_ns(mnt), dir, MAY_EXEC);
#endif
}

/*
 * Exported all along, but declared in a public header only since 6.2; the
 * declaration is identical, so repeating it is harmless on 6.12.
 */
int vfs_path_lookup(struct dentry *dentry, struct vfsmount *mnt,
		    const char *name, unsigned int flags, struct path *path);

/*
 * A child of a kernel listener holds no reference on its netns; one handed
 * to user space must, like any socket there. Kernels that have
 * sk_net_refcnt_upgrade() (6.12.y; Kbuild looks for it in <net/sock.h>)
 * also drop the passive reference kernel sockets hold on them; older ones
 * just take the reference a user socket would have.
 */
static inline void kweb_sk_net_refcnt_upgrade(struct sock *sk)
{
#ifdef KWEB_HAVE_SK_NET_REFCNT_UPGRADE
	sk_net_refcnt_upgrade(sk);
#else
	struct net *net = sock_net(sk);

	sk->sk_net_refcnt = 1;
	get_net_track(net, &sk->ns_tracker, GFP_KERNEL);
	sock_inuse_add(net, 1);
#endif
}

/*
 * The reverse, for a user socket kweb alone holds (an adopted TLS
 * connection): it becomes a kernel socket as to its netns, which it no
 * longer keeps alive. 6.12.y's kernel sockets hold a passive reference
 * and an untracked tracker instead (sk_alloc()); older ones nothing. The
 * caller holds the netns otherwise: put_net() does not free it here.
 */
static inline void kweb_sk_net_refcnt_downgrade(struct sock *sk)
{
	struct net *net = sock_net(sk);

#ifdef KWEB_HAVE_SK_NET_REFCNT_UPGRADE
	net_passive_inc(net);
	__netns_tracker_free(net, &sk->ns_tracker, true);
	__netns_tracker_alloc(net, &sk->ns_tracker, false, GFP_KERNEL);
#else
	netns_tracker_free(net, &sk->ns_tracker);
#endif
	sk->sk_net_refcnt = 0;
	sock_inuse_add(net, -1);
	put_net(net);
}

/*
 * Trace events (trace.h): a string field of a given length, declared with
 * __string_len(dst, src, len), is filled by __assign_str(dst) since 6.10,
 * which remembers src and len (sizeof() names them unevaluated); before,
 * by __assign_str_len(dst, src, len). Kbuild looks in
 * <trace/stages/stage6_event_callback.h>. Only ever expanded inside
 * TP_fast_assign(), where those macros are defined.
 */
#ifdef KWEB_HAVE_ASSIGN_STR_SAVED
#define kweb_assign_str_len(dst, src, len)				\
	do {								\
		__assign_str(dst);					\
		(void)sizeof(*(src));				\
		(void)sizeof(len);					\
	} while (0)
#else
#define kweb_assign_str_len(dst, src, len) __assign_str_len(dst, src, len)
#endif

/*
 * The upgrade above takes a netns reference with GFP_KERNEL: where that
 * allocates (a tracker per reference), a handoff must wait for the
 * worker instead of moving the socket in softirq.
 */
#define KWEB_HANDOFF_ATOMIC (!IS_ENABLED(CONFIG_NET_NS_REFCNT_TRACKER))

#endif /* KWEB_COMPAT_H */
