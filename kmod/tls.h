/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tls.c: sockets kwebtlsd gives back with kTLS installed, served from
 * their connection's work item only (never softirq: kTLS sleeps).
 */
#ifndef KWEB_TLS_H
#define KWEB_TLS_H

#include "kweb.h"

struct netlink_ext_ack;

int kweb_tls_adopt(struct kweb_server *srv, struct socket *sock,
		   unsigned int fd, struct netlink_ext_ack *extack);
void kweb_tls_restore_callbacks(struct kweb_conn *conn);
void kweb_tls_release(struct kweb_conn *conn, bool reset);
/* A netns's exit, its servers gone: closes what its connections left. */
void kweb_tls_dying_flush(void);
/* The same after a close_notify, unless resetting or one went already. */
void kweb_tls_close(struct kweb_conn *conn, bool reset);
/*
 * Before a handoff: whether kTLS holds records of ours not yet given to
 * TCP, or TCP any not yet acknowledged; if so, sk_write_space() calls
 * once more is freed.
 */
bool kweb_tls_tx_unacked(struct kweb_conn *conn);

/* As recv.h's, on the plaintext kTLS decrypted. */
size_t kweb_tls_peek(struct kweb_conn *conn, size_t skip, char *buf,
		     size_t len);
size_t kweb_tls_consume(struct kweb_conn *conn, size_t len);
/* Bytes waiting; the buffer grows toward want if it is full. */
size_t kweb_tls_unread(struct kweb_conn *conn, size_t want);
bool kweb_tls_eof(struct kweb_conn *conn);

/* Sends through kTLS, which takes the socket lock itself. */
int kweb_tls_send_buf(struct kweb_conn *conn, const void *data, size_t len,
		      int flags);
int kweb_tls_send_pages(struct kweb_conn *conn, struct bio_vec *bv,
			unsigned int nr, size_t len, int flags);
/*
 * A response sent: close_notify after the last one, and 0 once kTLS has
 * given TCP every record, or -EAGAIN until then.
 */
int kweb_tls_send_end(struct kweb_conn *conn, bool last);
/* The FIN, after kweb_tls_send_end(conn, true). */
void kweb_tls_shutdown(struct kweb_conn *conn);

#endif /* KWEB_TLS_H */
