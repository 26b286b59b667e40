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
 * The directory for the host p[0, len) (a Host field's value, or an
 * absolute-form target's authority): lowercased, without its port and
 * one trailing dot, into out (KWEB_HOST_MAX + 1 bytes, NUL-terminated).
 * A host is a name of letters, digits, '-', '_' and '.' (no empty label,
 * no leading dot), or an IPv6 literal in brackets; an IPv4 address is a
 * name. Returns the length, 0 for an empty value (no host: the default
 * directory), or -EINVAL for anything else, which gets 400.
 */
int kweb_host_dir(const char *p, size_t len, char *out);

#endif /* KWEB_HTTP_HOST_H */
