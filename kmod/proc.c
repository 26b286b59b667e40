// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/kweb: a summary for people and scripts, in every network
 * namespace. Every line is "name value" with an integer value, so scripts
 * and tests read the counters without a netlink client, then one line per
 * listener of the namespace ("listener ID key value ..."), which such
 * readers skip. Figures and counters are the namespace's (its listeners
 * gone, and those whose connections are still closing, included); pinned_bytes is module-wide in the initial namespace,
 * the host's, and the namespace's cache_bytes in any other: no namespace
 * sees another's traffic. "port" is the first listener's, 0 when there is
 * none.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>

#include "kweb.h"

static int kweb_proc_show(struct seq_file *m, void *v)
{
	struct net *net = seq_file_single_net(m);
	struct kweb_server *srv;
	struct kweb_totals t;
	unsigned int nr = 0;
	u16 port = 0;
	int i;

	mutex_lock(&kweb_ctl_mutex);
	list_for_each_entry(srv, &kweb_servers, node) {
		if (!net_eq(srv->net, net))
			continue;
		if (!nr++)
			port = srv->port;
	}
	kweb_servers_totals(net, &t);
	seq_printf(m, "port %u\n", port);
	seq_printf(m, "connections_open %u\n", t.conns);
	for (i = 0; i < KWEB_STAT_NR; i++)
		seq_printf(m, "%s %llu\n", kweb_stat_names[i],
			   kweb_stat_read(net, i));
	seq_printf(m, "cache_bytes %zu\n", t.cache_bytes);
	seq_printf(m, "cache_limit %zu\n", t.cache_limit);
	seq_printf(m, "pinned_bytes %zu\n",
		   kweb_pinned_bytes(net, t.cache_bytes));
	seq_printf(m, "listeners %u\n", nr);
	list_for_each_entry(srv, &kweb_servers, node) {
		if (!net_eq(srv->net, net))
			continue;
		seq_printf(m, "listener %u port %u connections_open %u requests %llu cache_bytes %zu cache_limit %zu backend_port %u docroot ",
			   srv->id, srv->port, READ_ONCE(srv->nr_conns),
			   kweb_stat_read_own(srv->stats, KWEB_STAT_REQ_SOFTIRQ) +
			   kweb_stat_read_own(srv->stats, KWEB_STAT_REQ_WORKER),
			   READ_ONCE(srv->cache.bytes),
			   READ_ONCE(srv->cache.limit),
			   kweb_server_backend_port(srv));
		/* Last: a path may hold spaces; escaped like /proc/mounts. */
		seq_path(m, &srv->docroot, " \t\n\\");
		seq_putc(m, '\n');
	}
	mutex_unlock(&kweb_ctl_mutex);
	return 0;
}

int kweb_proc_init(struct net *net)
{
	if (!proc_create_net_single(KWEB_NAME, 0444, net->proc_net,
				    kweb_proc_show, NULL))
		return -ENOMEM;
	return 0;
}

void kweb_proc_exit(struct net *net)
{
	remove_proc_entry(KWEB_NAME, net->proc_net);
}
