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
 * directory moves the directory's stamp (its ctime, or on FAT its change
 * counter: struct kweb_stamp), and the entry goes.
 *
 * The way there: whether kweb's identity may reach the file depends on
 * every directory from the file's up to the docroot (search permission,
 * from mode, owner, ACL or security label) and on what is mounted on
 * them. A change of any of those moves the directory's ctime (chmod,
 * chown, setfacl and setxattr all do), so the entry keeps each
 * directory's stamp, taken at fill under the directory's lock together
 * with a fresh permission check; a hit walks d_parent up to the docroot
 * comparing them, a few cache lines a level, with no lock and no lookup.
 * A mount shows as d_mountpoint(): an entry whose file or directories
 * (the docroot apart) are mount points, in any mount namespace, is not
 * kept. The cost: a file created or removed in any of those directories
 * drops the entries below it too, until they are filled again.
 *
 * A ctime tells a change only from a later timestamp tick: a chmod in
 * the tick of the last change sets the very same ctime. So a stamp taken
 * in that tick (racy, as git calls an index entry written in the second
 * its file changed) is not kept: the file is served from itself, and a
 * request after the tick fills the entry.
 *
 * A remote file (NFS, CIFS, FUSE, 9p: kweb_file_remote()) changes at its
 * server with nothing moving here until the client asks: the VFS
 * revalidates its dentries at each walk, and open() checks the file with
 * the server (NFS's close-to-open consistency), which a hit skips. So such an entry is
 * served for KWEB_CACHE_REVAL only, then goes and the file is opened
 * again: a change made at the server is served within that second.
 *
 * The path: a rename anywhere moves rename_lock's sequence. The entry
 * keeps the sequence its path was last checked at; when it moved, the
 * path is checked again, walking from the dentry up to the docroot and
 * comparing each name with the path's, and the new sequence is kept, so
 * only entries a rename touched are dropped.
 */
#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/iversion.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "cache.h"
#include "compat.h"
#include "kweb_rcu.h"

/* page is the page-cache page of mapping at index. */
bool kweb_page_in(const struct address_space *mapping, struct page *page,
		  pgoff_t index)
{
	struct folio *folio = page_folio(page);

	return READ_ONCE(folio->mapping) == mapping &&
	       folio->index + folio_page_idx(folio, page) == index;
}

/*
 * inode's stamp, in process context. The counter is read first, and
 * queried where the filesystem bumps it only for a reader (SB_I_VERSION):
 * a change after it moves the counter, or the ctime read after.
 */
void kweb_stamp_take(struct inode *inode, struct kweb_stamp *s)
{
	if (IS_I_VERSION(inode))
		inode_query_iversion(inode);
	s->version = inode_peek_iversion_raw(inode);
	s->ctime = inode_get_ctime(inode);
}

/* inode's stamp is still s; in any context. */
static bool kweb_stamp_same(const struct inode *inode,
			    const struct kweb_stamp *s)
{
	struct timespec64 ctime = inode_get_ctime(inode);

	return timespec64_equal(&ctime, &s->ctime) &&
	       inode_peek_iversion_raw(inode) == s->version;
}

/* The file's size and ctime are still those the entry was read with. */
static bool kweb_centry_unchanged(const struct kweb_centry *e)
{
	struct timespec64 ctime = inode_get_ctime(e->inode);

	return i_size_read(e->inode) == e->size &&
	       timespec64_equal(&ctime, &e->ctime);
}

/*
 * Nothing that decides the way to the file changed: the file is no mount
 * point, and each directory from the file's up to the docroot still has
 * the stamp the entry was filled with (the file's own also that of when
 * its precompressed siblings were looked for, so that a new NAME.gz is
 * served at once), and is no mount point. Read under RCU: a rename may
 * be moving a dentry meanwhile, and then the answer is one the caller's
 * rename check overrides.
 */
static bool kweb_centry_dirs_unchanged(const struct kweb_cache *c,
				       const struct kweb_centry *e)
{
	struct dentry *d = e->path.dentry;
	struct inode *dir;
	unsigned int i;
	bool ok = e->nr_dirs && !d_mountpoint(d);

	kweb_rcu_lock();
	for (i = 0; ok && i < e->nr_dirs; i++) {
		d = READ_ONCE(d->d_parent);
		dir = READ_ONCE(d->d_inode);
		if (!dir) {
			ok = false;
			break;
		}
		ok = kweb_stamp_same(dir, &e->dir_stamps[i]) &&
		     (i || kweb_stamp_same(dir, &e->dir_stamp));
		/* A mount on the docroot itself is not in kweb's way. */
		if (i + 1 < e->nr_dirs)
			ok = ok && !d_mountpoint(d);
		else
			ok = ok && d == c->root.dentry;
	}
	kweb_rcu_unlock();
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

	if ((e->reval && time_after(jiffies, e->reval_at)) ||
	    d_unhashed(d) || READ_ONCE(d->d_inode) != e->inode ||
	    !kweb_centry_unchanged(e) || d_real_inode(d) != e->data_inode ||
	    !kweb_centry_dirs_unchanged(c, e))
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

/*
 * -EAGAIN if a change of inode now could leave its ctime as it is, the
 * one read: it is of the current tick (see the top). Read after ctime,
 * under the inode's lock.
 */
static int kweb_stamp_racy(struct inode *inode,
			   const struct timespec64 *ctime)
{
	struct timespec64 now = current_time(inode);

	return timespec64_compare(ctime, &now) >= 0 ? -EAGAIN : 0;
}

/*
 * d's stamp, into *s, if the current identity may search d: the two
 * read under d's lock, which chmod, chown and setfacl take, so a change
 * after the check moves the ctime kept, unless the stamp is racy.
 * Without it, a chmod racing the fill could leave an entry whose ctime
 * is the new one and whose check saw the old mode (setattr_copy() sets
 * the ctime first).
 */
static int kweb_dir_stamp(struct vfsmount *mnt, struct dentry *d,
			  struct kweb_stamp *s)
{
	struct inode *dir = d_inode(d);
	int err;

	inode_lock_shared(dir);
	kweb_stamp_take(dir, s);
	err = kweb_may_search(mnt, dir);
	if (!err)
		err = kweb_stamp_racy(dir, &s->ctime);
	inode_unlock_shared(dir);
	return err;
}

/*
 * Fill time, process context: note the stamp of each directory from the
 * file's up to the docroot into e, checking again that the identity
 * filp was opened as may search each (the lookup did, but a chmod since
 * may have moved a ctime that the entry would otherwise take as its
 * own), and the file's own ctime and read permission under its lock.
 * Returns 0, or an error when the entry must not be kept: a mount point
 * on the way, a path that changed, a permission now refused, or a racy
 * stamp (-EAGAIN).
 */
int kweb_centry_stamp(const struct kweb_cache *c, struct kweb_centry *e,
		      const struct file *filp)
{
	struct vfsmount *mnt = c->root.mnt;
	struct dentry *d = e->path.dentry;
	struct inode *inode = d_inode(d);
	unsigned int n = 1, i;
	const struct cred *old;
	struct timespec64 ctime;
	int err;

	for (i = 0; i < e->rel_len; i++)
		n += e->rel[i] == '/';
	e->dir_stamps = kmalloc_array(n, sizeof(*e->dir_stamps),
				       KWEB_CACHE_GFP);
	if (!e->dir_stamps)
		return -ENOMEM;
	if (e->path.mnt != mnt || d_mountpoint(d))
		return -EBUSY;

	old = override_creds(filp->f_cred);
	inode_lock_shared(inode);
	ctime = inode_get_ctime(inode);
	err = timespec64_equal(&ctime, &e->ctime) ?
	      kweb_may_open_read(&e->path) : -ESTALE;
	if (!err)
		err = kweb_stamp_racy(inode, &ctime);
	inode_unlock_shared(inode);

	d = dget(d);
	for (i = 0; !err && i < n; i++) {
		struct dentry *parent = dget_parent(d);

		dput(d);
		d = parent;
		if (i + 1 < n && (d == c->root.dentry || d_mountpoint(d)))
			err = -EBUSY;
		else
			err = kweb_dir_stamp(mnt, d, &e->dir_stamps[i]);
	}
	if (!err && d != c->root.dentry)
		err = -ESTALE;
	dput(d);
	revert_creds(old);
	/* Only now: a hit walks as many levels as this says. */
	if (!err)
		e->nr_dirs = n;
	return err;
}
