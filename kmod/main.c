// SPDX-License-Identifier: GPL-2.0
/*
 * kweb: an HTTP accelerator in the kHTTPd/TUX lineage. It owns a port's
 * listening sockets and serves static files from a docroot; see README.md.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/namei.h>
#include <linux/slab.h>

#include "kweb.h"

static char *docroot;
module_param(docroot, charp, 0444);
MODULE_PARM_DESC(docroot, "absolute path of the directory to serve (required)");

static ushort port = 80;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "TCP port to listen on, IPv4 and IPv6 (default 80)");

static ushort backend_port = 8080;

/* Runtime-writable: never 0, never kweb's own port. */
static int kweb_backend_port_set(const char *val, const struct kernel_param *kp)
{
	u16 v;
	int err = kstrtou16(val, 0, &v);

	if (err)
		return err;
	if (!v || v == port)
		return -EINVAL;
	WRITE_ONCE(backend_port, v);
	return 0;
}

static const struct kernel_param_ops kweb_backend_port_ops = {
	.set = kweb_backend_port_set,
	.get = param_get_ushort,
};

module_param_cb(backend_port, &kweb_backend_port_ops, &backend_port, 0644);
MODULE_PARM_DESC(backend_port,
		 "port of the server requests kweb does not serve go to (default 8080; writable)");

static char *backend_ipv4 = "127.0.0.1";
module_param(backend_ipv4, charp, 0444);
MODULE_PARM_DESC(backend_ipv4,
		 "backend address for IPv4 clients (default 127.0.0.1)");

static char *backend_ipv6 = "::1";
module_param(backend_ipv6, charp, 0444);
MODULE_PARM_DESC(backend_ipv6, "backend address for IPv6 clients (default ::1)");

static char *dynamic_prefixes = "";
module_param(dynamic_prefixes, charp, 0444);
MODULE_PARM_DESC(dynamic_prefixes,
		 "comma-separated path prefixes for the backend, e.g. /api/,/cgi-bin/");

static char *dynamic_extensions = "";
module_param(dynamic_extensions, charp, 0444);
MODULE_PARM_DESC(dynamic_extensions,
		 "comma-separated file extensions for the backend, e.g. .php,.cgi");

static bool backend_missing;
module_param(backend_missing, bool, 0644);
MODULE_PARM_DESC(backend_missing,
		 "send requests for missing files to the backend (default N; writable)");

u16 kweb_backend_port(void)
{
	return READ_ONCE(backend_port);
}

bool kweb_backend_missing(void)
{
	return READ_ONCE(backend_missing);
}

static uint max_header_size = 8192;
module_param(max_header_size, uint, 0444);
MODULE_PARM_DESC(max_header_size,
		 "longest request head in bytes; 414/431 beyond (default 8192)");

static uint header_timeout = 60;
module_param(header_timeout, uint, 0444);
MODULE_PARM_DESC(header_timeout,
		 "seconds to receive a request head (default 60)");

static uint keepalive_timeout = 75;
module_param(keepalive_timeout, uint, 0444);
MODULE_PARM_DESC(keepalive_timeout,
		 "seconds an idle keep-alive connection stays open (default 75)");

static uint send_timeout = 60;
module_param(send_timeout, uint, 0444);
MODULE_PARM_DESC(send_timeout,
		 "seconds a response may make no progress (default 60)");

static uint max_connections = 16384;
module_param(max_connections, uint, 0444);
MODULE_PARM_DESC(max_connections,
		 "connections kweb holds at once; beyond, new ones go to the backend unread, or are closed (default 16384)");

static uint max_requests = 1000;
module_param(max_requests, uint, 0444);
MODULE_PARM_DESC(max_requests,
		 "requests per keep-alive connection; the last says Connection: close (default 1000, like nginx)");

static uint cache_size = 64;
module_param(cache_size, uint, 0444);
MODULE_PARM_DESC(cache_size,
		 "MiB of page-cache pages the file cache may pin (default 64)");

static uint cache_max_file = 4096;
module_param(cache_max_file, uint, 0444);
MODULE_PARM_DESC(cache_max_file,
		 "KiB: larger files are served but not cached (default 4096)");

DEFINE_PER_CPU(struct kweb_stats, kweb_stats);

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
};

/* kweb_handoff() counts by reason as an offset from the first. */
static_assert(KWEB_STAT_HANDOFF_MISSING - KWEB_STAT_HANDOFF_METHOD ==
	      KWEB_ROUTE_MISSING - KWEB_ROUTE_METHOD);

u64 kweb_stat_read(enum kweb_stat s)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(kweb_stats, cpu).v[s];
	return sum;
}

static struct kweb_server *kweb_srv;

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
	if (backend_port == port) {
		pr_err("backend_port=%u is kweb's own port\n", backend_port);
		return -EINVAL;
	}
	if (max_header_size < 256 || max_header_size > 65536) {
		pr_err("max_header_size=%u is outside 256..65536\n",
		       max_header_size);
		return -EINVAL;
	}
	if (!cache_size || cache_size > 65536) {
		pr_err("cache_size=%u is outside 1..65536 MiB\n", cache_size);
		return -EINVAL;
	}
	if (!max_connections || !max_requests) {
		pr_err("max_connections and max_requests must be at least 1\n");
		return -EINVAL;
	}
	if (!header_timeout || !keepalive_timeout || !send_timeout) {
		pr_err("timeouts must be at least 1 second\n");
		return -EINVAL;
	}
	return 0;
}

static struct kweb_server *kweb_server_create(void)
{
	struct kweb_server *srv;
	int err;

	srv = kzalloc(sizeof(*srv), GFP_KERNEL);
	if (!srv)
		return ERR_PTR(-ENOMEM);
	err = kern_path(docroot, LOOKUP_FOLLOW | LOOKUP_DIRECTORY,
			&srv->docroot);
	if (err) {
		pr_err("docroot=%s: cannot open directory: error %d\n",
		       docroot, err);
		kfree(srv);
		return ERR_PTR(err);
	}
	srv->port = port;
	err = kweb_backend_init(&srv->backend, backend_ipv4, backend_ipv6,
				dynamic_prefixes, dynamic_extensions);
	if (err) {
		path_put(&srv->docroot);
		kfree(srv);
		return ERR_PTR(err);
	}
	srv->limits.max_header_size = max_header_size;
	srv->limits.header_timeout = header_timeout;
	srv->limits.keepalive_timeout = keepalive_timeout;
	srv->limits.send_timeout = send_timeout;
	srv->limits.linger_timeout = 5;
	srv->limits.max_connections = max_connections;
	srv->limits.max_requests = max_requests;
	kweb_cache_init(&srv->cache, (size_t)cache_size << 20,
			(size_t)cache_max_file << 10);
	spin_lock_init(&srv->conns_lock);
	INIT_LIST_HEAD(&srv->conns);
	init_waitqueue_head(&srv->conns_wq);

	err = kweb_proc_init(srv);
	if (err) {
		path_put(&srv->docroot);
		kfree(srv);
		return ERR_PTR(err);
	}
	err = kweb_listeners_start(srv);
	if (err) {
		kweb_proc_exit(srv);
		path_put(&srv->docroot);
		kfree(srv);
		return ERR_PTR(err);
	}
	return srv;
}

static void kweb_server_destroy(struct kweb_server *srv)
{
	kweb_listeners_stop(srv);
	kweb_conns_stop(srv);
	kweb_proc_exit(srv);
	kweb_cache_flush(&srv->cache);
	path_put(&srv->docroot);
	kfree(srv);
}

static int __init kweb_init(void)
{
	int err;

	err = kweb_check_params();
	if (err)
		return err;
	err = kweb_conn_init();
	if (err)
		return err;
	kweb_srv = kweb_server_create();
	if (IS_ERR(kweb_srv)) {
		kweb_conn_exit();
		return PTR_ERR(kweb_srv);
	}
	pr_info("serving %s on port %u, backend port %u\n", docroot, port,
		backend_port);
	return 0;
}

static void __exit kweb_exit(void)
{
	kweb_server_destroy(kweb_srv);
	/* Flushes the cache entries' last puts. */
	kweb_conn_exit();
	pr_info("stopped: %llu connections, %llu requests in softirq, %llu in the worker, %llu body bytes spliced, %llu copied, %ld bytes still pinned\n",
		kweb_stat_read(KWEB_STAT_CONN_ACCEPTED),
		kweb_stat_read(KWEB_STAT_REQ_SOFTIRQ),
		kweb_stat_read(KWEB_STAT_REQ_WORKER),
		kweb_stat_read(KWEB_STAT_BODY_SPLICED),
		kweb_stat_read(KWEB_STAT_BODY_COPIED),
		atomic_long_read(&kweb_cache_pinned));
}

module_init(kweb_init);
module_exit(kweb_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kweb: in-kernel HTTP accelerator for static files");
