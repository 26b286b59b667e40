/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A network namespace's settings: what netlink's config-set changes, and
 * what listeners follow unless they have their own (site.h). Each
 * namespace has its own; the module parameters of the same names are the
 * initial namespace's. Bounds are the uAPI's (from uapi/kweb.yaml), so
 * insmod and netlink accept the same values.
 *
 * Settings are data: a struct kweb_config is never changed once
 * published. The control layer (netlink.c) builds a new one, publishes it
 * with kweb_config_replace(), and applies what the servers keep of it;
 * the data path reads the one in force under RCU (kweb_config()).
 */
#ifndef KWEB_CONFIG_H
#define KWEB_CONFIG_H

#include <linux/rcupdate.h>
#include <linux/types.h>

#include "http_route.h"

struct net;
struct kweb_mime_map;

/* Limits of a namespace's connections. */
struct kweb_limits {
	unsigned int max_header_size;	/* head bytes read; beyond: backend's */
	unsigned int keepalive_timeout;	/* seconds idle between requests */
	unsigned int header_timeout;	/* seconds to receive one request head */
	unsigned int send_timeout;	/* seconds a send may make no progress */
	unsigned int linger_timeout;	/* seconds to wait for the peer's FIN */
	unsigned int max_connections;	/* beyond: to the backend, or closed */
	unsigned int max_requests;	/* per connection; then Connection: close */
};

/* The routes to the backend: two lists and what they parse to. */
struct kweb_rules {
	struct kweb_route_rules r;	/* slices of the two strings below */
	char *prefixes;
	char *extensions;
};

struct kweb_config {
	struct rcu_head rcu;
	struct kweb_limits limits;
	unsigned int cache_size;	/* MiB */
	unsigned int cache_max_file;	/* KiB */
	u16 backend_port;
	bool backend_missing;
	bool precompressed;		/* NAME.br, NAME.gz for NAME */
	/* Ids files are opened as, in each listener creator's user ns. */
	u32 user, group;
	struct kweb_rules *rules;	/* dynamic prefixes and extensions */
	struct kweb_mime_map *mime;	/* Content-Type overrides, or NULL */
};

struct kweb_backend;
struct kweb_server_args;
struct kweb_site_args;

/* The backend addresses of the module parameters; port 0 (the namespace's). */
void kweb_backend_defaults(struct kweb_backend *b);
/* Listener 1 as the parameters make it; site is what args->site points to. */
void kweb_config_server_args(struct kweb_server_args *args,
			     struct kweb_site_args *site);

/* Module load and unload: the parameters checked; the initial namespace's. */
int kweb_config_init(void);
void kweb_config_exit(void);
/* A namespace going away: its settings, after its servers. */
void kweb_config_net_exit(struct net *net);

/*
 * net's settings, under rcu_read_lock() or kweb_ctl_mutex. A namespace
 * that never set any has kweb's defaults (those of the parameters not
 * given); never NULL.
 */
const struct kweb_config *kweb_config(const struct net *net);

/*
 * Under kweb_ctl_mutex: a copy of net's settings to change (its rules and
 * MIME map copied too), or an ERR_PTR. Then kweb_config_replace()
 * publishes it (the old one freed after RCU), or kweb_config_free()
 * drops it.
 */
struct kweb_config *kweb_config_copy(const struct net *net);
void kweb_config_replace(struct net *net, struct kweb_config *cfg);
void kweb_config_free(struct kweb_config *cfg);

/*
 * Rules from two comma-separated lists; an ERR_PTR: -EINVAL for a bad
 * entry, -E2BIG for too many, -ENOMEM.
 */
struct kweb_rules *kweb_rules_alloc(const char *prefixes,
				    const char *extensions);
void kweb_rules_free(struct kweb_rules *r);

/* A listener's cache size, and the largest file it caches, in bytes. */
size_t kweb_config_cache_bytes(const struct kweb_config *cfg);
size_t kweb_config_max_file_bytes(const struct kweb_config *cfg);

#endif /* KWEB_CONFIG_H */
