/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A listener's own settings: what one site may want unlike the others on
 * the same machine. Each listener has one, replaced as a whole under RCU
 * (listener-set); a setting it does not have follows its network
 * namespace's value of the same name (config.h).
 */
#ifndef KWEB_SITE_H
#define KWEB_SITE_H

#include <linux/rcupdate.h>
#include <linux/types.h>
#include <linux/uidgid.h>

#include <uapi/linux/kweb.h>

#include "config.h"
#include "http_cache_rules.h"
#include "http_error_pages.h"
#include "http_host.h"

/*
 * The backend port is the server's (srv->backend.port, 0 to follow the
 * namespace's): the handoff reads it without RCU.
 */
struct kweb_mime_map;
struct kweb_mime_pool;

struct kweb_site {
	struct rcu_head rcu;
	u32 inherit;			/* KWEB_SETTING_*s its namespace's */
	bool precompressed;
	bool expires;			/* Expires with a max-age rule */
	struct kweb_rules *rules;	/* own dynamic prefixes, extensions */
	struct kweb_mime_map *mime;	/* own MIME overrides, or NULL */
	char *cache_control;		/* cache_rules' text, "" for none */
	struct kweb_cache_rules cache_rules;
	char *error_pages;		/* pages' text, "" for none */
	struct kweb_error_pages pages;
	bool vhosts;			/* docroot/HOST/ per request host */
	char vhost_default[KWEB_HOST_MAX + 1];	/* for hosts without one */
	u32 hsts;			/* a TLS listener's HSTS max-age, or 0 */
	bool hsts_subdomains;		/* ... with includeSubDomains */
	u16 https_redirect;		/* 301 everything to https on it, or 0 */
	/* Owns backend listeners handed connections too; or INVALID_UID */
	kuid_t backend_uid;
};

#define KWEB_SITE_INHERITABLE (KWEB_SETTING_PRECOMPRESSED | \
			       KWEB_SETTING_DYNAMIC_PREFIXES | \
			       KWEB_SETTING_DYNAMIC_EXTENSIONS | \
			       KWEB_SETTING_MIME_TYPES)

/* What listener-add, listener-set or the module parameters ask for. */
struct kweb_site_args {
	u32 inherit;			/* settings to follow the namespace's */
	u32 own;			/* settings given below */
	bool precompressed;
	const char *prefixes, *extensions;
	const char *mime_types;
	const char *cache_control;	/* NULL: unchanged */
	int expires;			/* -1: unchanged */
	const char *error_pages;	/* NULL: unchanged */
	int vhosts;			/* -1: unchanged */
	const char *vhost_default;	/* NULL: unchanged; checked */
	s64 hsts;			/* -1: unchanged */
	int hsts_subdomains;		/* -1: unchanged */
	int https_redirect;		/* -1: unchanged */
	bool set_backend_uid;		/* else unchanged */
	kuid_t backend_uid;		/* INVALID_UID: none */
};

/* A host's directory name as kweb_host_dir() makes them, and no other. */
bool kweb_site_host_ok(const char *name);

/*
 * Under kweb_ctl_mutex (MIME types are interned in *pool, its namespace's).
 * A site from base (NULL: every setting the namespace's, no rules) changed
 * as args says; an ERR_PTR:
 * -EINVAL for what does not parse (the caller checks each text first, for
 * its message, but MIME types), -E2BIG or -ENOSPC for MIME types as
 * kweb_mime_map_parse() says, -ENOMEM.
 */
struct kweb_site *kweb_site_alloc(const struct kweb_site *base,
				  const struct kweb_site_args *args,
				  struct kweb_mime_pool **pool);
void kweb_site_free(struct kweb_site *site);
/* Frees old after every reader is done with it. */
void kweb_site_free_rcu(struct kweb_site *old);

/*
 * The values a site's listener runs with, cfg its namespace's settings,
 * under rcu_read_lock() or kweb_ctl_mutex: the rules its prefixes and its
 * extensions come from.
 */
bool kweb_site_precompressed(const struct kweb_site *site,
			     const struct kweb_config *cfg);
const struct kweb_rules *kweb_site_prefixes(const struct kweb_site *site,
					    const struct kweb_config *cfg);
const struct kweb_rules *kweb_site_extensions(const struct kweb_site *site,
					      const struct kweb_config *cfg);
/* Content-Type for the path of a file the site serves. */
const char *kweb_site_mime_lookup(const struct kweb_site *site,
				  const struct kweb_config *cfg,
				  const char *path, size_t len);
/* Its MIME overrides' text, its own or the namespace's. */
const char *kweb_site_mime_text(const struct kweb_site *site,
				const struct kweb_config *cfg);

#endif /* KWEB_SITE_H */
