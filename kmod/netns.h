/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kweb keeps per network namespace, as net/handshake keeps its own
 * (net_generic()): a namespace is a tenant, and nothing of one is another's.
 */
#ifndef KWEB_NETNS_H
#define KWEB_NETNS_H

#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "kweb.h"

struct kweb_mime_pool;

struct kweb_net {
	struct kweb_config __rcu *config;	/* NULL: kweb's defaults */
	struct kweb_mime_pool *mime_pool;	/* its Content-Types, interned */
	u64 retired[KWEB_STAT_NR];		/* counted by listeners gone */
	u32 last_id;				/* of its listeners, under the mutex */
	unsigned int nr_dying;			/* stopped listeners not yet freed */
};

extern unsigned int kweb_net_id;

static inline struct kweb_net *kweb_net(const struct net *net)
{
	return net_generic(net, kweb_net_id);
}

/* Under kweb_ctl_mutex: where net's MIME maps intern their types. */
static inline struct kweb_mime_pool **kweb_mime_pool(const struct net *net)
{
	return &kweb_net(net)->mime_pool;
}

/* Module load and unload; the exit destroys every server left. */
int kweb_netns_init(void);
void kweb_netns_exit(void);

#endif /* KWEB_NETNS_H */
