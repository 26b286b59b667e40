// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the input is a request-target. kweb_path_normalize()
 * (kmod/http_path.c) must agree with the segment-stack model in check.h
 * for the kernel's out size and for small ones (-ENAMETOOLONG exactly when
 * the single pass runs out of room); the absolute form of an origin-form
 * target must give the same path; the route and MIME type of the result
 * are checked too, and the input as a pair of dynamic_prefixes and
 * dynamic_extensions lists for kweb_route_rules_parse().
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

/* kweb_route_rules_parse()'s contract for one list, from http_route.h. */
static int rules_model(const char *s, char lead, unsigned int *nr)
{
	const char *end;
	size_t len;

	*nr = 0;
	while (*s) {
		end = strchr(s, ',');
		len = end ? (size_t)(end - s) : strlen(s);
		if (len < 2 || s[0] != lead || memchr(s, '?', len))
			return -EINVAL;
		if (*nr == KWEB_ROUTE_MAX)
			return -E2BIG;
		(*nr)++;
		if (!end)
			break;
		s = end + 1;
		if (!*s)
			return -EINVAL;	/* a trailing comma: an empty entry */
	}
	return 0;
}

/*
 * The input up to its first LF as dynamic_prefixes, the rest as
 * dynamic_extensions (C strings: up to a NUL); then route path with them.
 */
static void check_rules(const char *b, size_t size, const char *path,
			const struct kweb_target *t)
{
	struct kweb_route_rules r;
	unsigned int np, ne, k;
	char *s = malloc(size + 2), *ext;
	int err, want;

	if (!s)
		abort();
	memcpy(s, b, size);
	s[size] = '\0';
	s[size + 1] = '\0';
	ext = strchr(s, '\n');
	if (ext)
		*ext++ = '\0';
	else
		ext = s + size + 1;
	err = kweb_route_rules_parse(&r, s, ext);
	want = rules_model(s, '/', &np);
	if (!want)
		want = rules_model(ext, '.', &ne);
	CHECK(err == want, "rules: kweb %d, model %d", err, want);
	if (!err) {
		CHECK(r.nr_prefix == np && r.nr_ext == ne, "rule counts");
		for (k = 0; k < r.nr_prefix; k++)
			CHECK(r.prefix[k].p >= s && r.prefix[k].p[0] == '/' &&
			      r.prefix[k].len >= 2, "prefix %u", k);
		for (k = 0; k < r.nr_ext; k++)
			CHECK(r.ext[k].p >= ext && r.ext[k].p[0] == '.' &&
			      r.ext[k].len >= 2, "extension %u", k);
		if (path)
			check_route_target(&r, t, path);
	}
	free(s);
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
	if (size < 1024)
		check_rules(b, size, err ? NULL : out, &t);

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
