// SPDX-License-Identifier: GPL-2.0
/*
 * Files under the docroot: resolve a normalized request path without ever
 * leaving the docroot, check that the result may be served, and read its
 * pages. Runs in process context (lookups and reads sleep).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/fsnotify.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/splice.h>
#include <linux/stat.h>

#include "compat.h"
#include "kweb.h"

/*
 * LOOKUP_BENEATH refuses ".." above the docroot and absolute symlinks with
 * -EXDEV, wherever they occur in the walk; magic links (/proc) are refused
 * outright.
 */
#define KWEB_LOOKUP (LOOKUP_FOLLOW | LOOKUP_BENEATH | LOOKUP_NO_MAGICLINKS)

/*
 * With virtual hosts, a path through a symlink is looked up beneath its
 * host's directory: host_len bytes of rel ("HOST/...", host_len 0
 * without) name it, and a symlink may lead anywhere inside it, never out
 * (-EXDEV), so one host's files cannot link another's. The host
 * directory itself may be a symlink to another inside the docroot (one
 * host's several names); the rest is beneath where it leads.
 */
static int kweb_lookup_symlinks(struct kweb_server *srv, const char *rel,
				size_t host_len, struct path *path)
{
	char host[KWEB_HOST_MAX + 1];
	const char *rest = rel + host_len;
	struct path hp;
	int err;

	if (!host_len)
		return vfs_path_lookup(srv->docroot.dentry, srv->docroot.mnt,
				       rel, KWEB_LOOKUP, path);
	if (host_len > KWEB_HOST_MAX)
		return -ENAMETOOLONG;
	memcpy(host, rel, host_len);
	host[host_len] = '\0';
	err = vfs_path_lookup(srv->docroot.dentry, srv->docroot.mnt, host,
			      KWEB_LOOKUP, &hp);
	if (err)
		return err;
	if (*rest == '/')
		rest++;
	if (*rest) {
		err = vfs_path_lookup(hp.dentry, hp.mnt, rest, KWEB_LOOKUP,
				      path);
		path_put(&hp);
	} else {
		*path = hp;
	}
	return err;
}

/* host_len: that of rel's host directory, see kweb_lookup_symlinks(). */
static int kweb_lookup(struct kweb_server *srv, const char *rel,
		       size_t host_len, struct path *path, struct kstat *st,
		       bool *via_symlink)
{
	int err;

	if (*rel) {
		/*
		 * Symlink-free paths first: only those may be cached, since
		 * the cache cannot see a symlink being changed. Normalized,
		 * such a path cannot leave a host's directory either.
		 */
		err = vfs_path_lookup(srv->docroot.dentry, srv->docroot.mnt,
				      rel, KWEB_LOOKUP | LOOKUP_NO_SYMLINKS,
				      path);
		if (err == -ELOOP) {
			int tries = 3;

			*via_symlink = true;
			/*
			 * A rename or mount anywhere while a ".." is walked
			 * makes a lookup beneath a root give up (-EAGAIN),
			 * as openat2(2)'s RESOLVE_BENEATH: try again.
			 */
			do
				err = kweb_lookup_symlinks(srv, rel, host_len,
							   path);
			while (err == -EAGAIN && --tries);
		}
		if (err)
			return err;
	} else {
		*path = srv->docroot;
		path_get(path);
	}
	/*
	 * A remote file's attributes from its server, as open(2) gets them
	 * (NFS's close-to-open consistency): what a cache hit skips, a miss
	 * after KWEB_CACHE_REVAL does. Local filesystems ignore the flag.
	 */
	err = vfs_getattr(path, st, STATX_BASIC_STATS, AT_STATX_FORCE_SYNC);
	if (err)
		path_put(path);
	return err;
}

/*
 * path is a normalized request path ("/..."), len its length, in a buffer
 * with room for "index.html" after it; with virtual hosts, its first
 * host_len bytes are "/HOST" (else host_len is 0). A path ending in '/'
 * names a directory and serves its index.html, which is then appended to
 * path. Returns 0 with f filled in,
 * -EISDIR for a directory named without the trailing slash, -EACCES for
 * what exists but may not be served, or the lookup's error.
 */
static int kweb_file_open_as(struct kweb_server *srv, char *path,
			     size_t len, size_t host_len, struct kweb_file *f)
{
	const char *rel = path + 1;	/* relative to the docroot */
	size_t hlen = host_len ? host_len - 1 : 0;	/* in rel */
	struct path p;
	struct kstat st;
	struct file *filp;
	int err;

	f->via_symlink = false;
	f->host_len = host_len;
	f->rename_seq = raw_read_seqcount(&rename_lock.seqcount);
	/* "dir/" fails with -ENOTDIR when dir is not a directory. */
	err = kweb_lookup(srv, rel, hlen, &p, &st, &f->via_symlink);
	if (!err && path[len - 1] == '/') {
		path_put(&p);
		/* path now names the file served, for its MIME type. */
		memcpy(path + len, "index.html", sizeof("index.html"));
		err = kweb_lookup(srv, rel, hlen, &p, &st, &f->via_symlink);
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
	/* The generation first: see kweb_cache_retype(). */
	f->mime_gen = kweb_cache_mime_gen(&srv->cache);
	rcu_read_lock();
	f->content_type = kweb_site_mime_lookup(rcu_dereference(srv->site),
						kweb_config(srv->net),
						path, strlen(path));
	rcu_read_unlock();
	err = 0;
out:
	path_put(&p);
	return err;
}

/* As srv's identity: its user and group, no capabilities (identity.c). */
int kweb_file_open(struct kweb_server *srv, char *path, size_t len,
		   size_t host_len, struct kweb_file *f)
{
	const struct cred *cred, *old;
	int err;

	cred = kweb_ident_get(&srv->ident);
	old = override_creds(cred);
	err = kweb_file_open_as(srv, path, len, host_len, f);
	revert_creds(old);
	put_cred(cred);
	return err;
}

/*
 * Is path ("/...") a directory of the docroot, looked up as srv's
 * identity? 0 if so, -ENOTDIR if it is something else, or the lookup's
 * error (-EACCES for one the identity may not search).
 */
int kweb_file_dir(struct kweb_server *srv, const char *path)
{
	const struct cred *cred, *old;
	bool via_symlink = false;
	struct kstat st;
	struct path p;
	int err;

	cred = kweb_ident_get(&srv->ident);
	old = override_creds(cred);
	err = kweb_lookup(srv, path + 1, 0, &p, &st, &via_symlink);
	revert_creds(old);
	put_cred(cred);
	if (err)
		return err;
	path_put(&p);
	return S_ISDIR(st.mode) ? 0 : -ENOTDIR;
}

/* The stamp of the directory of the open file f. */
void kweb_file_dir_stamp(const struct kweb_file *f, struct kweb_stamp *s)
{
	struct dentry *dir = dget_parent(f->filp->f_path.dentry);

	kweb_stamp_take(d_inode(dir), s);
	dput(dir);
}

/*
 * Which precompressed files NAME.br, NAME.gz sit beside NAME, the file f
 * opened at path (a normalized path whose buffer has KWEB_ENC_SUFFIX_MAX
 * bytes of room after it): those kweb could serve, regular and readable
 * by srv's identity, as KWEB_ENC_BIT()s in v->mask. Whether they are
 * older than NAME does not matter, as with nginx (docs/behaviour.md).
 * The directory's stamp, taken first, tells a cache entry when a file
 * came or went there since. f has no file when NAME does not exist,
 * only its host_len: then the caller takes the stamp from the file it
 * serves.
 */
void kweb_file_variants(struct kweb_server *srv, char *path,
			const struct kweb_file *f, struct kweb_variants *v)
{
	size_t len = strlen(path);
	const struct cred *cred, *old;
	u8 variants = 0;
	int enc;

	if (f->filp)
		kweb_file_dir_stamp(f, &v->dir_stamp);

	cred = kweb_ident_get(&srv->ident);
	old = override_creds(cred);
	for (enc = 0; enc < KWEB_ENC_NR; enc++) {
		bool via_symlink = false;
		struct kstat st;
		struct path p;

		strscpy(path + len, kweb_encoding_suffix(enc),
			KWEB_ENC_SUFFIX_MAX + 1);
		if (kweb_lookup(srv, path + 1,
				f->host_len ? f->host_len - 1 : 0, &p, &st,
				&via_symlink))
			continue;
		if (S_ISREG(st.mode) && !kweb_may_open_read(&p))
			variants |= KWEB_ENC_BIT(enc);
		path_put(&p);
	}
	path[len] = '\0';
	revert_creds(old);
	put_cred(cred);
	v->mask = variants;
}

void kweb_file_close(struct kweb_file *f)
{
	if (f->filp)
		fput(f->filp);
	f->filp = NULL;
}

/*
 * A pipe buffer's bytes as bio_vecs, one page at a time (a buffer may
 * hold a large folio), each with a reference of its own; bytes that
 * continue the last page extend its bio_vec, as nfsd_splice_actor() does.
 * Stops when pg is full: splice_direct_to_actor() then drops the rest.
 */
static int kweb_pages_actor(struct pipe_inode_info *pipe,
			    struct pipe_buffer *buf, struct splice_desc *sd)
{
	struct kweb_pages *pg = sd->u.data;
	struct page *page = buf->page + buf->offset / PAGE_SIZE;
	unsigned int off = offset_in_page(buf->offset);
	unsigned int left = sd->len;

	while (left) {
		unsigned int part = min_t(unsigned int, left, PAGE_SIZE - off);
		struct bio_vec *last = pg->nr ? &pg->bv[pg->nr - 1] : NULL;

		if (last && last->bv_page == page &&
		    last->bv_offset + last->bv_len == off) {
			last->bv_len += part;
		} else if (pg->nr < pg->max) {
			get_page(page);
			bvec_set_page(&pg->bv[pg->nr++], page, part, off);
		} else {
			break;
		}
		left -= part;
		page++;
		off = 0;
	}
	return sd->len - left;
}

static int kweb_direct_actor(struct pipe_inode_info *pipe,
			     struct splice_desc *sd)
{
	return __splice_from_pipe(pipe, sd, kweb_pages_actor);
}

void kweb_pages_release(struct kweb_pages *pg)
{
	while (pg->nr)
		put_page(pg->bv[--pg->nr].bv_page);
}

/*
 * References to the pages holding bytes [pos, pos + len) of f, or fewer,
 * in pg (emptied first). They come from the filesystem's own splice_read,
 * as for nfsd_splice_read(): overlayfs passes it on to the real file,
 * NFS and FUSE revalidate, tmpfs has its own, and the read's permission
 * (LSM, fanotify) and access (atime, fsnotify) hooks all run. The pages
 * are mostly the page cache's, but may also be copies (O_DIRECT-like
 * reads) or the zero page (a hole in tmpfs). Runs with the rights the
 * file was opened with. Returns the bytes pg covers, 0 at end of file,
 * or an error. Process context: reading sleeps.
 */
ssize_t kweb_file_read_pages(struct kweb_file *f, loff_t pos, size_t len,
			     struct kweb_pages *pg)
{
	struct file *filp = f->filp;
	struct splice_desc sd = {
		.total_len = len,
		.pos = pos,
		.u.data = pg,
	};
	const struct cred *old;
	ssize_t n;

	kweb_pages_release(pg);
	n = rw_verify_area(READ, filp, &pos, len);
	if (n)
		return n;
	old = override_creds(filp->f_cred);
	n = splice_direct_to_actor(filp, &sd, kweb_direct_actor);
	revert_creds(old);
	if (n > 0)
		fsnotify_access(filp);
	else
		kweb_pages_release(pg);
	return n;
}
