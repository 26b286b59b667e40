// SPDX-License-Identifier: GPL-2.0
/*
 * Each network namespace's settings (config.h). The module parameters are
 * the initial namespace's: read at load, and kept in step with its
 * config-set afterwards, so /sys/module/kweb/parameters shows what is in
 * force there. Every other namespace starts from kweb's defaults (the
 * parameters' values when not given), never from another namespace's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/inet.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/uidgid.h>
#include <uapi/linux/kweb.h>

#include "kweb.h"
#include "mimemap.h"
#include "netns.h"

/*
 * Every parameter is readable by root alone (0400): they are the initial
 * namespace's settings, its docroot and host names, and every container
 * sees /sys/module; a container's root, root of its user namespace
 * only, cannot read them (sysfs checks the global ids).
 */

/* Listener 1, which the module makes when it is loaded. */
static char *docroot;
module_param(docroot, charp, 0400);
MODULE_PARM_DESC(docroot, "absolute path of the directory to serve (required)");

static ushort port = 80;
module_param(port, ushort, 0400);
MODULE_PARM_DESC(port, "TCP port to listen on, IPv4 and IPv6 (default 80)");

static char *backend_ipv4 = "127.0.0.1";
module_param(backend_ipv4, charp, 0400);
MODULE_PARM_DESC(backend_ipv4,
		 "backend address for IPv4 clients (default 127.0.0.1)");

static char *backend_ipv6 = "::1";
module_param(backend_ipv6, charp, 0400);
MODULE_PARM_DESC(backend_ipv6, "backend address for IPv6 clients (default ::1)");

/* Listener 1's own; other listeners get theirs from listener-add/set. */
static char *cache_control = "";
module_param(cache_control, charp, 0400);
MODULE_PARM_DESC(cache_control,
		 "Cache-Control rules of listener 1, e.g. \"/assets/=max-age=31536000, immutable;.css=max-age=3600\"");

static bool expires;
module_param(expires, bool, 0400);
MODULE_PARM_DESC(expires,
		 "listener 1 sends Expires with a Cache-Control rule's max-age (default N)");

static char *error_pages = "";
module_param(error_pages, charp, 0400);
MODULE_PARM_DESC(error_pages,
		 "pages listener 1 answers its errors with, e.g. \"404=/404.html;500,503=/50x.html\"");

static bool vhosts;
module_param(vhosts, bool, 0400);
MODULE_PARM_DESC(vhosts,
		 "listener 1 serves each Host from docroot/HOST/ (default N)");

static char *vhost_default = "default";
module_param(vhost_default, charp, 0400);
MODULE_PARM_DESC(vhost_default,
		 "listener 1's directory for requests without a host of their own (default \"default\")");

#define KWEB_DEFAULT_LIMITS {		\
	.max_header_size = 8192,	\
	.header_timeout = 60,		\
	.keepalive_timeout = 75,	\
	.send_timeout = 60,		\
	.linger_timeout = 5,		\
	.max_connections = 16384,	\
	.max_requests = 1000,		\
}
#define KWEB_DEFAULT_CACHE_SIZE 64		/* MiB */
#define KWEB_DEFAULT_CACHE_MAX_FILE 4096	/* KiB */
#define KWEB_DEFAULT_BACKEND_PORT 8080
#define KWEB_DEFAULT_PRECOMPRESSED true
#define KWEB_DEFAULT_ID 65534			/* Debian's nobody, nogroup */

static struct kweb_limits kweb_limits_param = KWEB_DEFAULT_LIMITS;

module_param_named(max_header_size, kweb_limits_param.max_header_size, uint,
		   0400);
MODULE_PARM_DESC(max_header_size,
		 "longest request head in bytes kweb reads; longer ones go to the backend (default 8192)");
module_param_named(header_timeout, kweb_limits_param.header_timeout, uint,
		   0400);
MODULE_PARM_DESC(header_timeout,
		 "seconds to receive a request head (default 60)");
module_param_named(keepalive_timeout, kweb_limits_param.keepalive_timeout,
		   uint, 0400);
MODULE_PARM_DESC(keepalive_timeout,
		 "seconds an idle keep-alive connection stays open (default 75)");
module_param_named(send_timeout, kweb_limits_param.send_timeout, uint, 0400);
MODULE_PARM_DESC(send_timeout,
		 "seconds a response may make no progress (default 60)");
module_param_named(max_connections, kweb_limits_param.max_connections, uint,
		   0400);
MODULE_PARM_DESC(max_connections,
		 "connections kweb holds at once; beyond, new ones go to the backend unread, or are closed (default 16384)");
module_param_named(max_requests, kweb_limits_param.max_requests, uint, 0400);
MODULE_PARM_DESC(max_requests,
		 "requests per keep-alive connection; the last says Connection: close (default 1000, like nginx)");

static uint cache_size = KWEB_DEFAULT_CACHE_SIZE;
module_param(cache_size, uint, 0400);
MODULE_PARM_DESC(cache_size,
		 "MiB of page-cache pages the file cache may pin (default 64)");

static uint cache_max_file = KWEB_DEFAULT_CACHE_MAX_FILE;
module_param(cache_max_file, uint, 0400);
MODULE_PARM_DESC(cache_max_file,
		 "KiB: larger files, or larger than cache_size, are served but not cached (default 4096)");

static ushort backend_port = KWEB_DEFAULT_BACKEND_PORT;
module_param(backend_port, ushort, 0400);
MODULE_PARM_DESC(backend_port,
		 "port of the server requests kweb does not serve go to (default 8080)");

static bool backend_missing;
module_param(backend_missing, bool, 0400);
MODULE_PARM_DESC(backend_missing,
		 "send requests for missing files to the backend (default N)");

static bool precompressed = KWEB_DEFAULT_PRECOMPRESSED;
module_param(precompressed, bool, 0400);
MODULE_PARM_DESC(precompressed,
		 "serve NAME.br or NAME.gz to clients that accept them, when the file exists (default Y)");

/*
 * Numeric ids, in the user namespace of each listener's creator: the
 * kernel has no passwd database (kwebctl resolves names).
 */
static uint user = KWEB_DEFAULT_ID;
module_param(user, uint, 0400);
MODULE_PARM_DESC(user,
		 "uid files are looked up and opened as, without capabilities (default 65534, nobody)");
static uint group = KWEB_DEFAULT_ID;
module_param(group, uint, 0400);
MODULE_PARM_DESC(group,
		 "gid files are looked up and opened as, without supplementary groups (default 65534, nogroup)");

/* Read at load; afterwards their files show the initial namespace's. */
static char *dynamic_prefixes = "";
static char *dynamic_extensions = "";
static char *mime_types = "";

/* Until the initial namespace's settings exist, the text given. */
static bool kweb_params_live;

static int kweb_text_param_get(char *buf, const struct kernel_param *kp)
{
	const struct kweb_config *cfg;
	const char *s = *(char **)kp->arg;
	int n;

	rcu_read_lock();
	if (READ_ONCE(kweb_params_live)) {
		cfg = kweb_config(&init_net);
		if (kp->arg == &dynamic_prefixes)
			s = cfg->rules->prefixes;
		else if (kp->arg == &dynamic_extensions)
			s = cfg->rules->extensions;
		else
			s = cfg->mime ? kweb_mime_map_text_of(cfg->mime) : "";
	}
	n = scnprintf(buf, PAGE_SIZE, "%s\n", s);
	rcu_read_unlock();
	return n;
}

static const struct kernel_param_ops kweb_text_param_ops = {
	.set = param_set_charp,
	.get = kweb_text_param_get,
	.free = param_free_charp,
};

module_param_cb(dynamic_prefixes, &kweb_text_param_ops, &dynamic_prefixes,
		0400);
MODULE_PARM_DESC(dynamic_prefixes,
		 "comma-separated path prefixes for the backend, e.g. /api/,/cgi-bin/");
module_param_cb(dynamic_extensions, &kweb_text_param_ops,
		&dynamic_extensions, 0400);
MODULE_PARM_DESC(dynamic_extensions,
		 "comma-separated file extensions for the backend, e.g. .php,.cgi");
module_param_cb(mime_types, &kweb_text_param_ops, &mime_types, 0400);
MODULE_PARM_DESC(mime_types,
		 "Content-Type overrides, e.g. .md=text/markdown,.log=text/plain");

/* No routes to the backend: what a namespace without settings has. */
static struct kweb_rules kweb_rules_none = {
	.prefixes = "",
	.extensions = "",
};

/* The settings of a namespace that has set none. */
static const struct kweb_config kweb_config_none = {
	.limits = KWEB_DEFAULT_LIMITS,
	.cache_size = KWEB_DEFAULT_CACHE_SIZE,
	.cache_max_file = KWEB_DEFAULT_CACHE_MAX_FILE,
	.backend_port = KWEB_DEFAULT_BACKEND_PORT,
	.precompressed = KWEB_DEFAULT_PRECOMPRESSED,
	.user = KWEB_DEFAULT_ID,
	.group = KWEB_DEFAULT_ID,
	.rules = &kweb_rules_none,
};

static size_t kweb_cache_limit_bytes(unsigned int mib)
{
	return (size_t)mib << 20;
}

static size_t kweb_cache_max_file_bytes(unsigned int kib)
{
	return (size_t)kib << 10;
}

size_t kweb_config_cache_bytes(const struct kweb_config *cfg)
{
	return kweb_cache_limit_bytes(cfg->cache_size);
}

struct kweb_rules *kweb_rules_alloc(const char *prefixes,
				    const char *extensions)
{
	struct kweb_rules *r = kzalloc(sizeof(*r), GFP_KERNEL);
	int err = -ENOMEM;

	if (!r)
		return ERR_PTR(-ENOMEM);
	r->prefixes = kstrdup(prefixes ?: "", GFP_KERNEL);
	r->extensions = kstrdup(extensions ?: "", GFP_KERNEL);
	if (r->prefixes && r->extensions)
		err = kweb_route_rules_parse(&r->r, r->prefixes,
					     r->extensions);
	if (err) {
		kfree(r->prefixes);
		kfree(r->extensions);
		kfree(r);
		return ERR_PTR(err);
	}
	return r;
}

void kweb_rules_free(struct kweb_rules *r)
{
	if (!r || r == &kweb_rules_none)
		return;
	kfree(r->prefixes);
	kfree(r->extensions);
	kfree(r);
}

/*
 * The settings in force: under kweb_ctl_mutex, or in any RCU reader,
 * softirq's included (which takes no rcu_read_lock(), kweb_rcu.h).
 */
static const struct kweb_config *kweb_net_config(const struct kweb_net *kn)
{
	const struct kweb_config *cfg;

	cfg = rcu_dereference_check(kn->config,
				    lockdep_is_held(&kweb_ctl_mutex) ||
				    rcu_read_lock_any_held());
	return cfg ?: &kweb_config_none;
}

const struct kweb_config *kweb_config(const struct net *net)
{
	return kweb_net_config(kweb_net(net));
}

const struct kweb_config *kweb_srv_config(const struct kweb_server *srv)
{
	return kweb_net_config(srv->kn);
}

void kweb_config_free(struct kweb_config *cfg)
{
	if (!cfg)
		return;
	kweb_rules_free(cfg->rules);
	kweb_mime_map_free(cfg->mime);
	kfree(cfg);
}

static void kweb_config_free_rcu(struct rcu_head *head)
{
	kweb_config_free(container_of(head, struct kweb_config, rcu));
}

struct kweb_config *kweb_config_copy(const struct net *net)
{
	const struct kweb_config *cur = kweb_config(net);
	struct kweb_config *cfg;
	int err;

	lockdep_assert_held(&kweb_ctl_mutex);
	cfg = kmemdup(cur, sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return ERR_PTR(-ENOMEM);
	cfg->rules = NULL;
	cfg->mime = NULL;
	cfg->rules = kweb_rules_alloc(cur->rules->prefixes,
				      cur->rules->extensions);
	if (IS_ERR(cfg->rules)) {
		err = PTR_ERR(cfg->rules);
		cfg->rules = NULL;
		goto fail;
	}
	if (cur->mime) {
		/* Its types are interned already: only memory can fail. */
		cfg->mime = kweb_mime_map_parse(kweb_mime_pool(net),
						kweb_mime_map_text_of(cur->mime));
		if (IS_ERR(cfg->mime)) {
			err = PTR_ERR(cfg->mime);
			cfg->mime = NULL;
			goto fail;
		}
	}
	return cfg;
fail:
	kweb_config_free(cfg);
	return ERR_PTR(err);
}

size_t kweb_config_max_file_bytes(const struct kweb_config *cfg)
{
	/*
	 * Never more than the cache holds: a larger entry would be read
	 * and pinned whole, only to be dropped at once.
	 */
	return min(kweb_cache_max_file_bytes(cfg->cache_max_file),
		   kweb_cache_limit_bytes(cfg->cache_size));
}

/* The initial namespace's parameter files follow its settings. */
static void kweb_params_mirror(const struct kweb_config *cfg)
{
	struct kweb_limits *l = &kweb_limits_param;

	/* sysfs reads them without our lock. */
	WRITE_ONCE(l->header_timeout, cfg->limits.header_timeout);
	WRITE_ONCE(l->keepalive_timeout, cfg->limits.keepalive_timeout);
	WRITE_ONCE(l->send_timeout, cfg->limits.send_timeout);
	WRITE_ONCE(l->max_connections, cfg->limits.max_connections);
	WRITE_ONCE(l->max_requests, cfg->limits.max_requests);
	WRITE_ONCE(cache_size, cfg->cache_size);
	WRITE_ONCE(cache_max_file, cfg->cache_max_file);
	WRITE_ONCE(backend_port, cfg->backend_port);
	WRITE_ONCE(backend_missing, cfg->backend_missing);
	WRITE_ONCE(precompressed, cfg->precompressed);
	WRITE_ONCE(user, cfg->user);
	WRITE_ONCE(group, cfg->group);
}

void kweb_config_replace(struct net *net, struct kweb_config *cfg)
{
	struct kweb_config *old;

	old = rcu_replace_pointer(kweb_net(net)->config, cfg,
				  lockdep_is_held(&kweb_ctl_mutex));
	if (net_eq(net, &init_net))
		kweb_params_mirror(cfg);
	if (old)
		call_rcu(&old->rcu, kweb_config_free_rcu);
}

void kweb_config_net_exit(struct net *net)
{
	/* No server is left to read it, and no handler to replace it. */
	kweb_config_free(rcu_replace_pointer(kweb_net(net)->config, NULL,
					     true));
}

/* Parse the backend's addresses (module parameters' text). */
static int kweb_backend_parse(struct kweb_backend *b, const char *ipv4,
			      const char *ipv6)
{
	if (!in4_pton(ipv4, -1, (u8 *)&b->addr4, -1, NULL)) {
		pr_err("backend_ipv4=%s is not an IPv4 address\n", ipv4);
		return -EINVAL;
	}
	if (!in6_pton(ipv6, -1, b->addr6.s6_addr, -1, NULL)) {
		pr_err("backend_ipv6=%s is not an IPv6 address\n", ipv6);
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

void kweb_config_server_args(struct kweb_server_args *args,
			     struct kweb_site_args *site)
{
	memset(args, 0, sizeof(*args));
	args->docroot = docroot;
	args->port = port;
	args->any = true;
	kweb_backend_defaults(&args->backend);
	memset(site, 0, sizeof(*site));
	site->cache_control = cache_control;
	site->expires = expires;
	site->error_pages = error_pages;
	site->vhosts = vhosts;
	site->vhost_default = vhost_default;
	args->site = site;
}

/* Load time: the same bounds as uapi/kweb.yaml gives netlink. */
static int kweb_params_check(void)
{
	const struct kweb_limits *l = &kweb_limits_param;
	struct kweb_cache_rules *cr;
	struct kweb_error_pages *ep;
	struct kweb_backend b;
	int err;

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
		pr_err("backend_port=%u is kweb's own port\n", port);
		return -EINVAL;
	}
	if (kweb_backend_parse(&b, backend_ipv4, backend_ipv6)) {
		pr_err("backend_ipv4=%s backend_ipv6=%s: not addresses\n",
		       backend_ipv4, backend_ipv6);
		return -EINVAL;
	}
	if (strlen(cache_control) > KWEB_CACHE_CONTROL_MAX_LEN) {
		pr_err("cache_control is at most %u bytes\n",
		       KWEB_CACHE_CONTROL_MAX_LEN);
		return -EINVAL;
	}
	cr = kmalloc(sizeof(*cr), GFP_KERNEL);
	if (!cr)
		return -ENOMEM;
	err = kweb_cache_rules_parse(cr, cache_control);
	kfree(cr);
	if (err) {
		pr_err("cache_control=%s: %s\n", cache_control,
		       err == -E2BIG ? "more than 32 rules" :
		       "each rule must be /prefix=value or .ext=value, values Cache-Control directives");
		return err;
	}
	if (!kweb_site_host_ok(vhost_default)) {
		pr_err("vhost_default=%s is not a host name in lower case\n",
		       vhost_default);
		return -EINVAL;
	}
	if (strlen(error_pages) > KWEB_ERROR_PAGES_MAX_LEN) {
		pr_err("error_pages is at most %u bytes\n",
		       KWEB_ERROR_PAGES_MAX_LEN);
		return -EINVAL;
	}
	ep = kmalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep)
		return -ENOMEM;
	err = kweb_error_pages_parse(ep, error_pages);
	kfree(ep);
	if (err) {
		pr_err("error_pages=%s: %s\n", error_pages,
		       err == -E2BIG ? "more than 16 status codes" :
		       "each entry must be CODE[,CODE]=/path, codes 400..599 once each, paths normalized files");
		return err;
	}

	if (l->max_header_size < KWEB_MAX_HEADER_SIZE_MIN ||
	    l->max_header_size > KWEB_MAX_HEADER_SIZE_MAX) {
		pr_err("max_header_size=%u is outside %u..%u\n",
		       l->max_header_size, KWEB_MAX_HEADER_SIZE_MIN,
		       KWEB_MAX_HEADER_SIZE_MAX);
		return -EINVAL;
	}
	if (!cache_size || cache_size > KWEB_CACHE_SIZE_MAX) {
		pr_err("cache_size=%u is outside 1..%u MiB\n", cache_size,
		       KWEB_CACHE_SIZE_MAX);
		return -EINVAL;
	}

	if (!l->max_connections || !l->max_requests) {
		pr_err("max_connections and max_requests must be at least 1\n");
		return -EINVAL;
	}
	if (!l->header_timeout || !l->keepalive_timeout || !l->send_timeout ||
	    l->header_timeout > KWEB_TIMEOUT_MAX ||
	    l->keepalive_timeout > KWEB_TIMEOUT_MAX ||
	    l->send_timeout > KWEB_TIMEOUT_MAX) {
		pr_err("timeouts must be 1..%u seconds\n", KWEB_TIMEOUT_MAX);
		return -EINVAL;
	}
	/* The load's own listener would say so too, but only with docroot=. */
	if (!uid_valid(make_kuid(current_user_ns(), user)) ||
	    !gid_valid(make_kgid(current_user_ns(), group))) {
		pr_err("user=%u group=%u: not ids of this user namespace\n",
		       user, group);
		return -EINVAL;
	}
	if (strlen(mime_types) > KWEB_MIME_TYPES_MAX_LEN) {
		pr_err("mime_types is at most %u bytes\n",
		       KWEB_MIME_TYPES_MAX_LEN);
		return -EINVAL;
	}
	if (strlen(dynamic_prefixes) > KWEB_RULES_MAX_LEN ||
	    strlen(dynamic_extensions) > KWEB_RULES_MAX_LEN) {
		pr_err("dynamic_prefixes and dynamic_extensions are at most %u bytes each\n",
		       KWEB_RULES_MAX_LEN);
		return -EINVAL;
	}
	return 0;
}

/* The initial namespace's settings, from the parameters. */
static struct kweb_config *kweb_params_config(void)
{
	struct kweb_config *cfg;
	struct kweb_rules *r;

	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return ERR_PTR(-ENOMEM);
	cfg->limits = kweb_limits_param;
	cfg->cache_size = cache_size;
	cfg->cache_max_file = cache_max_file;
	cfg->backend_port = backend_port;
	cfg->backend_missing = backend_missing;
	cfg->precompressed = precompressed;
	cfg->user = user;
	cfg->group = group;
	r = kweb_rules_alloc(dynamic_prefixes, dynamic_extensions);
	if (IS_ERR(r)) {
		kfree(cfg);
		pr_err("dynamic_prefixes=%s dynamic_extensions=%s: %s\n",
		       dynamic_prefixes, dynamic_extensions,
		       PTR_ERR(r) == -E2BIG ? "too many entries" :
		       PTR_ERR(r) == -EINVAL ?
		       "each entry must be /prefix or .extension" :
		       "out of memory");
		return ERR_CAST(r);
	}
	cfg->rules = r;
	if (*mime_types) {
		cfg->mime = kweb_mime_map_parse(kweb_mime_pool(&init_net),
						mime_types);
		if (IS_ERR(cfg->mime)) {
			pr_err("mime_types=%s: %s\n", mime_types,
			       PTR_ERR(cfg->mime) == -E2BIG ?
			       "more than 32 entries" :
			       PTR_ERR(cfg->mime) == -EINVAL ?
			       "each entry must be .ext=type/subtype" :
			       "out of memory");
			r = ERR_CAST(cfg->mime);
			cfg->mime = NULL;
			kweb_config_free(cfg);
			return ERR_CAST(r);
		}
	}
	return cfg;
}

/* After kweb_netns_init(): the initial namespace's settings. */
int kweb_config_init(void)
{
	struct kweb_config *cfg;
	int err;

	err = kweb_params_check();
	if (err)
		return err;
	mutex_lock(&kweb_ctl_mutex);
	cfg = kweb_params_config();
	if (!IS_ERR(cfg))
		kweb_config_replace(&init_net, cfg);
	mutex_unlock(&kweb_ctl_mutex);
	if (IS_ERR(cfg))
		return PTR_ERR(cfg);
	WRITE_ONCE(kweb_params_live, true);
	return 0;
}

/* Before the namespaces' settings go: the parameter files read their own. */
void kweb_config_exit(void)
{
	WRITE_ONCE(kweb_params_live, false);
	synchronize_rcu();
}
