/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A cleartext listener that sends every request to HTTPS: the Location
 * of its 301, as nginx's "return 301 https://$host$request_uri". Pure
 * logic.
 */
#ifndef KWEB_HTTP_REDIRECT_H
#define KWEB_HTTP_REDIRECT_H

#include "pure.h"

/* Where ACME's http-01 challenges are (RFC 8555 8.3): served, not moved. */
#define KWEB_ACME_PREFIX "/.well-known/acme-challenge/"

/*
 * Into out (size bytes, NUL-terminated): "https://", host (a host as
 * kweb_host_dir() makes them: lowercase, no port), ":port" unless port
 * is 443, then the path and query of target[0, len), the request-target
 * as sent: all of an origin-form target, what follows an absolute-form
 * target's authority ("/" first if that is empty or a query). Returns
 * the length; -ENOSPC if out is too small; -EINVAL for a target of
 * another form ("*", an authority-form), or one whose path is under
 * KWEB_ACME_PREFIX: those are not redirected.
 */
int kweb_https_location(char *out, size_t size, const char *host, u16 port,
			const char *target, size_t len);

#endif /* KWEB_HTTP_REDIRECT_H */
