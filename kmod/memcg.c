// SPDX-License-Identifier: GPL-2.0
/*
 * The memory cgroup a socket kweb serves is charged to. accept()
 * associates a user-space server's sockets with its own cgroup and
 * charges that for what each holds (inet_csk_accept()); kweb takes its
 * children from the queue itself, in softirq, where the kernel's helper
 * does nothing. kweb associates them with the cgroup its listener's
 * creator was in (srv->memcg), which pays for its connections and page
 * cache already, so that a tenant's clients are bounded by the tenant's
 * memory.max as they are with nginx in its place. Both directions work
 * under the socket's lock, so that TCP never raises a charge in one
 * cgroup and lowers it in another.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/page_counter.h>
#include <linux/sched/mm.h>
#include <net/sock.h>

#include "memcg.h"

#ifdef CONFIG_MEMCG
/* Whether memcg, or a cgroup above it, is past its memory.max. */
static bool kweb_memcg_over(struct mem_cgroup *memcg)
{
	struct page_counter *c;

	for (c = &memcg->memory; c; c = c->parent)
		if (page_counter_read(c) > READ_ONCE(c->max))
			return true;
	return false;
}

/*
 * TCP charges a socket's cgroup with GFP_NOWAIT in softirq, and with
 * GFP_KERNEL in a task, which at the cgroup's limit ends in its OOM
 * killer. What the socket holds already is forced over the limit
 * instead, as accept() forces it (__GFP_NOFAIL): PF_MEMALLOC makes the
 * charge go through without reclaim. But not once forced charges have
 * taken the cgroup past its limit: each connection whose first run
 * waited for the worker would push it further, by what it holds.
 */
static bool kweb_sk_mem_raise(struct sock *sk, int size)
{
	unsigned int flags;
	bool raised;

	if (!in_task())
		return __sk_mem_schedule(sk, size, SK_MEM_RECV);
	if (kweb_memcg_over(sk->sk_memcg))
		return false;
	flags = memalloc_noreclaim_save();
	raised = __sk_mem_schedule(sk, size, SK_MEM_RECV);
	memalloc_noreclaim_restore(flags);
	return raised;
}
#endif

/*
 * Associate sk with memcg and charge memcg for all sk holds, which TCP
 * charged to the protocol alone until now; the protocol's count does not
 * change. Under the socket's lock: owned, or its spinlock in softirq.
 * None for the root cgroup (nothing to bound there), nor on cgroup v1,
 * whose socket accounting is off unless a cgroup turned it on, and a
 * socket that has one (kTLS's, from kwebtlsd's accept()) keeps it. False
 * if memcg (or the protocol) is at its limit: nothing changed then, and
 * the caller may try again in a task, where it is forced unless the
 * cgroup is over its limit already.
 */
bool kweb_sk_memcg_join(struct sock *sk, struct mem_cgroup *memcg)
{
#ifdef CONFIG_MEMCG
	int size;

	if (!mem_cgroup_sockets_enabled || sk->sk_memcg || !memcg ||
	    !memcg->css.parent || !cgroup_subsys_on_dfl(memory_cgrp_subsys))
		return true;
	/* Offline: accept() leaves such a socket in no cgroup too. */
	if (!css_tryget(&memcg->css))
		return true;
	size = sk_mem_pages(sk->sk_forward_alloc +
			    atomic_read(&sk->sk_rmem_alloc) +
			    sk->sk_wmem_queued) << PAGE_SHIFT;
	sk->sk_memcg = memcg;
	if (!size)
		return true;
	/* Raised in memcg's name, then lowered in no cgroup's. */
	if (!kweb_sk_mem_raise(sk, size)) {
		sk->sk_memcg = NULL;
		css_put(&memcg->css);
		return false;
	}
	sk->sk_memcg = NULL;
	__sk_mem_reclaim(sk, size);
	sk->sk_memcg = memcg;
#endif
	return true;
}

/*
 * The socket leaves for the backend, whose accept() associates it with
 * the backend's memory cgroup and charges that for what the socket holds,
 * without looking for a cgroup it has: kweb's (above), or for kTLS's
 * kwebtlsd's, from its own accept(). That one is uncharged first, for
 * all the socket holds, as if it never had one. The protocol's count
 * does not change: raised in no cgroup's name, then lowered in the
 * socket's. Under the socket lock, with nothing of ours left to send
 * (the caller waited for the ACKs): the receive side is all it holds.
 * False if the protocol is over its hard limit; nothing changed then.
 */
bool kweb_sk_memcg_leave(struct sock *sk)
{
#ifdef CONFIG_MEMCG
	struct mem_cgroup *memcg = sk->sk_memcg;
	int size;

	if (!memcg)
		return true;
	size = sk_mem_pages(sk->sk_forward_alloc +
			    atomic_read(&sk->sk_rmem_alloc)) << PAGE_SHIFT;
	sk->sk_memcg = NULL;
	if (size && !__sk_mem_schedule(sk, size, SK_MEM_RECV)) {
		sk->sk_memcg = memcg;
		return false;
	}
	sk->sk_memcg = memcg;
	if (size)
		__sk_mem_reclaim(sk, size);
	sk->sk_memcg = NULL;
	css_put(&memcg->css);
#endif
	return true;
}
