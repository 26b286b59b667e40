// SPDX-License-Identifier: GPL-2.0
/*
 * Routing: kweb keeps static GET and HEAD requests for itself; everything
 * it does not fully understand goes to the backend unread.
 */
#include "http_route.h"

/* Split one comma-separated list into out[]; each entry starts with lead. */
static int kweb_route_list(const char *s, char lead, struct kweb_str *out,
			   unsigned int *nr)
{
	const char *end;
	size_t len;

	*nr = 0;
	if (!s || !*s)
		return 0;
	for (;;) {
		end = strchr(s, ',');
		len = end ? (size_t)(end - s) : strlen(s);
		/* The lead character alone would match everything. */
		if (len < 2 || s[0] != lead || memchr(s, '?', len))
			return -EINVAL;
		if (*nr == KWEB_ROUTE_MAX)
			return -E2BIG;
		out[*nr].p = s;
		out[*nr].len = len;
		(*nr)++;
		if (!end)
			return 0;
		s = end + 1;
	}
}

int kweb_route_rules_parse(struct kweb_route_rules *rules,
			   const char *prefixes, const char *extensions)
{
	int err;

	memset(rules, 0, sizeof(*rules));
	err = kweb_route_list(prefixes, '/', rules->prefix, &rules->nr_prefix);
	if (err)
		return err;
	return kweb_route_list(extensions, '.', rules->ext, &rules->nr_ext);
}

enum kweb_route kweb_route_request(enum kweb_parse_result res,
				   const struct kweb_request *req)
{
	if (res == KWEB_PARSE_ERROR)
		return req->status == 501 || req->status == 505 ||
		       req->status == 414 || req->status == 431 ?
		       KWEB_ROUTE_UNPARSED : KWEB_ROUTE_SERVE;
	if (res != KWEB_PARSE_OK)
		return KWEB_ROUTE_SERVE;
	if (req->h2_preface)
		return KWEB_ROUTE_H2;
	if (req->method == KWEB_METHOD_OTHER)
		return KWEB_ROUTE_METHOD;
	if (req->upgrade)
		return KWEB_ROUTE_UPGRADE;
	/* A chunked body, even on a GET: only the backend reads those. */
	if (req->chunked)
		return KWEB_ROUTE_UNPARSED;
	return KWEB_ROUTE_SERVE;
}

static bool kweb_ends_with_ci(const char *s, size_t len,
			      const struct kweb_str *suffix)
{
	size_t i, off;

	if (len < suffix->len)
		return false;
	off = len - suffix->len;
	for (i = 0; i < suffix->len; i++) {
		char a = s[off + i], b = suffix->p[i];

		if (a >= 'A' && a <= 'Z')
			a += 'a' - 'A';
		if (b >= 'A' && b <= 'Z')
			b += 'a' - 'A';
		if (a != b)
			return false;
	}
	return true;
}

/*
 * A query makes a target the backend's whatever its path, which a proxy
 * passes on undecoded; so does a path longer than kweb's buffer, as
 * nginx takes 8 KiB of it (and answers 404 for a file name that long).
 * The rest (a bad escape, a dot segment above the root, a fragment, a
 * bad authority) is malformed: kweb's 400.
 */
enum kweb_route kweb_route_bad_target(const struct kweb_target *t, int err)
{
	if (t->has_query)
		return KWEB_ROUTE_QUERY;
	if (err == -ENAMETOOLONG)
		return KWEB_ROUTE_UNPARSED;
	return KWEB_ROUTE_SERVE;
}

enum kweb_route kweb_route_target(const struct kweb_route_rules *rules,
				  const struct kweb_target *t,
				  const char *path)
{
	return kweb_route_target2(rules, rules, t, path);
}

enum kweb_route kweb_route_target2(const struct kweb_route_rules *pfx,
				   const struct kweb_route_rules *ext,
				   const struct kweb_target *t,
				   const char *path)
{
	const char *base;
	size_t len = t->path_len, blen;
	unsigned int i;

	if (t->has_query)
		return KWEB_ROUTE_QUERY;
	for (i = 0; i < pfx->nr_prefix; i++) {
		const struct kweb_str *p = &pfx->prefix[i];

		if (len >= p->len && !memcmp(path, p->p, p->len))
			return KWEB_ROUTE_PREFIX;
	}
	/* The extension of the last segment; "/a.php/" has none. */
	base = path;
	for (i = 0; i < len; i++)
		if (path[i] == '/')
			base = path + i + 1;
	blen = path + len - base;
	for (i = 0; i < ext->nr_ext; i++)
		if (blen >= ext->ext[i].len &&
		    kweb_ends_with_ci(base, blen, &ext->ext[i]))
			return KWEB_ROUTE_EXTENSION;
	return KWEB_ROUTE_SERVE;
}
