// SPDX-License-Identifier: GPL-2.0
/*
 * Whether a cache entry may still be served. Called from softirq and
 * process context alike: never sleeps, never waits for a lock.
 *
 * An entry is what a path named when it was filled: the file's dentry,
 * still hashed, still of the same inode, and still at the same path below
 * the docroot; and the file's bytes, the page-cache pages it pinned.
 *
 * The bytes: any write or truncation moves size or ctime, but a
 * truncation and a rewrite to the same size within one timestamp tick
 * moves neither. What the filesystem does guarantee is that truncation
 * takes the pages out of the mapping (folio->mapping becomes NULL), so
 * an entry pins only page-cache pages of one mapping, each at its own
 * index, and checks that they are still there: the last page at lookup
 * (truncation removes pages from the end, so any that removes a page
 * removes that one), and each page as it is sent. Bytes written in place
 * go into those very pages. With overlayfs the pages are the real file's,
 * which a copy-up replaces: the mapping is that of d_real_inode(), looked
 * at again at each lookup.
 *
 * The directory: an entry also says which precompressed siblings its
 * file has (NAME.br, NAME.gz); a file created in or removed from the
 * directory moves the directory's ctime, and the entry goes.
 *
 * The path: a rename anywhere moves rename_lock's sequence. The entry
 * keeps the sequence its path was last checked at; when it moved, the
 * path is checked again, walking from the dentry up to the docroot and
 * comparing each name with the path's, and the new sequence is kept, so
 * only entries a rename touched are dropped.
 */
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/seqlock.h>
#include <linux/string.h>

#include "cache.h"

/* page is the page-cache page of mapping at index. */
bool kweb_page_in(const struct address_space *mapping, struct page *page,
		  pgoff_t index)
{
	struct folio *folio = page_folio(page);

	return READ_ONCE(folio->mapping) == mapping &&
	       folio->index + folio_page_idx(folio, page) == index;
}

/* The file's size and ctime are still those the entry was read with. */
static bool kweb_centry_unchanged(const struct kweb_centry *e)
{
	struct timespec64 ctime = inode_get_ctime(e->inode);

	return i_size_read(e->inode) == e->size &&
	       timespec64_equal(&ctime, &e->ctime);
}

/*
 * No file came or went in the file's directory since its precompressed
 * siblings were looked for (a new NAME.gz is served at once). The parent
 * is read under RCU: a rename may be moving the dentry meanwhile.
 */
static bool kweb_centry_dir_unchanged(const struct kweb_centry *e)
{
	struct timespec64 ctime;
	struct inode *dir;
	bool ok;

	rcu_read_lock();
	dir = READ_ONCE(READ_ONCE(e->path.dentry->d_parent)->d_inode);
	ok = dir;
	if (ok) {
		ctime = inode_get_ctime(dir);
		ok = timespec64_equal(&ctime, &e->dir_ctime);
	}
	rcu_read_unlock();
	return ok;
}

/* The pinned page index is still the file's. */
bool kweb_centry_page_ok(const struct kweb_centry *e, pgoff_t index)
{
	return kweb_page_in(e->mapping, e->pages[index], index);
}

/*
 * rel ("d/f": no leading, trailing or double '/') names d below root:
 * every dentry from d up to root is hashed and has the name of the
 * matching component. A rename meanwhile may make the answer wrong; the
 * caller's rename_lock retry catches that. Names are read as
 * dentry_cmp() does: the pointer once, and never past its NUL.
 */
static bool kweb_dentry_named(struct dentry *d, const struct dentry *root,
			      const char *rel, size_t len)
{
	const char *end = rel + len;
	bool ok = false;

	rcu_read_lock();
	while (d != root) {
		const char *comp = end;
		const unsigned char *name;
		size_t n;

		if (end == rel || d_unhashed(d))
			goto out;
		while (comp > rel && comp[-1] != '/')
			comp--;
		n = end - comp;
		name = READ_ONCE(d->d_name.name);
		if (strncmp(name, comp, n) || name[n])
			goto out;
		end = comp > rel ? comp - 1 : rel;
		d = READ_ONCE(d->d_parent);
	}
	ok = end == rel;
out:
	rcu_read_unlock();
	return ok;
}

/* The entry may be served; e's path sequence is brought up to date. */
bool kweb_centry_valid(const struct kweb_cache *c, struct kweb_centry *e)
{
	struct dentry *d = e->path.dentry;
	unsigned int seq;

	if (d_unhashed(d) || READ_ONCE(d->d_inode) != e->inode ||
	    !kweb_centry_unchanged(e) || d_real_inode(d) != e->data_inode ||
	    !kweb_centry_dir_unchanged(e))
		return false;
	if (e->nr_pages && !kweb_centry_page_ok(e, e->nr_pages - 1))
		return false;

	seq = raw_read_seqcount(&rename_lock.seqcount);
	if (seq == READ_ONCE(e->rename_seq))
		return true;
	/*
	 * A rename in flight may be one softirq interrupted on this CPU:
	 * never wait for it; the entry goes, and is filled again.
	 */
	if ((seq & 1) ||
	    !kweb_dentry_named(d, c->root.dentry, e->rel, e->rel_len) ||
	    read_seqretry(&rename_lock, seq))
		return false;
	WRITE_ONCE(e->rename_seq, seq);
	return true;
}
