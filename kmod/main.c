// SPDX-License-Identifier: GPL-2.0
/*
 * kweb: an HTTP accelerator in the kHTTPd/TUX lineage. It owns a port's
 * listening sockets and serves static files from a docroot; see README.md
 * and docs/design.md.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/nsproxy.h>

#include "kweb.h"
#include "netns.h"
#include "spare.h"

const char *const kweb_stat_names[KWEB_STAT_NR] = {
	[KWEB_STAT_CONN_ACCEPTED] = "connections_accepted",
	[KWEB_STAT_CONN_CLOSED] = "connections_closed",
	[KWEB_STAT_REQ_SOFTIRQ] = "requests_softirq",
	[KWEB_STAT_REQ_WORKER] = "requests_worker",
	[KWEB_STAT_REQ_ERROR] = "responses_error",
	[KWEB_STAT_BODY_SPLICED] = "body_bytes_spliced",
	[KWEB_STAT_BODY_COPIED] = "body_bytes_copied",
	[KWEB_STAT_CACHE_HITS] = "cache_hits",
	[KWEB_STAT_CACHE_MISSES] = "cache_misses",
	[KWEB_STAT_CACHE_EVICTIONS] = "cache_evictions",
	[KWEB_STAT_CACHE_INVALIDATIONS] = "cache_invalidations",
	[KWEB_STAT_HANDOFF_METHOD] = "handoff_method",
	[KWEB_STAT_HANDOFF_QUERY] = "handoff_query",
	[KWEB_STAT_HANDOFF_PREFIX] = "handoff_prefix",
	[KWEB_STAT_HANDOFF_EXTENSION] = "handoff_extension",
	[KWEB_STAT_HANDOFF_UPGRADE] = "handoff_upgrade",
	[KWEB_STAT_HANDOFF_H2] = "handoff_h2",
	[KWEB_STAT_HANDOFF_UNPARSED] = "handoff_unparsed",
	[KWEB_STAT_HANDOFF_MISSING] = "handoff_missing",
	[KWEB_STAT_HANDOFF_CONN_LIMIT] = "handoff_connection_limit",
	[KWEB_STAT_HANDOFF_NO_BACKEND] = "handoff_failed_no_backend",
	[KWEB_STAT_HANDOFF_QUEUE_FULL] = "handoff_failed_queue_full",
	[KWEB_STAT_HANDOFF_FAILED] = "handoff_failed",
	[KWEB_STAT_LOG_RECORDS] = "log_records",
	[KWEB_STAT_LOG_DROPPED] = "log_dropped",
	[KWEB_STAT_CONN_SOFTIRQ] = "connections_softirq",
	[KWEB_STAT_HANDOFF_SOFTIRQ] = "handoffs_softirq",
	[KWEB_STAT_TLS_CONNS] = "tls_connections",
	[KWEB_STAT_TLS_BYTES] = "tls_bytes",
};

/* kweb_handoff() counts by reason as an offset from the first. */
static_assert(KWEB_STAT_HANDOFF_MISSING - KWEB_STAT_HANDOFF_METHOD ==
	      KWEB_ROUTE_MISSING - KWEB_ROUTE_METHOD);

u64 kweb_stat_read_own(struct kweb_stats __percpu *own, enum kweb_stat s)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(own, cpu)->v[s];
	return sum;
}

/* The listener the parameters make, in the namespace of insmod. */
static int kweb_default_server(void)
{
	struct kweb_server_args args;
	struct kweb_site_args site;
	struct kweb_server *srv;

	int err;

	kweb_config_server_args(&args, &site);
	err = kweb_server_resolve(&args, NULL);
	if (err)
		return err;
	mutex_lock(&kweb_ctl_mutex);
	srv = kweb_server_create(current->nsproxy->net_ns, &args, NULL);
	mutex_unlock(&kweb_ctl_mutex);
	path_put(&args.root);
	if (IS_ERR(srv))
		return PTR_ERR(srv);
	pr_info("serving %s on port %u, backend port %u\n", args.docroot,
		args.port, kweb_server_backend_port(srv));
	return 0;
}

static int __init kweb_init(void)
{
	int err;

	err = kweb_netns_init();
	if (err)
		return err;
	err = kweb_config_init();
	if (err)
		goto out_netns;
	err = kweb_conn_init();
	if (err)
		goto out_config;
	err = kweb_request_init();
	if (err)
		goto out_conn;
	err = kweb_send_init();
	if (err)
		goto out_request;
	err = kweb_default_server();
	/* A failed one is freed once any connection it took is gone. */
	if (err)
		goto out_servers;
	err = kweb_netlink_init();
	if (err)
		goto out_servers;
	return 0;

out_servers:
	/* Only the initial namespace can have a server yet. */
	kweb_servers_net_exit(&init_net);
	kweb_send_exit();
out_request:
	kweb_request_exit();
out_conn:
	kweb_conn_exit();
	kweb_spare_exit();
out_config:
	kweb_config_exit();
out_netns:
	kweb_netns_exit();
	return err;
}

static void __exit kweb_exit(void)
{
	/* No netlink call runs once this returns; then the servers go. */
	kweb_netlink_exit();
	kweb_servers_exit();
	kweb_config_exit();
	kweb_netns_exit();
	kweb_send_exit();
	kweb_request_exit();
	/* Flushes the cache entries' last puts. */
	kweb_conn_exit();
	kweb_spare_exit();
	pr_info("stopped: %llu connections, %llu requests in softirq, %llu in the worker, %llu body bytes spliced, %llu copied, %ld bytes still pinned\n",
		kweb_stat_read_all(KWEB_STAT_CONN_ACCEPTED),
		kweb_stat_read_all(KWEB_STAT_REQ_SOFTIRQ),
		kweb_stat_read_all(KWEB_STAT_REQ_WORKER),
		kweb_stat_read_all(KWEB_STAT_BODY_SPLICED),
		kweb_stat_read_all(KWEB_STAT_BODY_COPIED),
		atomic_long_read(&kweb_cache_pinned));
}

module_init(kweb_init);
module_exit(kweb_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kweb: in-kernel HTTP accelerator for static files");
