/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Request-target to file path: strip the absolute-form prefix, split off
 * the query, percent-decode and normalize. Pure logic.
 */
#ifndef KWEB_HTTP_PATH_H
#define KWEB_HTTP_PATH_H

#include "pure.h"

struct kweb_target {
	struct kweb_str authority;	/* absolute-form's host[:port], else empty */
	struct kweb_str raw_path;	/* path part of the target, still encoded */
	struct kweb_str query;		/* after '?', empty if none */
	bool has_query;			/* a '?' was present, even with nothing after it */
	u32 path_len;			/* strlen of the normalized path */
	bool trailing_slash;		/* normalized path ends in '/' */
};

/*
 * Decode target[0..len) into out (NUL-terminated, outsz bytes). The result
 * starts with '/', has no empty, "." or ".." segments and keeps a trailing
 * '/' if the decoded path had one (including one left by a final "." or
 * ".." segment). Returns 0, -EINVAL for a target that must get 400 (not
 * origin- or absolute-form, bad percent-encoding, a decoded NUL or control
 * character, ".." above the root, '#', userinfo or an empty authority in
 * absolute-form), or -ENAMETOOLONG when the result does not fit in out
 * (a segment that a later ".." removes still needs room when it is read).
 * %2F separates segments like '/'; the query is not decoded. raw_path is
 * empty for an absolute-form target without a path.
 */
int kweb_path_normalize(const char *target, size_t len, char *out,
			size_t outsz, struct kweb_target *t);

#endif /* KWEB_HTTP_PATH_H */
