// SPDX-License-Identifier: GPL-2.0
/*
 * The kweb generic netlink family: the handlers of the ops table that
 * nl_gen.c generates from uapi/kweb.yaml, and the family itself. The
 * generated per-op policies reject unknown, unsupported and out-of-range
 * attributes before a handler runs; the handlers check what a policy
 * cannot (names, paths, ports in use) and say why in the extack.
 *
 * Handlers run in parallel (no genl_mutex); kweb_ctl_mutex serializes them
 * with the other control paths. Listeners are those of the network
 * namespace of the caller's netlink socket.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <uapi/linux/kweb.h>

#include "kweb.h"
#include "mimemap.h"
#include "netns.h"
#include "nl_gen.h"
#include "tls.h"

/* The attribute of each counter. */
static const u16 kweb_nl_stat_attr[KWEB_STAT_NR] = {
	[KWEB_STAT_CONN_ACCEPTED] = KWEB_A_STATS_CONNECTIONS_ACCEPTED,
	[KWEB_STAT_CONN_CLOSED] = KWEB_A_STATS_CONNECTIONS_CLOSED,
	[KWEB_STAT_REQ_SOFTIRQ] = KWEB_A_STATS_REQUESTS_SOFTIRQ,
	[KWEB_STAT_REQ_WORKER] = KWEB_A_STATS_REQUESTS_WORKER,
	[KWEB_STAT_REQ_ERROR] = KWEB_A_STATS_RESPONSES_ERROR,
	[KWEB_STAT_BODY_SPLICED] = KWEB_A_STATS_BODY_BYTES_SPLICED,
	[KWEB_STAT_BODY_COPIED] = KWEB_A_STATS_BODY_BYTES_COPIED,
	[KWEB_STAT_CACHE_HITS] = KWEB_A_STATS_CACHE_HITS,
	[KWEB_STAT_CACHE_MISSES] = KWEB_A_STATS_CACHE_MISSES,
	[KWEB_STAT_CACHE_EVICTIONS] = KWEB_A_STATS_CACHE_EVICTIONS,
	[KWEB_STAT_CACHE_INVALIDATIONS] = KWEB_A_STATS_CACHE_INVALIDATIONS,
	[KWEB_STAT_HANDOFF_METHOD] = KWEB_A_STATS_HANDOFF_METHOD,
	[KWEB_STAT_HANDOFF_QUERY] = KWEB_A_STATS_HANDOFF_QUERY,
	[KWEB_STAT_HANDOFF_PREFIX] = KWEB_A_STATS_HANDOFF_PREFIX,
	[KWEB_STAT_HANDOFF_EXTENSION] = KWEB_A_STATS_HANDOFF_EXTENSION,
	[KWEB_STAT_HANDOFF_UPGRADE] = KWEB_A_STATS_HANDOFF_UPGRADE,
	[KWEB_STAT_HANDOFF_H2] = KWEB_A_STATS_HANDOFF_H2,
	[KWEB_STAT_HANDOFF_UNPARSED] = KWEB_A_STATS_HANDOFF_UNPARSED,
	[KWEB_STAT_HANDOFF_MISSING] = KWEB_A_STATS_HANDOFF_MISSING,
	[KWEB_STAT_HANDOFF_CONN_LIMIT] = KWEB_A_STATS_HANDOFF_CONNECTION_LIMIT,
	[KWEB_STAT_HANDOFF_NO_BACKEND] = KWEB_A_STATS_HANDOFF_FAILED_NO_BACKEND,
	[KWEB_STAT_HANDOFF_QUEUE_FULL] = KWEB_A_STATS_HANDOFF_FAILED_QUEUE_FULL,
	[KWEB_STAT_HANDOFF_FAILED] = KWEB_A_STATS_HANDOFF_FAILED,
	[KWEB_STAT_LOG_RECORDS] = KWEB_A_STATS_LOG_RECORDS,
	[KWEB_STAT_LOG_DROPPED] = KWEB_A_STATS_LOG_DROPPED,
	[KWEB_STAT_CONN_SOFTIRQ] = KWEB_A_STATS_CONNECTIONS_SOFTIRQ,
	[KWEB_STAT_HANDOFF_SOFTIRQ] = KWEB_A_STATS_HANDOFFS_SOFTIRQ,
	[KWEB_STAT_TLS_CONNS] = KWEB_A_STATS_TLS_CONNECTIONS,
	[KWEB_STAT_TLS_BYTES] = KWEB_A_STATS_TLS_BYTES,
};

/* A listener of net, or NULL with the extack saying so. */
static struct kweb_server *kweb_nl_server(const struct net *net,
					  const struct nlattr *attr,
					  struct netlink_ext_ack *extack)
{
	struct kweb_server *srv = kweb_server_find(net, nla_get_u32(attr));

	if (!srv)
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "no such listener in this network namespace");
	return srv;
}

/* A reply of one message for cmd; NULL when out of memory. */
static struct sk_buff *kweb_nl_reply_new(struct genl_info *info, u8 cmd,
					 void **hdr)
{
	struct sk_buff *msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);

	if (!msg)
		return NULL;
	*hdr = genlmsg_put_reply(msg, info, &kweb_nl_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static int kweb_nl_reply(struct sk_buff *msg, void *hdr,
			 struct genl_info *info)
{
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

int kweb_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	const struct nlattr *id = info->attrs[KWEB_A_STATS_LISTENER_ID];
	struct net *net = genl_info_net(info);
	u64 conns = 0, bytes = 0, limit = 0;
	struct kweb_server *srv = NULL;
	struct sk_buff *msg;
	void *hdr;
	int i, err = -EMSGSIZE;

	msg = kweb_nl_reply_new(info, KWEB_CMD_STATS_GET, &hdr);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&kweb_ctl_mutex);
	if (id) {
		srv = kweb_nl_server(net, id, info->extack);
		if (!srv) {
			err = -ENOENT;
			goto fail;
		}
		conns = READ_ONCE(srv->nr_conns);
		bytes = READ_ONCE(srv->cache.bytes);
		limit = READ_ONCE(srv->cache.limit);
		if (nla_put_u32(msg, KWEB_A_STATS_LISTENER_ID, srv->id))
			goto fail;
		for (i = 0; i < KWEB_STAT_NR; i++)
			if (nla_put_u64_64bit(msg, kweb_nl_stat_attr[i],
					      kweb_stat_read_own(srv->stats, i),
					      KWEB_A_STATS_PAD))
				goto fail;
	} else {
		struct kweb_totals t;

		kweb_servers_totals(net, &t);
		conns = t.conns;
		bytes = t.cache_bytes;
		limit = t.cache_limit;
		for (i = 0; i < KWEB_STAT_NR; i++)
			if (nla_put_u64_64bit(msg, kweb_nl_stat_attr[i],
					      kweb_stat_read(net, i),
					      KWEB_A_STATS_PAD))
				goto fail;
		if (nla_put_u64_64bit(msg, KWEB_A_STATS_PINNED_BYTES,
				      kweb_pinned_bytes(net, bytes),
				      KWEB_A_STATS_PAD))
			goto fail;
	}
	mutex_unlock(&kweb_ctl_mutex);
	if (nla_put_u64_64bit(msg, KWEB_A_STATS_CONNECTIONS_OPEN, conns,
			      KWEB_A_STATS_PAD) ||
	    nla_put_u64_64bit(msg, KWEB_A_STATS_CACHE_BYTES, bytes,
			      KWEB_A_STATS_PAD) ||
	    nla_put_u64_64bit(msg, KWEB_A_STATS_CACHE_LIMIT, limit,
			      KWEB_A_STATS_PAD)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return kweb_nl_reply(msg, hdr, info);
fail:
	mutex_unlock(&kweb_ctl_mutex);
	nlmsg_free(msg);
	return err;
}

int kweb_nl_config_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	const struct nlattr *id = info->attrs[KWEB_A_CONFIG_LISTENER_ID];
	struct net *net = genl_info_net(info);
	const struct kweb_rules *pfx, *ext;
	const struct kweb_config *cfg;
	const struct kweb_site *site;
	struct kweb_server *srv;
	bool precompressed;
	const char *mime;
	struct sk_buff *msg;
	u16 backend_port;
	void *hdr;
	int err = -EMSGSIZE;

	msg = kweb_nl_reply_new(info, KWEB_CMD_CONFIG_GET, &hdr);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&kweb_ctl_mutex);
	cfg = kweb_config(net);
	precompressed = cfg->precompressed;
	backend_port = cfg->backend_port;
	pfx = cfg->rules;
	ext = cfg->rules;
	mime = cfg->mime ? kweb_mime_map_text_of(cfg->mime) : "";
	/* A listener's own settings are those it runs with. */
	if (id) {
		srv = kweb_nl_server(net, id, info->extack);
		if (!srv) {
			err = -ENOENT;
			goto fail;
		}
		site = kweb_server_site(srv);
		precompressed = kweb_site_precompressed(site, cfg);
		backend_port = kweb_server_backend_port(srv);
		pfx = kweb_site_prefixes(site, cfg);
		ext = kweb_site_extensions(site, cfg);
		mime = kweb_site_mime_text(site, cfg);
	}
	if (nla_put_u32(msg, KWEB_A_CONFIG_HEADER_TIMEOUT,
			cfg->limits.header_timeout) ||
	    nla_put_u32(msg, KWEB_A_CONFIG_KEEPALIVE_TIMEOUT,
			cfg->limits.keepalive_timeout) ||
	    nla_put_u32(msg, KWEB_A_CONFIG_SEND_TIMEOUT,
			cfg->limits.send_timeout) ||
	    nla_put_u32(msg, KWEB_A_CONFIG_MAX_CONNECTIONS,
			cfg->limits.max_connections) ||
	    nla_put_u32(msg, KWEB_A_CONFIG_MAX_REQUESTS,
			cfg->limits.max_requests) ||
	    nla_put_u32(msg, KWEB_A_CONFIG_MAX_HEADER_SIZE,
			cfg->limits.max_header_size) ||
	    nla_put_u32(msg, KWEB_A_CONFIG_CACHE_SIZE, cfg->cache_size) ||
	    nla_put_u32(msg, KWEB_A_CONFIG_CACHE_MAX_FILE,
			cfg->cache_max_file) ||
	    nla_put_u16(msg, KWEB_A_CONFIG_BACKEND_PORT, backend_port) ||
	    nla_put_u8(msg, KWEB_A_CONFIG_BACKEND_MISSING,
		       cfg->backend_missing) ||
	    nla_put_u8(msg, KWEB_A_CONFIG_PRECOMPRESSED, precompressed) ||
	    nla_put_string(msg, KWEB_A_CONFIG_DYNAMIC_PREFIXES,
			   pfx->prefixes) ||
	    nla_put_string(msg, KWEB_A_CONFIG_DYNAMIC_EXTENSIONS,
			   ext->extensions) ||
	    nla_put_string(msg, KWEB_A_CONFIG_MIME_TYPES, mime) ||
	    nla_put_u32(msg, KWEB_A_CONFIG_USER, cfg->user) ||
	    nla_put_u32(msg, KWEB_A_CONFIG_GROUP, cfg->group) ||
	    (id && nla_put_u32(msg, KWEB_A_CONFIG_LISTENER_ID,
			       nla_get_u32(id))))
		goto fail;
	mutex_unlock(&kweb_ctl_mutex);
	return kweb_nl_reply(msg, hdr, info);
fail:
	mutex_unlock(&kweb_ctl_mutex);
	nlmsg_free(msg);
	return err;
}

/* Check one rule list alone, so that the extack names the right one. */
static int kweb_nl_rules_check(const struct nlattr *attr, bool prefixes,
			       struct netlink_ext_ack *extack)
{
	struct kweb_route_rules *r;
	const char *s;
	int err;

	if (!attr)
		return 0;
	r = kmalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	s = nla_data(attr);
	err = kweb_route_rules_parse(r, prefixes ? s : NULL,
				     prefixes ? NULL : s);
	kfree(r);
	if (err == -E2BIG)
		NL_SET_ERR_MSG_ATTR(extack, attr, "more than 16 entries");
	else if (err && prefixes)
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "each prefix must be /something, without '?'");
	else if (err)
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "each extension must be .something, without '?'");
	return err;
}

static void kweb_nl_mime_error(struct netlink_ext_ack *extack,
			       const struct nlattr *attr, int err)
{
	if (err == -E2BIG)
		NL_SET_ERR_MSG_ATTR(extack, attr, "more than 32 entries");
	else if (err == -ENOSPC)
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "too many distinct types since the module was loaded");
	else if (err == -EINVAL)
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "each entry must be .ext=type/subtype");
}

static void kweb_nl_get_u32(struct genl_info *info, int type,
			    unsigned int *v)
{
	if (info->attrs[type])
		*v = nla_get_u32(info->attrs[type]);
}

/*
 * Changes the caller's network namespace's settings, and nothing of any
 * other namespace: the genl op's flag has checked CAP_NET_ADMIN over it.
 */
int kweb_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	const struct nlattr *pfx = info->attrs[KWEB_A_CONFIG_DYNAMIC_PREFIXES];
	const struct nlattr *ext = info->attrs[KWEB_A_CONFIG_DYNAMIC_EXTENSIONS];
	const struct nlattr *port = info->attrs[KWEB_A_CONFIG_BACKEND_PORT];
	const struct nlattr *mime = info->attrs[KWEB_A_CONFIG_MIME_TYPES];
	const struct nlattr *user = info->attrs[KWEB_A_CONFIG_USER];
	const struct nlattr *group = info->attrs[KWEB_A_CONFIG_GROUP];
	struct net *net = genl_info_net(info);
	const struct nlattr *missing, *pre;
	struct kweb_config *cfg;
	struct kweb_mime_map *map;
	struct kweb_rules *rules;
	int err;

	err = kweb_nl_rules_check(pfx, true, info->extack);
	if (!err)
		err = kweb_nl_rules_check(ext, false, info->extack);
	if (err)
		return err;

	mutex_lock(&kweb_ctl_mutex);
	cfg = kweb_config_copy(net);
	if (IS_ERR(cfg)) {
		err = PTR_ERR(cfg);
		goto out;
	}
	kweb_nl_get_u32(info, KWEB_A_CONFIG_HEADER_TIMEOUT,
			&cfg->limits.header_timeout);
	kweb_nl_get_u32(info, KWEB_A_CONFIG_KEEPALIVE_TIMEOUT,
			&cfg->limits.keepalive_timeout);
	kweb_nl_get_u32(info, KWEB_A_CONFIG_SEND_TIMEOUT,
			&cfg->limits.send_timeout);
	kweb_nl_get_u32(info, KWEB_A_CONFIG_MAX_CONNECTIONS,
			&cfg->limits.max_connections);
	kweb_nl_get_u32(info, KWEB_A_CONFIG_MAX_REQUESTS,
			&cfg->limits.max_requests);
	kweb_nl_get_u32(info, KWEB_A_CONFIG_CACHE_SIZE, &cfg->cache_size);
	kweb_nl_get_u32(info, KWEB_A_CONFIG_CACHE_MAX_FILE,
			&cfg->cache_max_file);
	kweb_nl_get_u32(info, KWEB_A_CONFIG_USER, &cfg->user);
	kweb_nl_get_u32(info, KWEB_A_CONFIG_GROUP, &cfg->group);
	missing = info->attrs[KWEB_A_CONFIG_BACKEND_MISSING];
	if (missing)
		cfg->backend_missing = nla_get_u8(missing);
	pre = info->attrs[KWEB_A_CONFIG_PRECOMPRESSED];
	if (pre)
		cfg->precompressed = nla_get_u8(pre);
	if (port) {
		cfg->backend_port = nla_get_u16(port);
		if (cfg->backend_port != kweb_config(net)->backend_port &&
		    kweb_backend_port_clashes(net, cfg->backend_port)) {
			NL_SET_ERR_MSG_ATTR(info->extack, port,
					    "a kweb listener's port cannot be the backend port");
			err = -EINVAL;
			goto out_free;
		}
	}
	if (mime) {
		map = kweb_mime_map_parse(kweb_mime_pool(net), nla_data(mime));
		if (IS_ERR(map)) {
			err = PTR_ERR(map);
			kweb_nl_mime_error(info->extack, mime, err);
			goto out_free;
		}
		kweb_mime_map_free(cfg->mime);
		cfg->mime = map;
	}
	if (pfx || ext) {
		rules = kweb_rules_alloc(pfx ? nla_data(pfx) :
					 cfg->rules->prefixes,
					 ext ? nla_data(ext) :
					 cfg->rules->extensions);
		if (IS_ERR(rules)) {
			/* Each list passed alone: only memory is left. */
			err = PTR_ERR(rules);
			goto out_free;
		}
		kweb_rules_free(cfg->rules);
		cfg->rules = rules;
	}
	/* Every listener's cred for the new ids, or none: the last check. */
	if (user || group) {
		err = kweb_ident_check(net->user_ns, cfg->user, cfg->group,
				       info->extack);
		if (!err)
			err = kweb_servers_ident_prepare(net, cfg->user,
							 cfg->group,
							 info->extack);
		if (err) {
			NL_SET_BAD_ATTR(info->extack, user ?: group);
			goto out_free;
		}
	}
	/* Nothing fails from here: all of the request or none of it. */
	kweb_config_replace(net, cfg);
	if (user || group)
		kweb_servers_ident_commit(net);
	kweb_servers_apply(net, mime);
	goto out;
out_free:
	kweb_config_free(cfg);
out:
	mutex_unlock(&kweb_ctl_mutex);
	return err;
}

/* One listener's attributes; -EMSGSIZE when msg is full. */
static int kweb_nl_listener_fill(struct sk_buff *msg,
				 const struct kweb_server *srv, char *buf)
{
	const char *docroot = d_path(&srv->docroot, buf, PATH_MAX);
	const struct kweb_config *cfg = kweb_config(srv->net);
	const struct kweb_site *site = kweb_server_site(srv);
	u32 inherit = site->inherit;

	if (!READ_ONCE(srv->backend.port))
		inherit |= KWEB_SETTING_BACKEND_PORT;
	if (IS_ERR(docroot))
		docroot = "";
	if (nla_put_u32(msg, KWEB_A_LISTENER_ID, srv->id) ||
	    nla_put_u16(msg, KWEB_A_LISTENER_PORT, srv->port) ||
	    nla_put_string(msg, KWEB_A_LISTENER_DOCROOT, docroot) ||
	    nla_put_in_addr(msg, KWEB_A_LISTENER_BACKEND_ADDR4,
			    srv->backend.addr4) ||
	    nla_put_in6_addr(msg, KWEB_A_LISTENER_BACKEND_ADDR6,
			     &srv->backend.addr6) ||
	    nla_put_u16(msg, KWEB_A_LISTENER_BACKEND_PORT,
			kweb_server_backend_port(srv)) ||
	    nla_put_u32(msg, KWEB_A_LISTENER_CONNECTIONS_OPEN,
			READ_ONCE(srv->nr_conns)) ||
	    nla_put_u8(msg, KWEB_A_LISTENER_PRECOMPRESSED,
		       kweb_site_precompressed(site, cfg)) ||
	    nla_put_string(msg, KWEB_A_LISTENER_DYNAMIC_PREFIXES,
			   kweb_site_prefixes(site, cfg)->prefixes) ||
	    nla_put_string(msg, KWEB_A_LISTENER_DYNAMIC_EXTENSIONS,
			   kweb_site_extensions(site, cfg)->extensions) ||
	    nla_put_u32(msg, KWEB_A_LISTENER_INHERIT, inherit) ||
	    nla_put_string(msg, KWEB_A_LISTENER_CACHE_CONTROL,
			   site->cache_control) ||
	    nla_put_u8(msg, KWEB_A_LISTENER_EXPIRES, site->expires) ||
	    nla_put_string(msg, KWEB_A_LISTENER_ERROR_PAGES,
			   site->error_pages) ||
	    nla_put_string(msg, KWEB_A_LISTENER_MIME_TYPES,
			   kweb_site_mime_text(site, cfg)) ||
	    nla_put_u8(msg, KWEB_A_LISTENER_VHOSTS, site->vhosts) ||
	    nla_put_string(msg, KWEB_A_LISTENER_VHOST_DEFAULT,
			   site->vhost_default) ||
	    nla_put_u16(msg, KWEB_A_LISTENER_TLS_PORT, srv->tls_port) ||
	    nla_put_u32(msg, KWEB_A_LISTENER_HSTS, site->hsts) ||
	    nla_put_u8(msg, KWEB_A_LISTENER_HSTS_SUBDOMAINS,
		       site->hsts_subdomains) ||
	    nla_put_u16(msg, KWEB_A_LISTENER_HTTPS_REDIRECT,
			site->https_redirect) ||
	    nla_put_u32(msg, KWEB_A_LISTENER_BACKEND_USER,
			uid_valid(site->backend_uid) ?
			from_kuid_munged(srv->net->user_ns, site->backend_uid) :
			KWEB_BACKEND_USER_NONE))
		return -EMSGSIZE;
	if (!srv->any && srv->has_addr4 &&
	    nla_put_in_addr(msg, KWEB_A_LISTENER_ADDR4, srv->addr4))
		return -EMSGSIZE;
	if (!srv->any && srv->has_addr6 &&
	    nla_put_in6_addr(msg, KWEB_A_LISTENER_ADDR6, &srv->addr6))
		return -EMSGSIZE;
	return 0;
}

/* Reply with srv, under kweb_ctl_mutex; msg is consumed either way. */
static int kweb_nl_listener_reply(struct sk_buff *msg, void *hdr,
				  struct genl_info *info,
				  const struct kweb_server *srv)
{
	char *buf = kmalloc(PATH_MAX, GFP_KERNEL);
	int err = -ENOMEM;

	if (buf)
		err = kweb_nl_listener_fill(msg, srv, buf);
	kfree(buf);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return kweb_nl_reply(msg, hdr, info);
}

int kweb_nl_listener_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kweb_server *srv;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, KWEB_A_LISTENER_ID))
		return -EINVAL;
	msg = kweb_nl_reply_new(info, KWEB_CMD_LISTENER_GET, &hdr);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&kweb_ctl_mutex);
	srv = kweb_nl_server(genl_info_net(info),
			     info->attrs[KWEB_A_LISTENER_ID], info->extack);
	if (srv) {
		err = kweb_nl_listener_reply(msg, hdr, info, srv);
	} else {
		nlmsg_free(msg);
		err = -ENOENT;
	}
	mutex_unlock(&kweb_ctl_mutex);
	return err;
}

/* cb->args[0]: the last listener id dumped; ids only grow. */
int kweb_nl_listener_get_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	struct net *net = sock_net(cb->skb->sk);
	struct kweb_server *srv;
	char *buf;
	void *hdr;
	int err = 0;

	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&kweb_ctl_mutex);
	list_for_each_entry(srv, &kweb_servers, node) {
		if (!net_eq(srv->net, net) || srv->id <= cb->args[0])
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &kweb_nl_family,
				  NLM_F_MULTI, KWEB_CMD_LISTENER_GET);
		if (!hdr) {
			err = -EMSGSIZE;
			break;
		}
		err = kweb_nl_listener_fill(skb, srv, buf);
		if (err) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = srv->id;
	}
	mutex_unlock(&kweb_ctl_mutex);
	kfree(buf);
	/* A full skb ends this part; the dump goes on in the next. */
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

/* Check cache-control rules alone, for the extack's message. */
static int kweb_nl_cache_control_check(const struct nlattr *attr,
				       struct netlink_ext_ack *extack)
{
	struct kweb_cache_rules *r;
	int err;

	if (!attr)
		return 0;
	r = kmalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	err = kweb_cache_rules_parse(r, nla_data(attr));
	kfree(r);
	if (err == -E2BIG)
		NL_SET_ERR_MSG_ATTR(extack, attr, "more than 32 rules");
	else if (err)
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "each rule must be /prefix=value or .ext=value, the value Cache-Control directives without ';'");
	return err;
}

/* Check error pages alone, for the extack's message. */
static int kweb_nl_error_pages_check(const struct nlattr *attr,
				     struct netlink_ext_ack *extack)
{
	struct kweb_error_pages *p;
	int err;

	if (!attr)
		return 0;
	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	err = kweb_error_pages_parse(p, nla_data(attr));
	kfree(p);
	if (err == -E2BIG)
		NL_SET_ERR_MSG_ATTR(extack, attr, "more than 16 status codes");
	else if (err)
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "each entry must be CODE[,CODE]=/path, codes 400..599 once each, the path a normalized file");
	return err;
}

/*
 * backend-user, a uid of the user namespace that owns the network
 * namespace, as root there is: it must name someone there.
 */
static int kweb_nl_backend_user(struct genl_info *info,
				struct kweb_site_args *args)
{
	const struct nlattr *a = info->attrs[KWEB_A_LISTENER_BACKEND_USER];
	u32 user;

	if (!a)
		return 0;
	user = nla_get_u32(a);
	args->set_backend_uid = true;
	args->backend_uid = INVALID_UID;
	if (user == KWEB_BACKEND_USER_NONE)
		return 0;
	args->backend_uid = make_kuid(genl_info_net(info)->user_ns, user);
	if (!uid_valid(args->backend_uid)) {
		NL_SET_ERR_MSG_ATTR(info->extack, a,
				    "no such user in the namespace's user namespace");
		return -EINVAL;
	}
	return 0;
}

/* A listener's own settings in a request of the listener set. */
static int kweb_nl_site_args(struct genl_info *info,
			     struct kweb_site_args *args)
{
	struct nlattr **tb = info->attrs;
	const struct nlattr *pfx = tb[KWEB_A_LISTENER_DYNAMIC_PREFIXES];
	const struct nlattr *ext = tb[KWEB_A_LISTENER_DYNAMIC_EXTENSIONS];
	const struct nlattr *cc = tb[KWEB_A_LISTENER_CACHE_CONTROL];
	const struct nlattr *pages = tb[KWEB_A_LISTENER_ERROR_PAGES];
	const struct nlattr *vdef = tb[KWEB_A_LISTENER_VHOST_DEFAULT];
	const struct nlattr *inherit = tb[KWEB_A_LISTENER_INHERIT];
	int err;

	memset(args, 0, sizeof(*args));
	args->expires = -1;
	args->vhosts = -1;
	args->hsts = -1;
	args->hsts_subdomains = -1;
	args->https_redirect = -1;
	err = kweb_nl_rules_check(pfx, true, info->extack);
	if (!err)
		err = kweb_nl_rules_check(ext, false, info->extack);
	if (!err)
		err = kweb_nl_cache_control_check(cc, info->extack);
	if (!err)
		err = kweb_nl_error_pages_check(pages, info->extack);
	if (err)
		return err;
	if (inherit)
		args->inherit = nla_get_u32(inherit);
	if (tb[KWEB_A_LISTENER_PRECOMPRESSED]) {
		args->own |= KWEB_SETTING_PRECOMPRESSED;
		args->precompressed =
			nla_get_u8(tb[KWEB_A_LISTENER_PRECOMPRESSED]);
	}
	if (pfx) {
		args->own |= KWEB_SETTING_DYNAMIC_PREFIXES;
		args->prefixes = nla_data(pfx);
	}
	if (ext) {
		args->own |= KWEB_SETTING_DYNAMIC_EXTENSIONS;
		args->extensions = nla_data(ext);
	}
	if (tb[KWEB_A_LISTENER_MIME_TYPES]) {
		args->own |= KWEB_SETTING_MIME_TYPES;
		args->mime_types = nla_data(tb[KWEB_A_LISTENER_MIME_TYPES]);
	}
	/* Both a value and "follow the module-wide one" is no request. */
	if (args->own & args->inherit) {
		NL_SET_ERR_MSG_ATTR(info->extack, inherit,
				    "a setting given cannot also be inherited");
		return -EINVAL;
	}
	if (cc)
		args->cache_control = nla_data(cc);
	if (pages)
		args->error_pages = nla_data(pages);
	if (tb[KWEB_A_LISTENER_VHOSTS])
		args->vhosts = nla_get_u8(tb[KWEB_A_LISTENER_VHOSTS]);
	if (vdef) {
		if (!kweb_site_host_ok(nla_data(vdef))) {
			NL_SET_ERR_MSG_ATTR(info->extack, vdef,
					    "not a host name in lower case, without port or trailing dot");
			return -EINVAL;
		}
		args->vhost_default = nla_data(vdef);
	}
	if (tb[KWEB_A_LISTENER_EXPIRES])
		args->expires = nla_get_u8(tb[KWEB_A_LISTENER_EXPIRES]);
	if (tb[KWEB_A_LISTENER_HSTS])
		args->hsts = nla_get_u32(tb[KWEB_A_LISTENER_HSTS]);
	if (tb[KWEB_A_LISTENER_HSTS_SUBDOMAINS])
		args->hsts_subdomains =
			nla_get_u8(tb[KWEB_A_LISTENER_HSTS_SUBDOMAINS]);
	if (tb[KWEB_A_LISTENER_HTTPS_REDIRECT])
		args->https_redirect =
			nla_get_u16(tb[KWEB_A_LISTENER_HTTPS_REDIRECT]);
	return kweb_nl_backend_user(info, args);
}

int kweb_nl_listener_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	struct kweb_server_args args = {};
	struct kweb_site_args site;
	struct kweb_server *srv;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, KWEB_A_LISTENER_PORT) ||
	    GENL_REQ_ATTR_CHECK(info, KWEB_A_LISTENER_DOCROOT))
		return -EINVAL;
	err = kweb_nl_site_args(info, &site);
	if (err)
		return err;
	args.site = &site;
	args.port = nla_get_u16(tb[KWEB_A_LISTENER_PORT]);
	args.port_attr = tb[KWEB_A_LISTENER_PORT];
	args.docroot = nla_data(tb[KWEB_A_LISTENER_DOCROOT]);
	args.docroot_attr = tb[KWEB_A_LISTENER_DOCROOT];
	kweb_backend_defaults(&args.backend);
	if (tb[KWEB_A_LISTENER_BACKEND_ADDR4])
		args.backend.addr4 =
			nla_get_in_addr(tb[KWEB_A_LISTENER_BACKEND_ADDR4]);
	if (tb[KWEB_A_LISTENER_BACKEND_ADDR6])
		args.backend.addr6 =
			nla_get_in6_addr(tb[KWEB_A_LISTENER_BACKEND_ADDR6]);
	if (tb[KWEB_A_LISTENER_BACKEND_PORT])
		args.backend.port =
			nla_get_u16(tb[KWEB_A_LISTENER_BACKEND_PORT]);
	if (tb[KWEB_A_LISTENER_TLS_PORT])
		args.tls_port = nla_get_u16(tb[KWEB_A_LISTENER_TLS_PORT]);
	if (tb[KWEB_A_LISTENER_ADDR4]) {
		args.has_addr4 = true;
		args.addr4 = nla_get_in_addr(tb[KWEB_A_LISTENER_ADDR4]);
		args.addr_attr = tb[KWEB_A_LISTENER_ADDR4];
	}
	if (tb[KWEB_A_LISTENER_ADDR6]) {
		args.has_addr6 = true;
		args.addr6 = nla_get_in6_addr(tb[KWEB_A_LISTENER_ADDR6]);
		args.addr_attr = args.addr_attr ?: tb[KWEB_A_LISTENER_ADDR6];
	}
	args.any = !args.has_addr4 && !args.has_addr6;

	err = kweb_server_resolve(&args, info->extack);
	if (err)
		return err;
	/* Before the listener exists, so that it cannot fail for want of one. */
	msg = kweb_nl_reply_new(info, KWEB_CMD_LISTENER_ADD, &hdr);
	if (!msg) {
		path_put(&args.root);
		return -ENOMEM;
	}
	mutex_lock(&kweb_ctl_mutex);
	srv = kweb_server_create(genl_info_net(info), &args, info->extack);
	if (IS_ERR(srv)) {
		nlmsg_free(msg);
		err = PTR_ERR(srv);
		/* Its own MIME types are parsed only now. */
		if (!info->extack->_msg)
			kweb_nl_mime_error(info->extack,
					   tb[KWEB_A_LISTENER_MIME_TYPES], err);
	} else {
		/*
		 * The listener exists whatever becomes of the reply: an
		 * error now would have the caller retry into "port in use".
		 */
		kweb_nl_listener_reply(msg, hdr, info, srv);
		err = 0;
	}
	mutex_unlock(&kweb_ctl_mutex);
	path_put(&args.root);
	return err;
}

int kweb_nl_listener_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	const struct nlattr *port = info->attrs[KWEB_A_LISTENER_BACKEND_PORT];
	struct kweb_site_args args;
	struct kweb_server *srv;
	struct kweb_site *site;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, KWEB_A_LISTENER_ID))
		return -EINVAL;
	err = kweb_nl_site_args(info, &args);
	if (err)
		return err;
	if (port && (args.inherit & KWEB_SETTING_BACKEND_PORT)) {
		NL_SET_ERR_MSG_ATTR(info->extack, port,
				    "a setting given cannot also be inherited");
		return -EINVAL;
	}
	msg = kweb_nl_reply_new(info, KWEB_CMD_LISTENER_SET, &hdr);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&kweb_ctl_mutex);
	srv = kweb_nl_server(genl_info_net(info),
			     info->attrs[KWEB_A_LISTENER_ID], info->extack);
	if (!srv) {
		err = -ENOENT;
		goto fail;
	}
	site = kweb_site_alloc(kweb_server_site(srv), &args,
			       kweb_mime_pool(srv->net));
	if (IS_ERR(site)) {
		err = PTR_ERR(site);
		/* The other texts were checked: only MIME types are left. */
		kweb_nl_mime_error(info->extack,
				   info->attrs[KWEB_A_LISTENER_MIME_TYPES], err);
		goto fail;
	}
	/* The last check that can fail: then all of it is done. */
	if (port || (args.inherit & KWEB_SETTING_BACKEND_PORT)) {
		err = kweb_server_set_backend_port(srv, port ?
						   nla_get_u16(port) : 0);
		if (err) {
			NL_SET_ERR_MSG_ATTR(info->extack, port,
					    "a kweb listener's port cannot be the backend port");
			kweb_site_free(site);
			goto fail;
		}
	}
	kweb_server_site_replace(srv, site);
	if (args.own & KWEB_SETTING_MIME_TYPES ||
	    args.inherit & KWEB_SETTING_MIME_TYPES) {
		/* Its cached files carry their old Content-Type. */
		kweb_cache_retype(&srv->cache);
	}
	err = kweb_nl_listener_reply(msg, hdr, info, srv);
	mutex_unlock(&kweb_ctl_mutex);
	return err;
fail:
	mutex_unlock(&kweb_ctl_mutex);
	nlmsg_free(msg);
	return err;
}

int kweb_nl_listener_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kweb_server *srv;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, KWEB_A_LISTENER_ID))
		return -EINVAL;
	mutex_lock(&kweb_ctl_mutex);
	srv = kweb_nl_server(genl_info_net(info),
			     info->attrs[KWEB_A_LISTENER_ID], info->extack);
	if (srv)
		kweb_server_destroy(srv);
	else
		err = -ENOENT;
	mutex_unlock(&kweb_ctl_mutex);
	return err;
}

/*
 * kwebtlsd gives back a socket with kTLS installed, by descriptor, as
 * nfsd takes sockets from its portlist: looked up in the caller's own
 * file table, here, in its context, and closed there once adopted. Only
 * into a TLS listener of the caller's namespace.
 */
int kweb_nl_sock_adopt_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kweb_server *srv;
	struct socket *sock;
	unsigned int fd;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, KWEB_A_LISTENER_ID) ||
	    GENL_REQ_ATTR_CHECK(info, KWEB_A_LISTENER_FD))
		return -EINVAL;
	fd = nla_get_u32(info->attrs[KWEB_A_LISTENER_FD]);
	sock = sockfd_lookup(fd, &err);
	if (!sock) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[KWEB_A_LISTENER_FD],
				    "not a socket");
		return err;
	}
	mutex_lock(&kweb_ctl_mutex);
	srv = kweb_nl_server(genl_info_net(info),
			     info->attrs[KWEB_A_LISTENER_ID], info->extack);
	if (!srv) {
		err = -ENOENT;
	} else if (!srv->tls_port) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[KWEB_A_LISTENER_ID],
				    "not a TLS listener");
		err = -EINVAL;
	} else {
		err = kweb_tls_adopt(srv, sock, fd, info->extack);
	}
	mutex_unlock(&kweb_ctl_mutex);
	/* Adopted, the connection has the lookup's reference. */
	if (err)
		sockfd_put(sock);
	return err;
}

int kweb_nl_cache_flush_doit(struct sk_buff *skb, struct genl_info *info)
{
	const struct nlattr *path = info->attrs[KWEB_A_CACHE_PATH];
	struct net *net = genl_info_net(info);
	struct kweb_server *srv;
	struct kweb_target t;
	struct sk_buff *msg;
	unsigned int n = 0;
	char *key = NULL;
	void *hdr;
	int err;

	if (path) {
		key = kmalloc(PATH_MAX, GFP_KERNEL);
		if (!key)
			return -ENOMEM;
		/* As a request's target is; a cache key is the result. */
		err = kweb_path_normalize(nla_data(path),
					  strlen(nla_data(path)), key,
					  PATH_MAX, &t);
		if (!err && t.has_query)
			err = -EINVAL;
		if (err) {
			NL_SET_ERR_MSG_ATTR(info->extack, path,
					    "not a request path, e.g. /index.html");
			kfree(key);
			return err;
		}
	}
	msg = kweb_nl_reply_new(info, KWEB_CMD_CACHE_FLUSH, &hdr);
	if (!msg) {
		kfree(key);
		return -ENOMEM;
	}
	mutex_lock(&kweb_ctl_mutex);
	list_for_each_entry(srv, &kweb_servers, node) {
		if (!net_eq(srv->net, net))
			continue;
		n += key ? kweb_cache_flush_key(&srv->cache, key, t.path_len,
						KWEB_CACHE_FLUSH) :
			   kweb_cache_flush(&srv->cache);
	}
	mutex_unlock(&kweb_ctl_mutex);
	kfree(key);
	if (nla_put_u32(msg, KWEB_A_CACHE_ENTRIES, n)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return kweb_nl_reply(msg, hdr, info);
}

/*
 * Only for CAP_NET_ADMIN in the namespace's user namespace: the records
 * hold clients' addresses and paths. The generator's copy of this table
 * (in nl_gen.c) lacks the flag, and the spec has no way to say it.
 */
static const struct genl_multicast_group kweb_nl_mcgrps[] = {
	[KWEB_NLGRP_LOG] = { .name = KWEB_MCGRP_LOG,
			     .flags = GENL_MCAST_CAP_NET_ADMIN },
};

struct genl_family kweb_nl_family __ro_after_init = {
	.name		= KWEB_FAMILY_NAME,
	.version	= KWEB_FAMILY_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= kweb_nl_ops,
	.n_ops		= ARRAY_SIZE(kweb_nl_ops),
	.mcgrps		= kweb_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(kweb_nl_mcgrps),
};

int kweb_netlink_init(void)
{
	int err = genl_register_family(&kweb_nl_family);

	if (!err)
		kweb_log_enable();
	return err;
}

/* Returns once no handler runs or can start, and no record is sent. */
void kweb_netlink_exit(void)
{
	kweb_log_disable();
	genl_unregister_family(&kweb_nl_family);
}
