// SPDX-License-Identifier: GPL-2.0
/*
 * The Location of a cleartext listener's redirect to HTTPS; see
 * http_redirect.h.
 */
#include "http_redirect.h"

struct kweb_loc {
	char *p;
	size_t size, len;
};

static void kweb_loc_put(struct kweb_loc *l, const char *s, size_t n)
{
	if (l->len + n < l->size)
		memcpy(l->p + l->len, s, n);
	l->len += n;
}

int kweb_https_location(char *out, size_t size, const char *host, u16 port,
			const char *target, size_t len)
{
	struct kweb_loc l = { .p = out, .size = size };
	const char *rest = target, *end = target + len;
	char num[8];
	int n;

	if (!len)
		return -EINVAL;
	if (target[0] != '/') {
		/* absolute-form: scheme "://" authority, then path and query. */
		const char *s = target;

		while (s + 2 < end && memcmp(s, "://", 3))
			s++;
		if (s + 2 >= end || s == target)
			return -EINVAL;
		rest = s + 3;
		while (rest < end && *rest != '/' && *rest != '?')
			rest++;
	}
	if ((size_t)(end - rest) >= sizeof(KWEB_ACME_PREFIX) - 1 &&
	    !memcmp(rest, KWEB_ACME_PREFIX, sizeof(KWEB_ACME_PREFIX) - 1))
		return -EINVAL;
	kweb_loc_put(&l, "https://", 8);
	kweb_loc_put(&l, host, strlen(host));
	if (port != 443) {
		n = snprintf(num, sizeof(num), ":%u", port);
		kweb_loc_put(&l, num, n);
	}
	if (rest == end || *rest == '?')
		kweb_loc_put(&l, "/", 1);
	kweb_loc_put(&l, rest, end - rest);
	if (l.len >= size)
		return -ENOSPC;
	out[l.len] = '\0';
	return l.len;
}
