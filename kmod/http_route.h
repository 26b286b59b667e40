/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which requests kweb answers itself and which go, unread, to the backend
 * server. Pure logic over a parsed request and its normalized path.
 */
#ifndef KWEB_HTTP_ROUTE_H
#define KWEB_HTTP_ROUTE_H

#include "http_parse.h"
#include "http_path.h"
#include "pure.h"

enum kweb_route {
	KWEB_ROUTE_SERVE,	/* a static file (or an error) kweb answers */
	KWEB_ROUTE_METHOD,	/* not GET or HEAD */
	KWEB_ROUTE_QUERY,	/* the target has a query */
	KWEB_ROUTE_PREFIX,	/* a configured dynamic path prefix */
	KWEB_ROUTE_EXTENSION,	/* a configured dynamic file extension */
	KWEB_ROUTE_UPGRADE,	/* Upgrade, e.g. WebSocket */
	KWEB_ROUTE_H2,		/* the HTTP/2 prior-knowledge preface */
	KWEB_ROUTE_UNPARSED,	/* valid HTTP kweb does not implement or read */
	KWEB_ROUTE_MISSING,	/* no such file, and the backend routes those */
	KWEB_ROUTE_NR,
};

/* Up to this many prefixes and as many extensions. */
#define KWEB_ROUTE_MAX 16

/* Slices of the configuration strings, which must outlive the rules. */
struct kweb_route_rules {
	struct kweb_str prefix[KWEB_ROUTE_MAX];
	struct kweb_str ext[KWEB_ROUTE_MAX];
	unsigned int nr_prefix;
	unsigned int nr_ext;
};

/*
 * Fill rules from comma-separated lists: prefixes each start with '/'
 * ("/api/,/cgi-bin/"), extensions each with '.' (".php,.cgi"). Either may
 * be NULL or empty. Returns 0, -EINVAL for an empty or malformed entry, or
 * -E2BIG for more than KWEB_ROUTE_MAX entries in a list.
 */
int kweb_route_rules_parse(struct kweb_route_rules *rules,
			   const char *prefixes, const char *extensions);

/*
 * Routing by the request alone, before its target is decoded: res and req
 * as kweb_http_parse() left them. Errors kweb cannot take for malformed
 * input are KWEB_ROUTE_UNPARSED: 501 (an unknown transfer coding), 505
 * (another HTTP version), and 414 and 431 (a head longer than kweb reads,
 * or with more fields than it keeps, which the backend's own limits may
 * take: nginx's are 8 KiB a line and 32 KiB in all). Other errors (400)
 * are kweb's to answer.
 */
enum kweb_route kweb_route_request(enum kweb_parse_result res,
				   const struct kweb_request *req);

/*
 * Routing by the target: t and the normalized path[0..t->path_len) as
 * kweb_path_normalize() made them. Prefixes match the normalized path
 * case-sensitively, like nginx's prefix locations; extensions match the
 * last segment case-insensitively, so that "/index.PHP" is never sent as
 * a file's source.
 */
enum kweb_route kweb_route_target(const struct kweb_route_rules *rules,
				  const struct kweb_target *t,
				  const char *path);
/* The same, with the prefixes of pfx and the extensions of ext. */
enum kweb_route kweb_route_target2(const struct kweb_route_rules *pfx,
				   const struct kweb_route_rules *ext,
				   const struct kweb_target *t,
				   const char *path);

/*
 * Routing of a target that kweb_path_normalize() refused with err, t as
 * it left it: KWEB_ROUTE_SERVE for kweb's own 400.
 */
enum kweb_route kweb_route_bad_target(const struct kweb_target *t, int err);

#endif /* KWEB_HTTP_ROUTE_H */
