// SPDX-License-Identifier: GPL-2.0
/*
 * A network namespace's life as kweb sees it: /proc/net/kweb when it is
 * made; when it goes, its servers, then its settings and MIME types.
 *
 * Kernel sockets hold no reference on their network namespace, so a
 * namespace with servers can die: its exit destroys them first.
 */
#include <linux/slab.h>

#include "kweb.h"
#include "mimemap.h"
#include "netns.h"
#include "tls.h"

unsigned int kweb_net_id __read_mostly;

static int __net_init kweb_net_init(struct net *net)
{
	return kweb_proc_init(net);
}

static void __net_exit kweb_net_exit(struct net *net)
{
	struct kweb_net *kn = kweb_net(net);

	kweb_servers_net_exit(net);
	/* Outside kweb_ctl_mutex: see there. */
	kweb_tls_dying_flush();
	kweb_proc_exit(net);
	kweb_config_net_exit(net);
	/* Last: its servers' cache entries and maps pointed into it. */
	kweb_mime_pool_free(kn->mime_pool);
	kn->mime_pool = NULL;
}

static struct pernet_operations kweb_net_ops = {
	.init = kweb_net_init,
	.exit = kweb_net_exit,
	.id = &kweb_net_id,
	.size = sizeof(struct kweb_net),
};

int kweb_netns_init(void)
{
	return register_pernet_subsys(&kweb_net_ops);
}

void kweb_netns_exit(void)
{
	unregister_pernet_subsys(&kweb_net_ops);
	WARN_ON(!list_empty(&kweb_servers));
}
