// SPDX-License-Identifier: GPL-2.0
/*
 * A listener's own settings (site.h). A site is never changed in place:
 * listener-set makes a new one from the old and publishes it with RCU,
 * so the data path reads one consistent set without a lock.
 */
#include <linux/err.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kweb.h"
#include "mimemap.h"
#include "site.h"

void kweb_site_free(struct kweb_site *site)
{
	if (!site)
		return;
	kweb_rules_free(site->rules);
	kweb_mime_map_free(site->mime);
	kfree(site->cache_control);
	kfree(site->error_pages);
	kfree(site);
}

static void kweb_site_free_rcu_cb(struct rcu_head *head)
{
	kweb_site_free(container_of(head, struct kweb_site, rcu));
}

void kweb_site_free_rcu(struct kweb_site *old)
{
	if (old)
		call_rcu(&old->rcu, kweb_site_free_rcu_cb);
}

/* A list of base's own, or of args', or none (then the namespace's). */
static const char *kweb_site_list(const struct kweb_site *site,
				  const struct kweb_site_args *args,
				  u32 which, const char *given,
				  const char *had)
{
	if (site->inherit & which)
		return "";
	return args->own & which ? given : had;
}

struct kweb_site *kweb_site_alloc(const struct kweb_site *base,
				  const struct kweb_site_args *args,
				  struct kweb_mime_pool **pool)
{
	struct kweb_site *site = kzalloc(sizeof(*site), GFP_KERNEL);
	const char *text;	/* the new one, or base's */
	int err;

	if (!site)
		return ERR_PTR(-ENOMEM);
	if (base) {
		site->inherit = base->inherit;
		site->precompressed = base->precompressed;
		site->expires = base->expires;
		site->vhosts = base->vhosts;
		strscpy(site->vhost_default, base->vhost_default,
			sizeof(site->vhost_default));
		site->hsts = base->hsts;
		site->hsts_subdomains = base->hsts_subdomains;
		site->https_redirect = base->https_redirect;
		site->backend_uid = base->backend_uid;
	} else {
		site->inherit = KWEB_SITE_INHERITABLE;
		site->backend_uid = INVALID_UID;
		strscpy(site->vhost_default, "default",
			sizeof(site->vhost_default));
	}
	if (args->vhosts >= 0)
		site->vhosts = args->vhosts;
	if (args->vhost_default)
		strscpy(site->vhost_default, args->vhost_default,
			sizeof(site->vhost_default));
	site->inherit = (site->inherit | args->inherit) & ~args->own;
	if (args->own & KWEB_SETTING_PRECOMPRESSED)
		site->precompressed = args->precompressed;
	if (args->expires >= 0)
		site->expires = args->expires;
	if (args->hsts >= 0)
		site->hsts = args->hsts;
	if (args->hsts_subdomains >= 0)
		site->hsts_subdomains = args->hsts_subdomains;
	if (args->https_redirect >= 0)
		site->https_redirect = args->https_redirect;
	if (args->set_backend_uid)
		site->backend_uid = args->backend_uid;

	site->rules = kweb_rules_alloc(kweb_site_list(site, args,
						      KWEB_SETTING_DYNAMIC_PREFIXES,
						      args->prefixes,
						      base ? base->rules->prefixes : ""),
				       kweb_site_list(site, args,
						      KWEB_SETTING_DYNAMIC_EXTENSIONS,
						      args->extensions,
						      base ? base->rules->extensions : ""));
	if (IS_ERR(site->rules)) {
		err = PTR_ERR(site->rules);
		site->rules = NULL;
		goto fail;
	}
	/* Its own map, or a new copy of base's (a site owns its map). */
	if (!(site->inherit & KWEB_SETTING_MIME_TYPES)) {
		text = args->own & KWEB_SETTING_MIME_TYPES ? args->mime_types :
		     base && base->mime ? kweb_mime_map_text_of(base->mime) :
		     "";
		site->mime = kweb_mime_map_parse(pool, text);
		if (IS_ERR(site->mime)) {
			err = PTR_ERR(site->mime);
			site->mime = NULL;
			goto fail;
		}
	}
	text = args->cache_control ?: (base ? base->cache_control : "");
	err = -ENOMEM;
	site->cache_control = kstrdup(text, GFP_KERNEL);
	if (!site->cache_control)
		goto fail;
	err = kweb_cache_rules_parse(&site->cache_rules, site->cache_control);
	if (err)
		goto fail;
	text = args->error_pages ?: (base ? base->error_pages : "");
	err = -ENOMEM;
	site->error_pages = kstrdup(text, GFP_KERNEL);
	if (!site->error_pages)
		goto fail;
	err = kweb_error_pages_parse(&site->pages, site->error_pages);
	if (err)
		goto fail;
	return site;
fail:
	kweb_site_free(site);
	return ERR_PTR(err);
}

const char *kweb_site_mime_lookup(const struct kweb_site *site,
				  const struct kweb_config *cfg,
				  const char *path, size_t len)
{
	return kweb_mime_lookup_in(site->inherit & KWEB_SETTING_MIME_TYPES ?
				   cfg->mime : site->mime, path, len);
}

const char *kweb_site_mime_text(const struct kweb_site *site,
				const struct kweb_config *cfg)
{
	const struct kweb_mime_map *m = site->inherit &
					KWEB_SETTING_MIME_TYPES ?
					cfg->mime : site->mime;

	return m ? kweb_mime_map_text_of(m) : "";
}

bool kweb_site_host_ok(const char *name)
{
	char dir[KWEB_HOST_MAX + 1];
	size_t len = strlen(name);

	return len <= KWEB_HOST_MAX && kweb_host_dir(name, len, dir) > 0 &&
	       !strcmp(dir, name);
}

bool kweb_site_precompressed(const struct kweb_site *site,
			     const struct kweb_config *cfg)
{
	if (site->inherit & KWEB_SETTING_PRECOMPRESSED)
		return cfg->precompressed;
	return site->precompressed;
}

const struct kweb_rules *kweb_site_prefixes(const struct kweb_site *site,
					    const struct kweb_config *cfg)
{
	if (site->inherit & KWEB_SETTING_DYNAMIC_PREFIXES)
		return cfg->rules;
	return site->rules;
}

const struct kweb_rules *kweb_site_extensions(const struct kweb_site *site,
					      const struct kweb_config *cfg)
{
	if (site->inherit & KWEB_SETTING_DYNAMIC_EXTENSIONS)
		return cfg->rules;
	return site->rules;
}
