// SPDX-License-Identifier: GPL-2.0
/*
 * The worker's per-request buffers (the request's scratch and a response
 * header), kept one of each per CPU between requests. Softirq uses this
 * CPU's static scratch instead, but the worker may sleep while it holds
 * them, and every request kTLS delivers is served by the worker. Freeing
 * and allocating them per request cost more than the request's own
 * parsing: with init_on_alloc (on in Debian's kernels) every kmalloc() is
 * zeroed, about 10 KB per request here.
 *
 * The slots hold what the last request on this CPU gave back, so at most
 * one buffer of each kind per CPU stays allocated while idle. Any context
 * may give one back (a response header is let go from softirq too).
 */
#include <linux/percpu.h>
#include <linux/slab.h>

#include "spare.h"

struct kweb_spare_slots {
	void *p[KWEB_SPARE_NR];
};

static DEFINE_PER_CPU(struct kweb_spare_slots, kweb_spares);

void *kweb_spare_get(enum kweb_spare which, size_t size)
{
	void *p = this_cpu_xchg(kweb_spares.p[which], NULL);

	return p ?: kmalloc(size, GFP_KERNEL);
}

void kweb_spare_put(enum kweb_spare which, void *p)
{
	if (p && this_cpu_cmpxchg(kweb_spares.p[which], NULL, p))
		kfree(p);
}

/* After the last request: nothing gives a buffer back any more. */
void kweb_spare_exit(void)
{
	int cpu, i;

	for_each_possible_cpu(cpu)
		for (i = 0; i < KWEB_SPARE_NR; i++)
			kfree(per_cpu(kweb_spares.p[i], cpu));
}
