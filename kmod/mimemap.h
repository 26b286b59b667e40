/* SPDX-License-Identifier: GPL-2.0 */
/* MIME overrides: extension -> Content-Type, set by config-set. */
#ifndef KWEB_MIMEMAP_H
#define KWEB_MIMEMAP_H

#include <linux/types.h>

#define KWEB_MIME_OVERRIDES_MAX 32

struct kweb_mime_map;

/*
 * Under kweb_ctl_mutex. A map from ".ext=type/subtype,..." ("" for none);
 * an ERR_PTR: -EINVAL for a bad entry, -E2BIG for more than
 * KWEB_MIME_OVERRIDES_MAX, -ENOSPC when too many distinct types have been
 * given since the module was loaded, -ENOMEM.
 */
struct kweb_mime_map *kweb_mime_map_parse(const char *text);
void kweb_mime_map_free(struct kweb_mime_map *m);
/* Under kweb_ctl_mutex: takes m over; the old map goes after RCU. */
void kweb_mime_map_replace(struct kweb_mime_map *m);
/* Under kweb_ctl_mutex or rcu_read_lock(). */
const char *kweb_mime_map_text(void);
/*
 * Content-Type for a path: the overrides, then mime.c's table. Read
 * kweb_mime_generation() first: a cache entry made with a type from an
 * older map than the one in force is not inserted (see kweb_cache_fill()).
 */
const char *kweb_mime_lookup(const char *path, size_t len);
/* The same with m's overrides (a listener's own) instead of config's. */
const char *kweb_mime_lookup_in(const struct kweb_mime_map *m,
				const char *path, size_t len);
const char *kweb_mime_map_text_of(const struct kweb_mime_map *m);
/* Under kweb_ctl_mutex, after a listener's own map changed. */
void kweb_mime_generation_bump(void);
/* Bumped by each kweb_mime_map_replace(), after the new map is in place. */
u32 kweb_mime_generation(void);
void kweb_mime_exit(void);

#endif /* KWEB_MIMEMAP_H */
