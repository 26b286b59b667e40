/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MIME overrides: extension -> Content-Type, a namespace's (config-set) or
 * a listener's own (listener-set).
 */
#ifndef KWEB_MIMEMAP_H
#define KWEB_MIMEMAP_H

#include <linux/types.h>

#define KWEB_MIME_OVERRIDES_MAX 32

struct kweb_mime_map;
struct kweb_mime_pool;

/*
 * Under kweb_ctl_mutex. A map from ".ext=type/subtype,..." ("" for none)
 * whose types are interned in *pool (made if NULL); an ERR_PTR: -EINVAL
 * for a bad entry, -E2BIG for more than KWEB_MIME_OVERRIDES_MAX, -ENOSPC
 * when the pool holds as many distinct types as it may, -ENOMEM.
 */
struct kweb_mime_map *kweb_mime_map_parse(struct kweb_mime_pool **pool,
					  const char *text);
void kweb_mime_map_free(struct kweb_mime_map *m);
/* Content-Type for a path: m's overrides (m may be NULL), then mime.c's. */
const char *kweb_mime_lookup_in(const struct kweb_mime_map *m,
				const char *path, size_t len);
const char *kweb_mime_map_text_of(const struct kweb_mime_map *m);
/* Once no map, cache entry or response points into it. */
void kweb_mime_pool_free(struct kweb_mime_pool *pool);

#endif /* KWEB_MIMEMAP_H */
