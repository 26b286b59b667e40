/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file cache: normalized request path and content coding -> the
 * file's pinned page-cache pages and what its response header needs (a
 * coding other than identity is a precompressed NAME.br or NAME.gz). Looked up without sleeping
 * (RCU) so softirq can answer from it; filled by the worker.
 */
#ifndef KWEB_CACHE_H
#define KWEB_CACHE_H

#include <linux/gfp.h>
#include <linux/hashtable.h>
#include <linux/path.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/time64.h>
#include <linux/workqueue.h>

#include "http_cond.h"
#include "http_date.h"
#include "http_encoding.h"

/*
 * What tells that an inode changed: its ctime, and its change counter
 * (i_version, raw). The counter is for where the ctime stays: FAT keeps
 * no times for its root directory and 2-second ones elsewhere, but counts
 * every entry made or removed in a directory (for vfat's own negative
 * dentries). A filesystem that keeps no counter leaves it as it is.
 */
struct kweb_stamp {
	struct timespec64 ctime;
	u64 version;
};

struct kweb_centry {
	struct hlist_node hnode;	/* in kweb_cache.table, RCU */
	struct list_head lru;		/* under kweb_cache.lock */
	struct rcu_head rcu;
	struct work_struct free_work;	/* the last put may be in softirq */
	refcount_t ref;			/* the table's, plus each user's */
	bool referenced;		/* CLOCK bit: hit since the last sweep */
	bool hashed;			/* in the table (under the lock) */
	u32 hash;

	/* What makes the entry valid; see kweb_centry_valid(). */
	struct path path;
	struct inode *inode;
	struct inode *data_inode;	/* whose page cache the pages are */
	struct address_space *mapping;	/* data_inode's */
	loff_t size;
	struct timespec64 ctime;
	unsigned int rename_seq;	/* rename_lock when path last checked */
	bool reval;			/* a remote file: see KWEB_CACHE_REVAL */
	unsigned long reval_at;		/* jiffies */
	/* The directories from the file's up to the docroot: their stamps. */
	struct kweb_stamp *dir_stamps;
	unsigned int nr_dirs;
	const char *rel;		/* the file below the docroot: "d/f" */
	u32 rel_len;

	/* What the response needs. */
	s64 mtime;
	const char *content_type;
	u32 mime_gen;			/* kweb_cache.mime_gen content_type had */
	char etag[KWEB_ETAG_MAX + 1];
	int etag_len;
	char last_modified[KWEB_HTTP_DATE_LEN + 1];
	/* Content-Type, Content-Length, Last-Modified for a 200; may be empty */
	struct kweb_str file_fields;
	/* All the file's pages, or none: see kweb_centry_has_body(). */
	unsigned int nr_pages;
	struct page **pages;		/* a reference on each */
	u8 variants;			/* KWEB_ENC_BIT()s of NAME's siblings */
	struct kweb_stamp dir_stamp;	/* when they were looked for */

	u8 enc;				/* the key's coding */
	u32 key_len;
	/* The normalized path, NUL-terminated; rel's, then file_fields' follow. */
	char key[];
};

#define KWEB_CACHE_BITS 10

/*
 * How long an entry of a remote file (NFS, CIFS, FUSE, 9p; overlayfs over
 * one of them) is served before the file is opened again: what changed at
 * the server shows only then.
 */
#define KWEB_CACHE_REVAL	HZ

/*
 * An entry is its listener's creator's to pay for (the worker runs in its
 * memory cgroup). At the cgroup's limit the file is served uncached
 * rather than an OOM kill for a cache.
 */
#define KWEB_CACHE_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | \
			 __GFP_NOWARN)

struct kweb_cache {
	struct path root;		/* the docroot; its server's reference */
	spinlock_t lock;		/* writers; taken in softirq too */
	DECLARE_HASHTABLE(table, KWEB_CACHE_BITS);
	struct list_head lru;		/* most recently inserted first */
	size_t bytes;			/* pinned by hashed entries */
	size_t limit;			/* under lock */
	size_t max_file;
	/* Bumped when its listener's Content-Types change: kweb_cache_retype(). */
	u32 mime_gen;
	struct kweb_stats __percpu *stats;	/* its listener's counters */
};

/* What kweb_file_variants() found beside a file, for its entries. */
struct kweb_variants {
	u8 mask;			/* KWEB_ENC_BIT()s of NAME.br, NAME.gz */
	struct kweb_stamp dir_stamp;	/* the directory's, before looking */
};

/* Why an entry left the cache, other than to make room (trace.h). */
enum kweb_cache_drop {
	KWEB_CACHE_STALE,	/* its file changed, or cannot be served now */
	KWEB_CACHE_REPLACED,	/* by a newer entry of the same key */
	KWEB_CACHE_FLUSH,	/* kwebctl cache flush, settings, a stop */
};

struct file;
struct kweb_file;
struct kweb_stats;

void kweb_cache_init(struct kweb_cache *c, const struct path *root,
		     size_t limit, size_t max_file,
		     struct kweb_stats __percpu *stats);
struct kweb_centry *kweb_cache_lookup(struct kweb_cache *c, const char *key,
				      size_t len, enum kweb_encoding enc);
struct kweb_centry *kweb_cache_fill(struct kweb_cache *c, const char *key,
				    size_t len, enum kweb_encoding enc,
				    const char *file_path, struct kweb_file *f,
				    const struct kweb_variants *v, bool pages);
void kweb_centry_put(struct kweb_centry *e);
bool kweb_cache_fits(const struct kweb_cache *c, loff_t size);
void kweb_cache_hit(struct kweb_cache *c);

/*
 * e pins the file's bytes, so a body can be sent from it; else it has
 * only the file's validators, for HEAD, 304, 416 and finding the file's
 * precompressed siblings (a file larger than the cache takes, or one
 * that no request has wanted whole yet).
 */
static inline bool kweb_centry_has_body(const struct kweb_centry *e)
{
	return e->nr_pages || !e->size;
}

/* cache_valid.c: whether an entry may still be served, in any context. */
bool kweb_page_in(const struct address_space *mapping, struct page *page,
		  pgoff_t index);
bool kweb_centry_valid(const struct kweb_cache *c, struct kweb_centry *e);
int kweb_centry_stamp(const struct kweb_cache *c, struct kweb_centry *e,
		      const struct file *filp);
bool kweb_centry_page_ok(const struct kweb_centry *e, pgoff_t index);
void kweb_stamp_take(struct inode *inode, struct kweb_stamp *s);
unsigned int kweb_cache_flush(struct kweb_cache *c);
unsigned int kweb_cache_flush_key(struct kweb_cache *c, const char *key,
				  size_t len, enum kweb_cache_drop why);
void kweb_cache_set_limits(struct kweb_cache *c, size_t limit,
			   size_t max_file);
/* Under kweb_ctl_mutex, Content-Types changed: flush, refuse fills begun. */
void kweb_cache_retype(struct kweb_cache *c);

/* Read before a file's Content-Type is looked up, for its entry. */
static inline u32 kweb_cache_mime_gen(const struct kweb_cache *c)
{
	/* Pairs with kweb_cache_retype(): the map read next is as new. */
	return smp_load_acquire(&c->mime_gen);
}

#endif /* KWEB_CACHE_H */
