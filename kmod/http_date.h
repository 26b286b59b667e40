/* SPDX-License-Identifier: GPL-2.0 */
/* HTTP dates (RFC 9110 section 5.6.7). Pure logic. */
#ifndef KWEB_HTTP_DATE_H
#define KWEB_HTTP_DATE_H

#include "pure.h"

/* "Sun, 06 Nov 1994 08:49:37 GMT" */
#define KWEB_HTTP_DATE_LEN 29

/*
 * Format seconds since the epoch as IMF-fixdate; out gets a trailing NUL.
 * t is clamped to 1970-01-01 00:00:00 .. 9999-12-31 23:59:59.
 */
void kweb_http_date_format(s64 t, char out[KWEB_HTTP_DATE_LEN + 1]);

/*
 * Parse IMF-fixdate, RFC 850 or asctime format into seconds since the
 * epoch. Returns 0 or -EINVAL. Names are case-sensitive and the weekday
 * need not match the date; no OWS or trailing bytes are allowed. An RFC 850
 * two-digit year below 70 is 20xx, else 19xx (RFC 9110's rule needs the
 * current time, which pure code does not have).
 */
int kweb_http_date_parse(const char *s, size_t len, s64 *t);

#endif /* KWEB_HTTP_DATE_H */
