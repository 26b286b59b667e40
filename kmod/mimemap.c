// SPDX-License-Identifier: GPL-2.0
/*
 * MIME overrides: ".md=text/markdown,.log=text/plain; charset=utf-8"
 * gives files with those extensions (case-insensitively, as the built-in
 * table in mime.c) those Content-Types. A map belongs to a namespace's
 * settings or to a listener's own (site.c), and goes with them; lookups
 * are made when a file is opened (process context).
 *
 * Responses and cache entries keep the Content-Type as a pointer, and may
 * outlive the map they got it from. So each distinct type string is kept
 * once, in its network namespace's pool, which lives until the namespace
 * goes, after its servers; maps point into it. The pool is bounded, and
 * so is what any number of changes costs; a namespace that fills its own
 * takes nothing from another's.
 */
#include <linux/ctype.h>
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
	char *text;			/* as given, for config-get */
	unsigned int n;
	struct kweb_mime_entry e[KWEB_MIME_OVERRIDES_MAX];
};

/* Under kweb_ctl_mutex. */
struct kweb_mime_pool {
	unsigned int n;
	const char *type[KWEB_MIME_POOL_MAX];
};

/* *pool's copy of s, the pool made on first use. */
static const char *kweb_mime_intern(struct kweb_mime_pool **pool,
				    const char *s, size_t len)
{
	struct kweb_mime_pool *p = *pool;
	unsigned int i;
	char *t;

	lockdep_assert_held(&kweb_ctl_mutex);
	if (!p) {
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		if (!p)
			return ERR_PTR(-ENOMEM);
		*pool = p;
	}
	for (i = 0; i < p->n; i++)
		if (strlen(p->type[i]) == len && !memcmp(p->type[i], s, len))
			return p->type[i];
	if (p->n == KWEB_MIME_POOL_MAX)
		return ERR_PTR(-ENOSPC);
	t = kmemdup_nul(s, len, GFP_KERNEL);
	if (!t)
		return ERR_PTR(-ENOMEM);
	p->type[p->n++] = t;
	return t;
}

void kweb_mime_pool_free(struct kweb_mime_pool *pool)
{
	unsigned int i;

	if (!pool)
		return;
	for (i = 0; i < pool->n; i++)
		kfree(pool->type[i]);
	kfree(pool);
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

struct kweb_mime_map *kweb_mime_map_parse(struct kweb_mime_pool **pool,
					  const char *text)
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
		m->e[m->n].type = kweb_mime_intern(pool, eq + 1,
						 end - eq - 1);
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

const char *kweb_mime_lookup_in(const struct kweb_mime_map *m,
				const char *path, size_t len)
{
	return kweb_mime_map_find(m, path, len) ?: kweb_mime_type(path, len);
}

const char *kweb_mime_map_text_of(const struct kweb_mime_map *m)
{
	return m->text;
}
