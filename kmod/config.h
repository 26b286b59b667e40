/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Module-wide settings: the module parameters of the same names, which
 * netlink's config-set may change at run time. Their bounds are the uAPI's
 * (from uapi/kweb.yaml), so insmod and netlink accept the same values.
 */
#ifndef KWEB_CONFIG_H
#define KWEB_CONFIG_H

#include <linux/rcupdate.h>
#include <linux/types.h>

#include "http_route.h"

/* Limits; each server keeps a copy, refreshed when they change. */
struct kweb_limits {
	unsigned int max_header_size;	/* request head bytes: 414/431 beyond */
	unsigned int keepalive_timeout;	/* seconds idle between requests */
	unsigned int header_timeout;	/* seconds to receive one request head */
	unsigned int send_timeout;	/* seconds a send may make no progress */
	unsigned int linger_timeout;	/* seconds to wait for the peer's FIN */
	unsigned int max_connections;	/* beyond: to the backend, or closed */
	unsigned int max_requests;	/* per connection; then Connection: close */
};

/* A snapshot of the settings, and what config-set changes. */
struct kweb_config {
	struct kweb_limits limits;
	unsigned int cache_size;	/* MiB */
	unsigned int cache_max_file;	/* KiB */
	u16 backend_port;
	bool backend_missing;
	bool precompressed;		/* NAME.br, NAME.gz for NAME */
	u32 user, group;		/* ids files are opened as (identity.c) */
};

/* The routes to the backend, replaced as a whole under RCU. */
struct kweb_rules {
	struct rcu_head rcu;
	struct kweb_route_rules r;	/* slices of the two strings below */
	char *prefixes;
	char *extensions;
};

struct kweb_backend;
struct kweb_server_args;
struct kweb_site_args;

/* The backend addresses of the module parameters; port 0 (module-wide). */
void kweb_backend_defaults(struct kweb_backend *b);
/* Listener 1 as the parameters make it; site is what args->site points to. */
void kweb_config_server_args(struct kweb_server_args *args,
			     struct kweb_site_args *site);

int kweb_config_init(void);
void kweb_config_exit(void);
void kweb_config_get(struct kweb_config *cfg);
/* Under kweb_ctl_mutex; every server takes the new values. */
void kweb_config_set(const struct kweb_config *cfg);

/*
 * Rules from two comma-separated lists; an ERR_PTR: -EINVAL for a bad
 * entry, -E2BIG for too many, -ENOMEM.
 */
struct kweb_rules *kweb_rules_alloc(const char *prefixes,
				    const char *extensions);
void kweb_rules_free(struct kweb_rules *r);
/* Under kweb_ctl_mutex: takes rules over, frees the old ones after RCU. */
void kweb_rules_replace(struct kweb_rules *rules);
/* Under rcu_read_lock(), or kweb_ctl_mutex. */
const struct kweb_rules *kweb_rules(void);

u16 kweb_backend_port(void);
bool kweb_backend_missing(void);
bool kweb_precompressed(void);
size_t kweb_cache_limit_bytes(unsigned int mib);
size_t kweb_cache_max_file_bytes(unsigned int kib);

#endif /* KWEB_CONFIG_H */
