/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-listener Cache-Control rules, nginx's "expires" and
 * "add_header Cache-Control" per location: which Cache-Control value, if
 * any, a served file gets, by path prefix or file extension. Pure logic.
 */
#ifndef KWEB_HTTP_CACHE_RULES_H
#define KWEB_HTTP_CACHE_RULES_H

#include "pure.h"

#define KWEB_CACHE_RULES_MAX 32		/* rules per listener */
#define KWEB_CACHE_CONTROL_MAX 256	/* bytes of one rule's value */

/* The largest max-age kept; larger ones mean the same (RFC 9111 1.2.2). */
#define KWEB_CACHE_DELTA_MAX 2147483648LL

struct kweb_cache_rule {
	struct kweb_str match;	/* "/assets/" (prefix) or ".css" (extension) */
	struct kweb_str value;	/* the Cache-Control field value, OWS-trimmed */
	s64 max_age;		/* the value's max-age=N directive, or -1 */
};

struct kweb_cache_rules {
	struct kweb_cache_rule r[KWEB_CACHE_RULES_MAX];
	unsigned int nr;
};

/*
 * Parse text (which must outlive rules: the rules are slices of it):
 *
 *   "/assets/=public, max-age=31536000, immutable; .html=no-cache"
 *
 * Rules are separated by ';', with optional OWS around each and an
 * optional ';' after the last. Each is MATCH=VALUE, split at the first
 * '='. MATCH is a path prefix ("/" and at least one more byte; no '?',
 * '#', SP or CTL) or an extension ('.' and at least one tchar). VALUE,
 * OWS-trimmed, is a Cache-Control list of at most KWEB_CACHE_CONTROL_MAX
 * bytes of VCHAR, SP and HTAB (RFC 9111 5.2), without empty elements, and
 * with at most one max-age, whose argument must be unquoted digits.
 *
 * Returns 0, -EINVAL for a malformed rule (an empty one included, so a
 * text of OWS alone), -E2BIG for more than KWEB_CACHE_RULES_MAX rules.
 * NULL or "" gives no rules, and so does any error.
 */
int kweb_cache_rules_parse(struct kweb_cache_rules *rules, const char *text);

/*
 * The rule for the path of the file served (normalized, e.g.
 * "/a/index.html"), or NULL; rules may be NULL. As with nginx, where
 * extensions are regex locations ("location ~* \.css$") and prefixes are
 * prefix locations: the first extension rule the last segment ends with,
 * ignoring case; else the longest prefix rule the path starts with,
 * byte for byte (the first given of equal ones).
 */
const struct kweb_cache_rule *
kweb_cache_rule_match(const struct kweb_cache_rules *rules, const char *path,
		      size_t len);

#endif /* KWEB_HTTP_CACHE_RULES_H */
