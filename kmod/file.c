// SPDX-License-Identifier: GPL-2.0
/*
 * Files under the docroot: resolve a normalized request path without ever
 * leaving the docroot, check that the result may be served, and reach its
 * page-cache folios. Runs in process context (lookups and reads sleep).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>
#include <linux/stat.h>

#include "compat.h"
#include "kweb.h"
#include "mimemap.h"

/*
 * LOOKUP_BENEATH refuses ".." above the docroot and absolute symlinks with
 * -EXDEV, wherever they occur in the walk; magic links (/proc) are refused
 * outright.
 */
#define KWEB_LOOKUP (LOOKUP_FOLLOW | LOOKUP_BENEATH | LOOKUP_NO_MAGICLINKS)

static int kweb_lookup(struct kweb_server *srv, const char *rel,
		       struct path *path, struct kstat *st, bool *via_symlink)
{
	int err;

	if (*rel) {
		/*
		 * Symlink-free paths first: only those may be cached, since
		 * the cache cannot see a symlink being changed.
		 */
		err = vfs_path_lookup(srv->docroot.dentry, srv->docroot.mnt,
				      rel, KWEB_LOOKUP | LOOKUP_NO_SYMLINKS,
				      path);
		if (err == -ELOOP) {
			*via_symlink = true;
			err = vfs_path_lookup(srv->docroot.dentry,
					      srv->docroot.mnt, rel,
					      KWEB_LOOKUP, path);
		}
		if (err)
			return err;
	} else {
		*path = srv->docroot;
		path_get(path);
	}
	err = vfs_getattr(path, st, STATX_BASIC_STATS, AT_STATX_SYNC_AS_STAT);
	if (err)
		path_put(path);
	return err;
}

/*
 * path is a normalized request path ("/..."), len its length, in a buffer
 * with room for "index.html" after it. A path ending in '/' names a
 * directory and serves its index.html, which is then appended to path. Returns 0 with f filled in,
 * -EISDIR for a directory named without the trailing slash, -EACCES for
 * what exists but may not be served, or the lookup's error.
 */
static int kweb_file_open_as(struct kweb_server *srv, char *path,
			     size_t len, struct kweb_file *f)
{
	const char *rel = path + 1;	/* relative to the docroot */
	struct path p;
	struct kstat st;
	struct file *filp;
	int err;

	f->via_symlink = false;
	f->rename_seq = raw_read_seqcount(&rename_lock.seqcount);
	/* "dir/" fails with -ENOTDIR when dir is not a directory. */
	err = kweb_lookup(srv, rel, &p, &st, &f->via_symlink);
	if (!err && path[len - 1] == '/') {
		path_put(&p);
		/* path now names the file served, for its MIME type. */
		memcpy(path + len, "index.html", sizeof("index.html"));
		err = kweb_lookup(srv, rel, &p, &st, &f->via_symlink);
		/* No index: listing directories is not kweb's business. */
		if (err == -ENOENT)
			return -EACCES;
	}
	if (err)
		return err;

	if (S_ISDIR(st.mode)) {
		/* nginx opens it to learn it is one: no 301 unless readable. */
		err = path[len - 1] == '/' ? -EACCES :
		      kweb_may_open_read(&p) ?: -EISDIR;
		goto out;
	}
	if (!S_ISREG(st.mode)) {
		err = -EACCES;
		goto out;
	}
	/*
	 * dentry_open() checks no permission: open(2)'s, as the identity
	 * (kweb_file_open()) -- what it may read is served, as with nginx.
	 */
	err = kweb_may_open_read(&p);
	if (err)
		goto out;
	filp = dentry_open(&p, O_RDONLY | O_LARGEFILE, current_cred());
	if (IS_ERR(filp)) {
		err = PTR_ERR(filp);
		goto out;
	}
	f->filp = filp;
	f->size = st.size;
	f->mtime = st.mtime.tv_sec;
	f->ctime = st.ctime;
	f->mime_gen = kweb_mime_generation();
	f->content_type = kweb_mime_lookup(path, strlen(path));
	err = 0;
out:
	path_put(&p);
	return err;
}

/* As srv's identity: its user and group, no capabilities (identity.c). */
int kweb_file_open(struct kweb_server *srv, char *path, size_t len,
		   struct kweb_file *f)
{
	const struct cred *cred, *old;
	int err;

	cred = kweb_ident_get(&srv->ident);
	old = override_creds(cred);
	err = kweb_file_open_as(srv, path, len, f);
	revert_creds(old);
	put_cred(cred);
	return err;
}

void kweb_file_close(struct kweb_file *f)
{
	if (f->filp)
		fput(f->filp);
	f->filp = NULL;
}

/*
 * The uptodate folio holding page index of the file, with a reference, or
 * an ERR_PTR. Misses start readahead so large files are not read one page
 * at a time.
 */
struct folio *kweb_file_folio(struct kweb_file *f, pgoff_t index)
{
	struct file *filp = f->filp;
	struct address_space *mapping = filp->f_mapping;
	struct folio *folio;
	struct page *page;

	/* tmpfs has no ->read_folio; it has its own entry point. */
	if (file_inode(filp)->i_sb->s_magic == TMPFS_MAGIC) {
		page = shmem_read_mapping_page_gfp(mapping, index,
						   mapping_gfp_mask(mapping));
		return IS_ERR(page) ? ERR_CAST(page) : page_folio(page);
	}
	if (!mapping->a_ops->read_folio)
		return ERR_PTR(-EOPNOTSUPP);

	folio = kweb_filemap_get_folio(mapping, index);
	if (folio) {
		if (folio_test_uptodate(folio))
			return folio;
		folio_put(folio);
	} else {
		pgoff_t last = (f->size - 1) >> PAGE_SHIFT;

		page_cache_sync_readahead(mapping, &filp->f_ra, filp, index,
					  last - index + 1);
	}
	return read_mapping_folio(mapping, index, filp);
}
