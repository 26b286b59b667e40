// SPDX-License-Identifier: GPL-2.0
/*
 * Sending a response on a locked TCP socket without blocking: the header
 * from a buffer, the body as page-cache pages handed to TCP (zero-copy).
 * A full send buffer returns -EAGAIN; sk_write_space brings us back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/pagemap.h>
#include <net/tcp.h>

#include "compat.h"
#include "kweb.h"

static int kweb_send_buf(struct sock *sk, const void *data, size_t len,
			 int flags)
{
	struct kvec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr msg = { .msg_flags = flags };

	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, &iov, 1, len);
	return tcp_sendmsg_locked(sk, &msg, len);
}

/* Slab or otherwise unsuitable pages cannot be referenced from skbs. */
static int kweb_send_copy(struct sock *sk, struct page *page, int offset,
			  size_t len, int flags)
{
	void *p = kmap_local_page(page);
	int n = kweb_send_buf(sk, p + offset, len, flags);

	kunmap_local(p);
	return n;
}

/* The page holding r->pos, with a reference, from the entry or the file. */
static struct page *kweb_body_page(struct kweb_response *r)
{
	pgoff_t index = r->pos >> PAGE_SHIFT;
	struct folio *folio;

	/*
	 * A file rewritten or truncated under us: never send what is not
	 * the file's; the caller closes and the client sees a short body.
	 */
	if (r->entry) {
		if (!kweb_centry_unchanged(r->entry))
			return ERR_PTR(-ESTALE);
		get_page(r->entry->pages[index]);
		return r->entry->pages[index];
	}
	if (r->pos >= i_size_read(file_inode(r->file.filp)))
		return ERR_PTR(-EIO);
	folio = kweb_file_folio(&r->file, index);
	if (IS_ERR(folio))
		return ERR_CAST(folio);
	return folio_file_page(folio, index);
}

/* Never sleeps with a cache entry; may with a file (reading it in). */
static int kweb_send_body(struct kweb_conn *conn)
{
	struct kweb_response *r = &conn->resp;

	while (r->pos < r->end) {
		size_t off = offset_in_page(r->pos);
		size_t len = min_t(loff_t, PAGE_SIZE - off, r->end - r->pos);
		int flags = MSG_DONTWAIT;
		struct page *page;
		int n;

		page = kweb_body_page(r);
		if (IS_ERR(page))
			return PTR_ERR(page);
		if (r->pos + len < r->end)
			flags |= MSG_MORE;
		if (sendpage_ok(page)) {
			n = kweb_tcp_send_page(conn->sk, page, off, len, flags);
			if (n > 0)
				kweb_stat_add(conn->srv->stats,
					      KWEB_STAT_BODY_SPLICED, n);
		} else {
			n = kweb_send_copy(conn->sk, page, off, len, flags);
			if (n > 0)
				kweb_stat_add(conn->srv->stats,
					      KWEB_STAT_BODY_COPIED, n);
		}
		put_page(page);
		if (n < 0)
			return n;
		if (!n)
			return -EAGAIN;
		r->pos += n;
	}
	return 0;
}

int kweb_send_response(struct kweb_conn *conn)
{
	struct kweb_response *r = &conn->resp;

	while (r->hdr_sent < r->hdr_len) {
		/* MSG_MORE: the header and the first page share a segment. */
		int flags = MSG_DONTWAIT | (r->pos < r->end ? MSG_MORE : 0);
		int n = kweb_send_buf(conn->sk, r->hdr + r->hdr_sent,
				      r->hdr_len - r->hdr_sent, flags);

		if (n < 0)
			return n;
		if (!n)
			return -EAGAIN;
		r->hdr_sent += n;
	}
	return kweb_send_body(conn);
}
