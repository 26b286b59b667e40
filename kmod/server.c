// SPDX-License-Identifier: GPL-2.0
/*
 * Servers (the listeners of the netlink API): a port of one network
 * namespace served from one docroot, with its own file cache.
 *
 * All of them are on kweb_servers, which only control paths touch, under
 * kweb_ctl_mutex: netlink, /proc/net/kweb, the module parameters, module
 * load and unload, and a network namespace's exit. The data path reaches
 * its server from the socket (listener -> server, connection -> server)
 * and never walks the list. A server is freed only after its listeners
 * are closed and its connections drained, so nothing on the data path
 * outlives it. The drain is not waited for under the mutex, nor in a
 * netlink call: a connection's run may wait on the docroot's filesystem
 * for as long as that likes, and every other namespace's control would
 * wait with it. A stopped server waits on kweb_servers_dying, still
 * counted in its namespace's totals, and the namespace's exit waits for
 * its own.
 *
 * A server belongs to one network namespace, takes its settings from that
 * namespace's (config.h), and is seen and changed only from there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/memcontrol.h>
#include <linux/namei.h>
#include <linux/netlink.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "kweb.h"
#include "netns.h"

DEFINE_MUTEX(kweb_ctl_mutex);
LIST_HEAD(kweb_servers);
/* Stopped, their connections closing: counted, never found. */
static LIST_HEAD(kweb_servers_dying);
/* Woken as each of them is freed. */
static DECLARE_WAIT_QUEUE_HEAD(kweb_servers_reaped);

/* Every namespace's, for the unload message. */
static u64 kweb_retired_all[KWEB_STAT_NR];

/* Under kweb_ctl_mutex: stat s of list's servers in net, or all if NULL. */
static u64 kweb_stat_sum(const struct list_head *list, const struct net *net,
			 enum kweb_stat s)
{
	struct kweb_server *srv;
	u64 sum = 0;

	list_for_each_entry(srv, list, node)
		if (!net || net_eq(srv->net, net))
			sum += kweb_stat_read_own(srv->stats, s);
	return sum;
}

u64 kweb_stat_read(const struct net *net, enum kweb_stat s)
{
	lockdep_assert_held(&kweb_ctl_mutex);
	return kweb_net(net)->retired[s] +
	       kweb_stat_sum(&kweb_servers, net, s) +
	       kweb_stat_sum(&kweb_servers_dying, net, s);
}

u64 kweb_stat_read_all(enum kweb_stat s)
{
	u64 sum;

	mutex_lock(&kweb_ctl_mutex);
	sum = kweb_retired_all[s] + kweb_stat_sum(&kweb_servers, NULL, s) +
	      kweb_stat_sum(&kweb_servers_dying, NULL, s);
	mutex_unlock(&kweb_ctl_mutex);
	return sum;
}

/* Under kweb_ctl_mutex: what net's servers hold, the stopped ones' too. */
void kweb_servers_totals(const struct net *net, struct kweb_totals *t)
{
	const struct list_head *lists[] = { &kweb_servers, &kweb_servers_dying };
	struct kweb_server *srv;
	int i;

	lockdep_assert_held(&kweb_ctl_mutex);
	memset(t, 0, sizeof(*t));
	for (i = 0; i < ARRAY_SIZE(lists); i++)
		list_for_each_entry(srv, lists[i], node) {
			if (!net_eq(srv->net, net))
				continue;
			t->conns += READ_ONCE(srv->nr_conns);
			t->cache_bytes += READ_ONCE(srv->cache.bytes);
			t->cache_limit += READ_ONCE(srv->cache.limit);
		}
}

/* srv is gone: what it counted stays in its namespace's totals. */
static void kweb_server_retire_stats(struct kweb_server *srv)
{
	struct kweb_net *kn = kweb_net(srv->net);
	int i;
	u64 v;

	for (i = 0; i < KWEB_STAT_NR; i++) {
		v = kweb_stat_read_own(srv->stats, i);
		kn->retired[i] += v;
		kweb_retired_all[i] += v;
	}
}

u16 kweb_server_backend_port(const struct kweb_server *srv)
{
	u16 port = READ_ONCE(srv->backend.port);

	if (!port) {
		rcu_read_lock();
		port = kweb_config(srv->net)->backend_port;
		rcu_read_unlock();
	}
	return port;
}

/*
 * A handoff must reach a user-space server, never a kweb listener: that
 * would hand the connection back and forth, or a TLS listener's, still
 * encrypted, to a kweb listener that holds no reference on the
 * namespace. Would a server of net on port, sending to backend_port,
 * make such a pair, or be another's backend or tls-port?
 */
static bool kweb_ports_clash(const struct net *net, u16 port, u16 backend_port)
{
	struct kweb_server *srv;

	if (port == backend_port)
		return true;
	list_for_each_entry(srv, &kweb_servers, node)
		if (net_eq(srv->net, net) &&
		    (srv->port == backend_port ||
		     kweb_server_backend_port(srv) == port ||
		     srv->tls_port == port))
			return true;
	return false;
}

/*
 * Would v as net's backend port send a server of net that follows it to a
 * kweb listener?
 */
bool kweb_backend_port_clashes(const struct net *net, u16 v)
{
	struct kweb_server *srv, *other;

	lockdep_assert_held(&kweb_ctl_mutex);
	list_for_each_entry(srv, &kweb_servers, node) {
		if (!net_eq(srv->net, net) || srv->backend.port)
			continue;
		list_for_each_entry(other, &kweb_servers, node)
			if (net_eq(other->net, net) && other->port == v)
				return true;
	}
	return false;
}

struct kweb_server *kweb_server_find(const struct net *net, u32 id)
{
	struct kweb_server *srv;

	lockdep_assert_held(&kweb_ctl_mutex);
	list_for_each_entry(srv, &kweb_servers, node)
		if (srv->id == id && net_eq(srv->net, net))
			return srv;
	return NULL;
}

/* kweb_wq: srv's last connection is gone (kweb_conns_abort()). */
static void kweb_server_reap(struct work_struct *work)
{
	struct kweb_server *srv = container_of(work, struct kweb_server, reap);
	struct kweb_net *kn = srv->kn;

	/* Runs queued before the last one closed hold its last references. */
	destroy_workqueue(srv->wq);
	kweb_log_server_exit(srv);
	kweb_cache_flush(&srv->cache);
	path_put(&srv->docroot);
	kweb_ident_exit(&srv->ident);
	mem_cgroup_put(srv->memcg);
	/* A softirq reader may have been the connections' last act. */
	kweb_site_free_rcu(rcu_dereference_protected(srv->site, true));

	mutex_lock(&kweb_ctl_mutex);
	list_del(&srv->node);
	/* Only connections and kweb_ctl_mutex holders count: none is left. */
	kweb_server_retire_stats(srv);
	kn->nr_dying--;
	mutex_unlock(&kweb_ctl_mutex);
	wake_up_all(&kweb_servers_reaped);
	free_percpu(srv->stats);
	kfree(srv);
}

/*
 * Under kweb_ctl_mutex, its listeners closed: no longer found, its
 * connections closing; kweb_server_reap() frees it once they are gone.
 */
static void kweb_server_retire(struct kweb_server *srv)
{
	list_move_tail(&srv->node, &kweb_servers_dying);
	srv->kn->nr_dying++;
	kweb_conns_abort(srv);
}

/*
 * Process context, before kweb_ctl_mutex: resolve args->docroot in the
 * caller's mount namespace into args->root, for kweb_server_create(); the
 * caller puts it afterwards. Never under the mutex: a lookup may wait on
 * a filesystem for as long as it likes (a FUSE mount of an unprivileged
 * user's), and nothing of any namespace's kweb may wait with it.
 * extack may be NULL (module load); the reason is then in dmesg.
 */
int kweb_server_resolve(struct kweb_server_args *args,
			struct netlink_ext_ack *extack)
{
	int err;

	if (args->docroot[0] != '/') {
		NL_SET_ERR_MSG_ATTR(extack, args->docroot_attr,
				    "docroot must be an absolute path");
		return -EINVAL;
	}
	err = kern_path(args->docroot, LOOKUP_FOLLOW | LOOKUP_DIRECTORY,
			&args->root);
	if (err) {
		if (!extack)
			pr_err("docroot=%s: cannot open directory: error %d\n",
			       args->docroot, err);
		NL_SET_ERR_MSG_ATTR(extack, args->docroot_attr,
				    "cannot open docroot as a directory");
	}
	return err;
}

/*
 * Under kweb_ctl_mutex, in process context: listens in net, serving
 * args->root (kweb_server_resolve()). extack may be NULL (module load).
 */
struct kweb_server *kweb_server_create(struct net *net,
				       const struct kweb_server_args *args,
				       struct netlink_ext_ack *extack)
{
	const struct kweb_config *cfg = kweb_config(net);
	struct kweb_server *srv;
	struct kweb_site *site;
	int err;

	lockdep_assert_held(&kweb_ctl_mutex);
	if (kweb_ports_clash(net, args->port,
			     args->backend.port ?: cfg->backend_port)) {
		NL_SET_ERR_MSG_ATTR(extack, args->port_attr,
				    "a kweb listener's port would be a backend port or tls-port");
		return ERR_PTR(-EINVAL);
	}
	/* Its connections would come back to it, over and over. */
	if (args->tls_port && kweb_ports_clash(net, args->port, args->tls_port)) {
		NL_SET_ERR_MSG_ATTR(extack, args->port_attr,
				    "tls-port is a kweb listener's port");
		return ERR_PTR(-EINVAL);
	}
	/* Charged to the caller, as is what it reads: see srv->memcg. */
	srv = kzalloc(sizeof(*srv), GFP_KERNEL_ACCOUNT);
	if (!srv)
		return ERR_PTR(-ENOMEM);
	/*
	 * Unbound: a run goes to whichever CPU is idle rather than queue
	 * behind the softirq that queued it. Its limit bounds the worker
	 * threads a docroot that never answers can hold; nginx's thread
	 * pools have 32 threads by default.
	 */
	srv->wq = alloc_workqueue("kweb-%u", WQ_UNBOUND, KWEB_SERVER_RUNS,
				  args->port);
	if (!srv->wq) {
		kfree(srv);
		return ERR_PTR(-ENOMEM);
	}
	INIT_LIST_HEAD(&srv->node);
	INIT_WORK(&srv->reap, kweb_server_reap);
	site = kweb_site_alloc(NULL, args->site, kweb_mime_pool(net));
	if (IS_ERR(site)) {
		destroy_workqueue(srv->wq);
		kfree(srv);
		return ERR_CAST(site);
	}
	RCU_INIT_POINTER(srv->site, site);
	srv->stats = alloc_percpu_gfp(struct kweb_stats, GFP_KERNEL_ACCOUNT);
	if (!srv->stats) {
		kweb_site_free(site);
		destroy_workqueue(srv->wq);
		kfree(srv);
		return ERR_PTR(-ENOMEM);
	}
	srv->docroot = args->root;
	path_get(&srv->docroot);
	srv->net = net;
	srv->kn = kweb_net(net);
	/*
	 * Whoever may create a listener (CAP_NET_ADMIN over its namespace,
	 * an unprivileged user's own namespace too) pays for the page cache
	 * it reads and pins, as it would for its own server's.
	 */
	srv->memcg = get_mem_cgroup_from_mm(current->mm);
	srv->port = args->port;
	srv->backend = args->backend;
	srv->tls_port = args->tls_port;
	srv->any = args->any;
	srv->has_addr4 = args->has_addr4;
	srv->has_addr6 = args->has_addr6;
	srv->addr4 = args->addr4;
	srv->addr6 = args->addr6;
	kweb_cache_init(&srv->cache, &srv->docroot,
			kweb_config_cache_bytes(cfg),
			kweb_config_max_file_bytes(cfg), srv->stats);
	spin_lock_init(&srv->conns_lock);
	INIT_LIST_HEAD(&srv->conns);
	/*
	 * Files are looked up and opened as the user and group settings,
	 * never with the worker's (full root) nor more than the creator's
	 * rights: CAP_NET_ADMIN must not be a way to read what its holder
	 * cannot.
	 */
	err = kweb_ident_init(&srv->ident, net->user_ns, cfg->user,
			      cfg->group, extack);
	if (err)
		goto fail_path;
	err = kweb_log_server_init(srv);
	if (err) {
		kweb_ident_exit(&srv->ident);
		goto fail_path;
	}

	err = kweb_listeners_start(srv);
	if (err) {
		/* A first listener may have taken connections already. */
		kweb_server_retire(srv);
		if (err == -EADDRINUSE)
			NL_SET_ERR_MSG_ATTR(extack, args->port_attr,
					    "the port is in use");
		else if (err == -EADDRNOTAVAIL)
			NL_SET_ERR_MSG_ATTR(extack, args->addr_attr,
					    "no such local address in this network namespace");
		else
			NL_SET_ERR_MSG_ATTR(extack, args->port_attr,
					    "cannot listen on the port");
		return ERR_PTR(err);
	}
	/* Its namespace's next: ids say nothing of other namespaces. */
	srv->id = ++kweb_net(net)->last_id;
	list_add_tail(&srv->node, &kweb_servers);
	return srv;

fail_path:
	mem_cgroup_put(srv->memcg);
	path_put(&srv->docroot);
	free_percpu(srv->stats);
	kweb_site_free(site);
	destroy_workqueue(srv->wq);
	kfree(srv);
	return ERR_PTR(err);
}

/*
 * Under kweb_ctl_mutex, in the caller's context: the creds for user and
 * group of every server of net, or none (then why is in extack).
 * _commit() puts them in force, _abort() drops them.
 */
int kweb_servers_ident_prepare(const struct net *net, u32 user, u32 group,
			       struct netlink_ext_ack *extack)
{
	struct kweb_server *srv;
	const struct cred *cred;

	lockdep_assert_held(&kweb_ctl_mutex);
	list_for_each_entry(srv, &kweb_servers, node) {
		if (!net_eq(srv->net, net))
			continue;
		cred = kweb_ident_prepare(&srv->ident, user, group, extack);
		if (IS_ERR(cred)) {
			kweb_servers_ident_abort(net);
			return PTR_ERR(cred);
		}
		srv->ident.next = cred;
	}
	return 0;
}

void kweb_servers_ident_abort(const struct net *net)
{
	struct kweb_server *srv;

	lockdep_assert_held(&kweb_ctl_mutex);
	list_for_each_entry(srv, &kweb_servers, node) {
		if (!net_eq(srv->net, net))
			continue;
		if (srv->ident.next)
			put_cred(srv->ident.next);
		srv->ident.next = NULL;
	}
}

/* Opens from now on are the new identity's, and so is every cache entry. */
void kweb_servers_ident_commit(const struct net *net)
{
	struct kweb_server *srv;

	lockdep_assert_held(&kweb_ctl_mutex);
	list_for_each_entry(srv, &kweb_servers, node) {
		if (!net_eq(srv->net, net))
			continue;
		kweb_ident_replace(&srv->ident, srv->ident.next);
		srv->ident.next = NULL;
		kweb_cache_flush(&srv->cache);
	}
}

/*
 * Under kweb_ctl_mutex, after net's settings were replaced: what its
 * servers keep of them. retype: Content-Types may have changed, so
 * cached files, which carry theirs, go.
 */
void kweb_servers_apply(const struct net *net, bool retype)
{
	const struct kweb_config *cfg = kweb_config(net);
	struct kweb_server *srv;

	lockdep_assert_held(&kweb_ctl_mutex);
	list_for_each_entry(srv, &kweb_servers, node) {
		if (!net_eq(srv->net, net))
			continue;
		kweb_cache_set_limits(&srv->cache, kweb_config_cache_bytes(cfg),
				      kweb_config_max_file_bytes(cfg));
		if (retype)
			kweb_cache_retype(&srv->cache);
	}
}

/* Never a kweb listener's port; 0 follows the namespace's again. */
int kweb_server_set_backend_port(struct kweb_server *srv, u16 port)
{
	lockdep_assert_held(&kweb_ctl_mutex);
	if (kweb_ports_clash(srv->net, srv->port,
			     port ?: kweb_config(srv->net)->backend_port))
		return -EINVAL;
	WRITE_ONCE(srv->backend.port, port);
	return 0;
}

struct kweb_site *kweb_server_site(const struct kweb_server *srv)
{
	return rcu_dereference_protected(srv->site,
					 lockdep_is_held(&kweb_ctl_mutex));
}

void kweb_server_site_replace(struct kweb_server *srv, struct kweb_site *site)
{
	struct kweb_site *old;

	old = rcu_replace_pointer(srv->site, site,
				  lockdep_is_held(&kweb_ctl_mutex));
	kweb_site_free_rcu(old);
}

/*
 * Under kweb_ctl_mutex: stop listening and close every connection; srv
 * is freed once they are gone, which this does not wait for.
 */
void kweb_server_destroy(struct kweb_server *srv)
{
	lockdep_assert_held(&kweb_ctl_mutex);
	kweb_listeners_stop(srv);
	kweb_server_retire(srv);
}

/*
 * net is going away: its servers go first, and their sockets must not
 * outlive it (they hold no reference on it), so this waits until every
 * one is freed. Only its own, and never on a filesystem: a run that may
 * wait on one holds the namespace (kweb_conn_work()), so none is in one
 * by now. Nor does it hold kweb_ctl_mutex while it waits.
 */
void kweb_servers_net_exit(const struct net *net)
{
	struct kweb_net *kn = kweb_net(net);
	struct kweb_server *srv, *tmp;

	mutex_lock(&kweb_ctl_mutex);
	list_for_each_entry_safe(srv, tmp, &kweb_servers, node)
		if (net_eq(srv->net, net))
			kweb_server_destroy(srv);
	mutex_unlock(&kweb_ctl_mutex);
	wait_event(kweb_servers_reaped, !READ_ONCE(kn->nr_dying));
}

/*
 * Module unload, netlink gone: every namespace's servers stop, and are
 * waited for here rather than in the namespaces' exits that removing
 * the pernet operations runs under pernet_ops_rwsem. A run waiting on a
 * tenant's stalled docroot then holds up the unload alone, not every
 * namespace's creation and exit on the host.
 */
void kweb_servers_exit(void)
{
	struct kweb_server *srv, *tmp;

	mutex_lock(&kweb_ctl_mutex);
	list_for_each_entry_safe(srv, tmp, &kweb_servers, node)
		kweb_server_destroy(srv);
	mutex_unlock(&kweb_ctl_mutex);
	/* list_empty() reads once: a check without the mutex. */
	wait_event(kweb_servers_reaped, list_empty(&kweb_servers_dying));
}
