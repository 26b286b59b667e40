/* SPDX-License-Identifier: GPL-2.0 */
/* HTTP dates (RFC 9110 section 5.6.7). Pure logic. */
#ifndef KWEB_HTTP_DATE_H
#define KWEB_HTTP_DATE_H

#include "pure.h"

/* "Sun, 06 Nov 1994 08:49:37 GMT" */
#define KWEB_HTTP_DATE_LEN 29

/* Format seconds since the epoch as IMF-fixdate; out gets a trailing NUL. */
void kweb_http_date_format(s64 t, char out[KWEB_HTTP_DATE_LEN + 1]);

/*
 * Parse IMF-fixdate, RFC 850 or asctime format into seconds since the
 * epoch. Returns 0 or -EINVAL.
 */
int kweb_http_date_parse(const char *s, size_t len, s64 *t);

#endif /* KWEB_HTTP_DATE_H */
