// SPDX-License-Identifier: GPL-2.0
/*
 * kweb: an HTTP accelerator in the kHTTPd/TUX lineage. It owns a port's
 * listening sockets and serves static files from a docroot; see README.md.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/nsproxy.h>

#include "kweb.h"

static char *docroot;
module_param(docroot, charp, 0444);
MODULE_PARM_DESC(docroot, "absolute path of the directory to serve (required)");

static ushort port = 80;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "TCP port to listen on, IPv4 and IPv6 (default 80)");

static char *backend_ipv4 = "127.0.0.1";
module_param(backend_ipv4, charp, 0444);
MODULE_PARM_DESC(backend_ipv4,
		 "backend address for IPv4 clients (default 127.0.0.1)");

static char *backend_ipv6 = "::1";
module_param(backend_ipv6, charp, 0444);
MODULE_PARM_DESC(backend_ipv6, "backend address for IPv6 clients (default ::1)");

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

static int kweb_check_params(void)
{
	if (!docroot || !*docroot) {
		pr_err("docroot= is required, e.g. insmod kweb.ko docroot=/srv/www\n");
		return -EINVAL;
	}
	if (docroot[0] != '/') {
		pr_err("docroot=%s must be an absolute path\n", docroot);
		return -EINVAL;
	}
	if (!port) {
		pr_err("port=0 is not a port\n");
		return -EINVAL;
	}
	if (kweb_backend_port() == port) {
		pr_err("backend_port=%u is kweb's own port\n", port);
		return -EINVAL;
	}
	return 0;
}

void kweb_backend_defaults(struct kweb_backend *b)
{
	/* Checked when the module was loaded. */
	WARN_ON(kweb_backend_parse(b, backend_ipv4, backend_ipv6));
	b->port = 0;
}

/* The listener the parameters make, in the namespace of insmod. */
static int kweb_default_server(void)
{
	struct kweb_server_args args = {
		.docroot = docroot, .port = port, .any = true,
	};
	struct kweb_server *srv;
	int err;

	err = kweb_backend_parse(&args.backend, backend_ipv4, backend_ipv6);
	if (err)
		return err;
	mutex_lock(&kweb_ctl_mutex);
	srv = kweb_server_create(current->nsproxy->net_ns, &args, NULL);
	mutex_unlock(&kweb_ctl_mutex);
	return PTR_ERR_OR_ZERO(srv);
}

static int __init kweb_init(void)
{
	int err;

	err = kweb_check_params();
	if (err)
		return err;
	err = kweb_config_init();
	if (err)
		return err;
	err = kweb_conn_init();
	if (err)
		goto out_config;
	err = kweb_request_init();
	if (err)
		goto out_conn;
	err = kweb_send_init();
	if (err)
		goto out_request;
	err = kweb_servers_init();
	if (err)
		goto out_send;
	err = kweb_default_server();
	if (err)
		goto out_servers;
	err = kweb_netlink_init();
	if (err)
		goto out_servers;
	pr_info("serving %s on port %u, backend port %u\n", docroot, port,
		kweb_backend_port());
	return 0;

out_servers:
	kweb_servers_exit();
out_send:
	kweb_send_exit();
out_request:
	kweb_request_exit();
out_conn:
	kweb_conn_exit();
out_config:
	kweb_config_exit();
	return err;
}

static void __exit kweb_exit(void)
{
	/* No netlink call runs once this returns; then the servers go. */
	kweb_netlink_exit();
	kweb_servers_exit();
	kweb_send_exit();
	kweb_request_exit();
	/* Flushes the cache entries' last puts. */
	kweb_conn_exit();
	kweb_config_exit();
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
