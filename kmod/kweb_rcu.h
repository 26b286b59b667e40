/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KWEB_RCU_H
#define KWEB_RCU_H

#include <linux/preempt.h>
#include <linux/rcupdate.h>

/*
 * The request path's RCU read sections: a few loads of settings or of the
 * cache's chains, a dozen times a request. Softirq, and any section with
 * BH off, is a reader of RCU already (one flavour since 4.20), so only
 * the worker takes rcu_read_lock(), a call each way on preemptible
 * kernels. Pointers are read with kweb_rcu_deref(), which any reader may.
 */
static __always_inline void kweb_rcu_lock(void)
	__acquires(RCU)
{
	if (!in_softirq())
		rcu_read_lock();
	else
		__acquire(RCU);	/* for sparse: a section either way */
}

static __always_inline void kweb_rcu_unlock(void)
	__releases(RCU)
{
	if (!in_softirq())
		rcu_read_unlock();
	else
		__release(RCU);
}

#define kweb_rcu_deref(p) rcu_dereference_check(p, rcu_read_lock_any_held())

#endif /* KWEB_RCU_H */
