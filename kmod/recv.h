/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KWEB_RECV_H
#define KWEB_RECV_H

#include <net/sock.h>

/*
 * Copy up to len unread bytes, starting skip bytes past the first unread
 * one, into buf; nothing is consumed. Returns the number copied.
 */
size_t kweb_recv_peek(struct sock *sk, size_t skip, char *buf, size_t len);

/* Consume up to len unread bytes; returns the number consumed. */
size_t kweb_recv_consume(struct sock *sk, size_t len);

/* How many bytes wait unread, about (a FIN may count as one). */
size_t kweb_recv_unread(const struct sock *sk);

/* The peer has sent its FIN (possibly with data still unread before it). */
bool kweb_recv_eof(const struct sock *sk);

#endif /* KWEB_RECV_H */
