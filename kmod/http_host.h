/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Virtual hosts: the directory below the docroot a request's host names.
 * Pure logic.
 */
#ifndef KWEB_HTTP_HOST_H
#define KWEB_HTTP_HOST_H

#include "pure.h"

/* The longest host name in text (RFC 1035), and so directory name. */
#define KWEB_HOST_MAX 253

/*
 * Whether p[0, len) is a valid authority without userinfo, RFC 3986 3.2.2
 * as RFC 9112 3.2 and 3.2.2 want of Host and of an absolute-form target:
 * host [ ":" port ], host an IP-literal ("[" IPv6address or IPvFuture
 * "]") or a reg-name of unreserved, pct-encoded and sub-delims characters
 * (an IPv4address is one), not empty and without "..", port *DIGIT. One
 * check for both, so they can never disagree on what a host is.
 */
bool kweb_authority_ok(const char *p, size_t len);

/*
 * The directory for the host of p[0, len) (a Host field's value, or an
 * absolute-form target's authority): lowercased, without its port and
 * one trailing dot, into out (KWEB_HOST_MAX + 1 bytes, NUL-terminated).
 * Only a name of letters, digits, '-', '_' and '.' (no empty label, no
 * leading dot, KWEB_HOST_MAX bytes at most) or an IPv6 literal names a
 * directory; an IPv4 address is a name. Returns the length; 0 for an
 * empty value or any other valid host (the default directory); -EINVAL
 * for an invalid authority (kweb_authority_ok()), which gets 400.
 */
int kweb_host_dir(const char *p, size_t len, char *out);

#endif /* KWEB_HTTP_HOST_H */
