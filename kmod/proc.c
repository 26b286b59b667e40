// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/kweb: the counters, one "name value" per line, so scripts and
 * tests read them without a netlink client.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>

#include "kweb.h"

static int kweb_proc_show(struct seq_file *m, void *v)
{
	struct kweb_server *srv = m->private;
	int i;

	seq_printf(m, "port %u\n", srv->port);
	seq_printf(m, "connections_open %u\n", READ_ONCE(srv->nr_conns));
	for (i = 0; i < KWEB_STAT_NR; i++)
		seq_printf(m, "%s %llu\n", kweb_stat_names[i],
			   kweb_stat_read(i));
	seq_printf(m, "cache_bytes %zu\n", READ_ONCE(srv->cache.bytes));
	seq_printf(m, "cache_limit %zu\n", srv->cache.limit);
	seq_printf(m, "pinned_bytes %ld\n",
		   atomic_long_read(&kweb_cache_pinned));
	return 0;
}

int kweb_proc_init(struct kweb_server *srv)
{
	srv->net = current->nsproxy->net_ns;
	if (!proc_create_single_data(KWEB_NAME, 0444, srv->net->proc_net,
				     kweb_proc_show, srv))
		return -ENOMEM;
	return 0;
}

void kweb_proc_exit(struct kweb_server *srv)
{
	remove_proc_entry(KWEB_NAME, srv->net->proc_net);
}
