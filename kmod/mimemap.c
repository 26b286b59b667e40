// SPDX-License-Identifier: GPL-2.0
/*
 * MIME overrides: ".md=text/markdown,.log=text/plain; charset=utf-8"
 * gives files with those extensions (case-insensitively, as the built-in
 * table in mime.c) those Content-Types. The map is one RCU-protected
 * object, replaced whole by config-set; lookups are made when a file is
 * opened (process context).
 *
 * Responses and cache entries keep the Content-Type as a pointer, and may
 * outlive the map they got it from. So each distinct type string is kept
 * once, in a pool that lives until the module goes, and maps point into
 * it; the pool is bounded, and so is what any number of changes costs.
 */
#include <linux/ctype.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <uapi/linux/kweb.h>

#include "kweb.h"
#include "mime.h"
#include "mimemap.h"

#define KWEB_MIME_EXT_MAX 15	/* ".woff2" and longer, with the dot */
#define KWEB_MIME_TYPE_MAX 63
#define KWEB_MIME_POOL_MAX 256

struct kweb_mime_entry {
	char ext[KWEB_MIME_EXT_MAX + 1];	/* lower case, with the dot */
	const char *type;			/* in the pool */
};

struct kweb_mime_map {
	struct rcu_head rcu;
	char *text;			/* as given, for config-get */
	unsigned int n;
	struct kweb_mime_entry e[KWEB_MIME_OVERRIDES_MAX];
};

static struct kweb_mime_map __rcu *kweb_mime_cur;

/* Under kweb_ctl_mutex. */
static const char *kweb_mime_pool[KWEB_MIME_POOL_MAX];
static unsigned int kweb_mime_pool_n;

static const char *kweb_mime_intern(const char *s, size_t len)
{
	unsigned int i;
	char *p;

	lockdep_assert_held(&kweb_ctl_mutex);
	for (i = 0; i < kweb_mime_pool_n; i++)
		if (strlen(kweb_mime_pool[i]) == len &&
		    !memcmp(kweb_mime_pool[i], s, len))
			return kweb_mime_pool[i];
	if (kweb_mime_pool_n == KWEB_MIME_POOL_MAX)
		return ERR_PTR(-ENOSPC);
	p = kmemdup_nul(s, len, GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	kweb_mime_pool[kweb_mime_pool_n++] = p;
	return p;
}

/*
 * A Content-Type value: "type/subtype", then parameters after ';'. Visible
 * ASCII and spaces only, so it can never break the header; no ',' (the
 * list separator), and no '=' before the parameters.
 */
static bool kweb_mime_type_ok(const char *s, size_t len)
{
	const char *semi = memchr(s, ';', len);
	size_t i, head = semi ? semi - s : len;

	if (!len || len > KWEB_MIME_TYPE_MAX || s[0] == '/' ||
	    s[len - 1] == ' ' || !memchr(s, '/', head) || memchr(s, '=', head))
		return false;
	for (i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == ',')
			return false;
	return true;
}

static bool kweb_mime_ext_ok(const char *s, size_t len)
{
	size_t i;

	if (len < 2 || len > KWEB_MIME_EXT_MAX || s[0] != '.')
		return false;
	for (i = 1; i < len; i++)
		if (!isalnum(s[i]) && s[i] != '-' && s[i] != '_' &&
		    s[i] != '+')
			return false;
	return true;
}

void kweb_mime_map_free(struct kweb_mime_map *m)
{
	if (m)
		kfree(m->text);
	kfree(m);
}

struct kweb_mime_map *kweb_mime_map_parse(const char *text)
{
	struct kweb_mime_map *m = kzalloc(sizeof(*m), GFP_KERNEL);
	const char *s = text, *end, *eq;
	int err = -EINVAL;
	size_t len, i;

	lockdep_assert_held(&kweb_ctl_mutex);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->text = kstrdup(text, GFP_KERNEL);
	if (!m->text) {
		err = -ENOMEM;
		goto fail;
	}
	while (*s) {
		end = strchrnul(s, ',');
		len = end - s;
		eq = memchr(s, '=', len);
		if (!eq || !kweb_mime_ext_ok(s, eq - s) ||
		    !kweb_mime_type_ok(eq + 1, end - eq - 1))
			goto fail;
		if (m->n == KWEB_MIME_OVERRIDES_MAX) {
			err = -E2BIG;
			goto fail;
		}
		for (i = 0; i < eq - s; i++)
			m->e[m->n].ext[i] = tolower(s[i]);
		m->e[m->n].type = kweb_mime_intern(eq + 1, end - eq - 1);
		if (IS_ERR(m->e[m->n].type)) {
			err = PTR_ERR(m->e[m->n].type);
			goto fail;
		}
		m->n++;
		if (!*end)
			break;
		s = end + 1;
		/* "a,": an empty last entry is an error, not the end. */
		if (!*s)
			goto fail;
	}
	return m;
fail:
	kweb_mime_map_free(m);
	return ERR_PTR(err);
}

static void kweb_mime_map_free_rcu(struct rcu_head *head)
{
	kweb_mime_map_free(container_of(head, struct kweb_mime_map, rcu));
}

static u32 kweb_mime_gen;

u32 kweb_mime_generation(void)
{
	/* Pairs with the release below: the map read next is as new. */
	return smp_load_acquire(&kweb_mime_gen);
}

void kweb_mime_map_replace(struct kweb_mime_map *m)
{
	struct kweb_mime_map *old;

	old = rcu_replace_pointer(kweb_mime_cur, m,
				  lockdep_is_held(&kweb_ctl_mutex));
	/* Pairs with kweb_mime_generation(): whoever sees it sees m. */
	smp_store_release(&kweb_mime_gen, kweb_mime_gen + 1);
	if (old)
		call_rcu(&old->rcu, kweb_mime_map_free_rcu);
}

const char *kweb_mime_map_text(void)
{
	const struct kweb_mime_map *m;

	m = rcu_dereference_check(kweb_mime_cur,
				  lockdep_is_held(&kweb_ctl_mutex));
	return m ? m->text : "";
}

/* m's override for path's extension, or NULL. */
static const char *kweb_mime_map_find(const struct kweb_mime_map *m,
				      const char *path, size_t len)
{
	size_t dot = kweb_mime_ext(path, len), n = len - dot + 1;
	unsigned int i;

	if (!m || dot >= len || n > KWEB_MIME_EXT_MAX)
		return NULL;
	for (i = 0; i < m->n; i++)
		if (!strncasecmp(m->e[i].ext, path + dot - 1, n) &&
		    !m->e[i].ext[n])
			return m->e[i].type;
	return NULL;
}

const char *kweb_mime_lookup(const char *path, size_t len)
{
	const char *type;

	rcu_read_lock();
	type = kweb_mime_map_find(rcu_dereference(kweb_mime_cur), path, len);
	rcu_read_unlock();
	/* A pool string lives as long as the module: no reference needed. */
	return type ?: kweb_mime_type(path, len);
}

const char *kweb_mime_lookup_in(const struct kweb_mime_map *m,
				const char *path, size_t len)
{
	return kweb_mime_map_find(m, path, len) ?: kweb_mime_type(path, len);
}

const char *kweb_mime_map_text_of(const struct kweb_mime_map *m)
{
	return m->text;
}

void kweb_mime_generation_bump(void)
{
	lockdep_assert_held(&kweb_ctl_mutex);
	/* As kweb_mime_map_replace(): fills begun before are not inserted. */
	smp_store_release(&kweb_mime_gen, kweb_mime_gen + 1);
}

/* After every server is gone. */
void kweb_mime_exit(void)
{
	struct kweb_mime_map *m;
	unsigned int i;

	m = rcu_replace_pointer(kweb_mime_cur, NULL, true);
	/* The mime_types parameter stays readable while the module exits. */
	synchronize_rcu();
	kweb_mime_map_free(m);
	rcu_barrier();
	for (i = 0; i < kweb_mime_pool_n; i++)
		kfree(kweb_mime_pool[i]);
	kweb_mime_pool_n = 0;
}
