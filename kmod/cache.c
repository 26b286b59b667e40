// SPDX-License-Identifier: GPL-2.0
/*
 * The file cache. Entries pin a file's page-cache pages and hold what its
 * response header needs; they are found under RCU, so softirq can answer
 * from them, and filled by the worker on a miss.
 *
 * An entry is used only while nothing it depends on changed (see
 * cache_valid.c): its path still names the same file, whose bytes are
 * still those of the pages it pinned. Paths that go through a symlink or
 * cross a mount are not cached at all. A stale entry is dropped at its
 * next lookup and the request goes to the worker.
 *
 * An entry pins all of its file's pages, read in by a GET of the whole
 * file, or none (then it serves HEAD, 304 and finding variants). Memory
 * is bounded by what hashed entries count (their pages, at least one
 * each); no file larger than the whole cache is ever read into one.
 * Eviction is CLOCK over an insertion-ordered list, so a hit only sets
 * a bit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/jhash.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/slab.h>

#include "cache.h"
#include "kweb.h"
#include "response.h"
#include "trace.h"

atomic_long_t kweb_cache_pinned = ATOMIC_LONG_INIT(0);

void kweb_cache_init(struct kweb_cache *c, const struct path *root,
		     size_t limit, size_t max_file,
		     struct kweb_stats __percpu *stats)
{
	c->root = *root;
	spin_lock_init(&c->lock);
	hash_init(c->table);
	INIT_LIST_HEAD(&c->lru);
	c->limit = limit;
	c->max_file = max_file;
	c->stats = stats;
}

/* The page-cache bytes e pins. */
static size_t kweb_centry_pinned(const struct kweb_centry *e)
{
	return (size_t)e->nr_pages << PAGE_SHIFT;
}

/*
 * What e counts against the cache's limit: its pages, and at least one
 * page, so that entries without (metadata, empty files) are bounded too.
 */
static size_t kweb_centry_bytes(const struct kweb_centry *e)
{
	return max_t(size_t, kweb_centry_pinned(e), PAGE_SIZE);
}

/*
 * The largest file whose pages an entry may pin: cache_max_file, but
 * never more than the whole cache, whatever the settings say (a larger
 * one would be read, pinned and thrown away at insert).
 */
bool kweb_cache_fits(const struct kweb_cache *c, loff_t size)
{
	size_t max = min(READ_ONCE(c->max_file), READ_ONCE(c->limit));

	return size >= 0 && round_up((u64)size, PAGE_SIZE) <= max;
}

void kweb_cache_hit(struct kweb_cache *c)
{
	kweb_stat_add(c->stats, KWEB_STAT_CACHE_HITS, 1);
}

static void kweb_centry_free_work(struct work_struct *work)
{
	struct kweb_centry *e = container_of(work, struct kweb_centry,
					     free_work);
	unsigned int i;

	for (i = 0; i < e->nr_pages; i++)
		put_page(e->pages[i]);
	atomic_long_sub(kweb_centry_pinned(e), &kweb_cache_pinned);
	kvfree(e->pages);
	kfree(e->dir_stamps);
	if (e->data_inode)
		iput(e->data_inode);
	if (e->inode)
		iput(e->inode);
	path_put(&e->path);
	/* Lookups may still be reading the key under RCU. */
	kfree_rcu(e, rcu);
}

/* Any context: the last reference may be dropped in softirq. */
void kweb_centry_put(struct kweb_centry *e)
{
	if (refcount_dec_and_test(&e->ref))
		queue_work(kweb_wq, &e->free_work);
}

/* Under c->lock. */
static void kweb_cache_unhash(struct kweb_cache *c, struct kweb_centry *e)
{
	hash_del_rcu(&e->hnode);
	list_del(&e->lru);
	e->hashed = false;
	c->bytes -= kweb_centry_bytes(e);
	kweb_centry_put(e);
}

static void kweb_cache_invalidate(struct kweb_cache *c, struct kweb_centry *e)
{
	spin_lock_bh(&c->lock);
	if (e->hashed) {
		trace_kweb_cache_invalidate(c, e, KWEB_CACHE_STALE);
		kweb_cache_unhash(c, e);
		kweb_stat_add(c->stats, KWEB_STAT_CACHE_INVALIDATIONS, 1);
	}
	spin_unlock_bh(&c->lock);
}

/* A key is a request path and a coding: each its own representation. */
static u32 kweb_cache_hash(const char *key, size_t len,
			   enum kweb_encoding enc)
{
	return jhash(key, len, enc);
}

static bool kweb_centry_is(const struct kweb_centry *e, const char *key,
			   size_t len, enum kweb_encoding enc)
{
	return e->key_len == len && e->enc == enc && !memcmp(e->key, key, len);
}

/*
 * Any context. Returns a valid entry with a reference, or NULL. The
 * caller counts a hit (kweb_cache_hit()) if it answers from the entry,
 * and the worker a miss when it goes to the file: an entry without the
 * file's pages may be found and still not do for a GET.
 */
struct kweb_centry *kweb_cache_lookup(struct kweb_cache *c, const char *key,
				      size_t len, enum kweb_encoding enc)
{
	u32 hash = kweb_cache_hash(key, len, enc);
	struct kweb_centry *e;

	kweb_rcu_lock();
	hash_for_each_possible_rcu(c->table, e, hnode, hash) {
		if (e->hash != hash || !kweb_centry_is(e, key, len, enc))
			continue;
		if (!refcount_inc_not_zero(&e->ref))
			break;
		kweb_rcu_unlock();
		if (!kweb_centry_valid(c, e)) {
			kweb_cache_invalidate(c, e);
			kweb_centry_put(e);
			goto miss;
		}
		if (!READ_ONCE(e->referenced))
			WRITE_ONCE(e->referenced, true);
		return e;
	}
	kweb_rcu_unlock();
miss:
	return NULL;
}

/* Under c->lock: evict until need more bytes fit, sparing recent hits. */
static void kweb_cache_make_room(struct kweb_cache *c, size_t need)
{
	unsigned int spared = 0;

	while (c->bytes + need > c->limit && !list_empty(&c->lru)) {
		struct kweb_centry *e = list_last_entry(&c->lru,
							struct kweb_centry,
							lru);

		if (READ_ONCE(e->referenced) && spared++ < 1024) {
			WRITE_ONCE(e->referenced, false);
			list_move(&e->lru, &c->lru);
			continue;
		}
		trace_kweb_cache_evict(c, e);
		kweb_cache_unhash(c, e);
		kweb_stat_add(c->stats, KWEB_STAT_CACHE_EVICTIONS, 1);
	}
}

static void kweb_cache_insert(struct kweb_cache *c, struct kweb_centry *e)
{
	struct kweb_centry *old;
	struct hlist_node *tmp;

	spin_lock_bh(&c->lock);
	hash_for_each_possible_safe(c->table, old, tmp, hnode, e->hash)
		if (kweb_centry_is(old, e->key, e->key_len, e->enc)) {
			trace_kweb_cache_invalidate(c, old,
						    KWEB_CACHE_REPLACED);
			kweb_cache_unhash(c, old);
		}
	/*
	 * Not if the MIME map changed since e's type was looked up: the
	 * change's flush may have run already. Under c->lock, which the
	 * flush takes after the new generation is published.
	 */
	if (kweb_centry_bytes(e) <= c->limit &&
	    (!e->nr_pages || kweb_cache_fits(c, e->size)) &&
	    e->mime_gen == READ_ONCE(c->mime_gen)) {
		kweb_cache_make_room(c, kweb_centry_bytes(e));
		refcount_inc(&e->ref);
		e->hashed = true;
		c->bytes += kweb_centry_bytes(e);
		hash_add_rcu(c->table, &e->hnode, e->hash);
		list_add(&e->lru, &c->lru);
		trace_kweb_cache_fill(c, e);
	}
	spin_unlock_bh(&c->lock);
}

/* Pages read at a time while filling an entry. */
#define KWEB_FILL_BATCH 16

/*
 * Pin the page of bv, at file position pos, as the entry's page at its
 * index. Only page-cache pages of e->mapping at their own index may be
 * (see cache_valid.c): not copies nor the zero page, whose truncation
 * nothing would tell.
 */
static int kweb_centry_take(struct kweb_centry *e, const struct bio_vec *bv,
			    loff_t pos)
{
	pgoff_t index = pos >> PAGE_SHIFT;

	if (bv->bv_offset != offset_in_page(pos) ||
	    !kweb_page_in(e->mapping, bv->bv_page, index))
		return -EOPNOTSUPP;
	if (index < e->nr_pages)	/* more of a page already pinned */
		return e->pages[index] == bv->bv_page ? 0 : -EOPNOTSUPP;
	if (index != e->nr_pages)
		return -EOPNOTSUPP;
	get_page(bv->bv_page);
	e->pages[index] = bv->bv_page;
	e->nr_pages = index + 1;
	atomic_long_add(PAGE_SIZE, &kweb_cache_pinned);
	return 0;
}

/* Pin every page of the file f into e. */
static int kweb_centry_read(struct kweb_centry *e, struct kweb_file *f)
{
	struct bio_vec bv[KWEB_FILL_BATCH];
	struct kweb_pages pg = { .bv = bv, .max = ARRAY_SIZE(bv) };
	loff_t pos = 0;
	int err = 0;

	while (!err && pos < e->size) {
		size_t want = min_t(loff_t, e->size - pos,
				    ARRAY_SIZE(bv) * PAGE_SIZE -
				    offset_in_page(pos));
		ssize_t n = kweb_file_read_pages(f, pos, want, &pg);
		unsigned int i;

		if (n <= 0)
			return n ? n : -EIO;
		for (i = 0; i < pg.nr && !err; i++) {
			err = kweb_centry_take(e, &bv[i], pos);
			pos += bv[i].bv_len;
		}
		kweb_pages_release(&pg);
	}
	return err;
}

/*
 * d's file may change at a server with nothing moving here until asked:
 * its server renames in it (FS_RENAME_DOES_D_MOVE: NFS, CIFS, 9p, Ceph,
 * AFS, OCFS2), which covers 9p without a cache, whose dentries say
 * nothing; or the VFS revalidates its dentries at each walk (FUSE, and
 * overlayfs over such a layer: ovl_dentry_remote()). A filesystem on a
 * disk of its own revalidates only names, not files: the negative
 * dentries that a case-folding lookup may have left (vfat, exfat, jfs,
 * ext4 and f2fs casefolding). Not so fuseblk (ntfs-3g), whose files are
 * its server's, nor gfs2, whose disk other nodes write.
 */
static bool kweb_file_remote(const struct dentry *d)
{
	const struct super_block *sb = d->d_sb;
	int fs_flags = sb->s_type->fs_flags;

	if (fs_flags & FS_RENAME_DOES_D_MOVE)
		return true;
	if (!(d->d_flags & (DCACHE_OP_REVALIDATE | DCACHE_OP_WEAK_REVALIDATE)))
		return false;
	return !(fs_flags & FS_REQUIRES_DEV) ||
	       (sb->s_iflags & SB_I_IMA_UNVERIFIABLE_SIGNATURE) ||
	       !strcmp(sb->s_type->name, "gfs2");
}

/*
 * Process context: make an entry for the open file f, served for key
 * (the normalized request path) in coding enc and found at file_path
 * (the same, or key's index.html; then a suffix for a precompressed
 * file), whose directory had the files v says, and insert it. With
 * pages, and if the file fits (kweb_cache_fits()), the entry pins all of
 * the file's pages, read in first; else it holds only what a response
 * header needs (kweb_centry_has_body() says which). The size is checked
 * before anything is read. Returns the entry with a reference for the
 * caller, or NULL when the file is not cacheable or changed while it
 * was read.
 */
struct kweb_centry *kweb_cache_fill(struct kweb_cache *c, const char *key,
				    size_t len, enum kweb_encoding enc,
				    const char *file_path, struct kweb_file *f,
				    const struct kweb_variants *v, bool pages)
{
	unsigned int nr = 0;
	const char *rel = file_path + 1;	/* below the docroot */
	size_t rel_len = strlen(rel);
	char lm[KWEB_HTTP_DATE_LEN + 1], fields[KWEB_FILE_FIELDS_MAX];
	struct kweb_centry *e;
	int flen;
	char *p;

	/* A path crossing a mount may change with no rename: not cached. */
	if (f->via_symlink || (f->rename_seq & 1) ||
	    f->filp->f_path.mnt != c->root.mnt)
		return NULL;
	if (pages && kweb_cache_fits(c, f->size))
		nr = DIV_ROUND_UP(f->size, PAGE_SIZE);
	kweb_http_date_format(f->mtime, lm);
	flen = kweb_resp_file_fields(fields, sizeof(fields), f->content_type,
				     f->size, lm);
	/* A Content-Type too long for the room: each 200 formats its own. */
	flen = max(flen, 0);
	e = kzalloc(struct_size(e, key, len + 1 + rel_len + 1 + flen),
		    KWEB_CACHE_GFP);
	if (!e)
		return NULL;
	if (nr) {
		e->pages = kvcalloc(nr, sizeof(*e->pages), KWEB_CACHE_GFP);
		if (!e->pages) {
			kfree(e);
			return NULL;
		}
	}
	refcount_set(&e->ref, 1);
	INIT_WORK(&e->free_work, kweb_centry_free_work);
	e->path = f->filp->f_path;
	path_get(&e->path);
	e->reval = kweb_file_remote(e->path.dentry);
	e->reval_at = jiffies + KWEB_CACHE_REVAL;
	e->inode = file_inode(f->filp);
	ihold(e->inode);
	/* overlayfs: the real file's, whose pages its splice_read gives. */
	e->data_inode = d_real_inode(e->path.dentry);
	ihold(e->data_inode);
	e->mapping = e->data_inode->i_mapping;
	e->size = f->size;
	e->ctime = f->ctime;
	e->rename_seq = f->rename_seq;
	e->mtime = f->mtime;
	e->content_type = f->content_type;
	e->mime_gen = f->mime_gen;
	e->etag_len = kweb_etag_format(e->etag, f->mtime, f->size);
	memcpy(e->last_modified, lm, sizeof(lm));
	e->variants = v->mask;
	e->dir_stamp = v->dir_stamp;
	e->enc = enc;
	e->key_len = len;
	memcpy(e->key, key, len);
	e->hash = kweb_cache_hash(key, len, enc);
	p = e->key + len + 1;
	memcpy(p, rel, rel_len);
	e->rel = p;
	e->rel_len = rel_len;
	p += rel_len + 1;
	memcpy(p, fields, flen);
	e->file_fields.p = p;
	e->file_fields.len = flen;

	if ((nr && (kweb_centry_read(e, f) || e->nr_pages != nr)) ||
	    kweb_centry_stamp(c, e, f->filp) || !kweb_centry_valid(c, e))
		goto drop;
	kweb_cache_insert(c, e);
	return e;
drop:
	kweb_centry_put(e);
	return NULL;
}

/*
 * Drop every entry; their pages are let go once the responses sending
 * from them are done. Returns how many there were.
 */
unsigned int kweb_cache_flush(struct kweb_cache *c)
{
	struct kweb_centry *e, *tmp;
	unsigned int n = 0;

	spin_lock_bh(&c->lock);
	list_for_each_entry_safe(e, tmp, &c->lru, lru) {
		trace_kweb_cache_invalidate(c, e, KWEB_CACHE_FLUSH);
		kweb_cache_unhash(c, e);
		n++;
	}
	spin_unlock_bh(&c->lock);
	return n;
}

/*
 * Drop the entries for key (a normalized path): its file and its
 * precompressed ones, why says for the tracepoint. Returns how many
 * there were.
 */
unsigned int kweb_cache_flush_key(struct kweb_cache *c, const char *key,
				  size_t len, enum kweb_cache_drop why)
{
	struct kweb_centry *e;
	struct hlist_node *tmp;
	unsigned int n = 0;
	int enc;

	spin_lock_bh(&c->lock);
	for (enc = 0; enc <= KWEB_ENC_IDENTITY; enc++) {
		u32 hash = kweb_cache_hash(key, len, enc);

		hash_for_each_possible_safe(c->table, e, tmp, hnode, hash)
			if (kweb_centry_is(e, key, len, enc)) {
				trace_kweb_cache_invalidate(c, e, why);
				kweb_cache_unhash(c, e);
				n++;
			}
	}
	spin_unlock_bh(&c->lock);
	return n;
}

/* New bounds; a smaller limit evicts at once. */
void kweb_cache_set_limits(struct kweb_cache *c, size_t limit,
			   size_t max_file)
{
	spin_lock_bh(&c->lock);
	WRITE_ONCE(c->limit, limit);
	WRITE_ONCE(c->max_file, max_file);
	kweb_cache_make_room(c, 0);
	spin_unlock_bh(&c->lock);
}

void kweb_cache_retype(struct kweb_cache *c)
{
	lockdep_assert_held(&kweb_ctl_mutex);
	/* Pairs with kweb_file_open()'s acquire: a newer type goes with it. */
	smp_store_release(&c->mime_gen, c->mime_gen + 1);
	kweb_cache_flush(c);
}
