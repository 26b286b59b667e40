// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the input is a request-target. kweb_path_normalize()
 * (kmod/http_path.c) must agree with the segment-stack model in check.h
 * for the kernel's out size and for small ones (-ENAMETOOLONG exactly when
 * the single pass runs out of room); the absolute form of an origin-form
 * target must give the same path; the route and MIME type of the result
 * are checked too.
 */
#include "check.h"

static struct kweb_route_rules rules;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (kweb_route_rules_parse(&rules, "/api/,/dyn/,/a", ".php,.Cgi"))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char out[FZ_KERNEL_PATH_OUT], out2[FZ_KERNEL_PATH_OUT];
	static const char authority[] = "hTTp://example.com:80";
	const char *b = (const char *)data;
	size_t small = size ? data[size - 1] % 64 : 0;
	struct kweb_target t, t2;
	char *abs;
	int err, err2;

	err = check_path(b, size, small, out, &t);
	if (!err) {
		check_route_target(&rules, &t, out);
		check_mime(out, t.path_len);
	}

	/* http://host/path is /path */
	if (!size || b[0] != '/')
		return 0;
	abs = malloc(sizeof(authority) - 1 + size);
	if (!abs)
		abort();
	memcpy(abs, authority, sizeof(authority) - 1);
	memcpy(abs + sizeof(authority) - 1, b, size);
	err2 = check_path(abs, sizeof(authority) - 1 + size, small, out2, &t2);
	CHECK(err == err2, "origin-form %d, absolute-form %d", err, err2);
	if (!err)
		CHECK(!strcmp(out, out2) && t.has_query == t2.has_query &&
		      t.trailing_slash == t2.trailing_slash,
		      "'%s' vs '%s'", out, out2);
	free(abs);
	return 0;
}
