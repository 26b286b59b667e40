// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the input is a Host field value (or any bytes).
 * kweb_host_dir() (kmod/http_host.c) must refuse exactly what
 * kweb_authority_ok() refuses, never take "..", '@', '/', '\\' or NUL,
 * and otherwise return the default (0) or a directory name that is
 * safe as one path component (never "", "." or "..", no '/', '\\', NUL
 * or "..", no leading dot, only host name characters), that it maps to
 * itself again, and that is the input lowercased, up to its port, less
 * one trailing dot.
 */
#include "check.h"
#include "http_host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *v = (const char *)data;
	char out[KWEB_HOST_MAX + 1], again[KWEB_HOST_MAX + 1];
	int n = kweb_host_dir(v, size, out);
	bool ok = kweb_authority_ok(v, size);
	size_t i, end;

	/* One validator: 400 exactly for what it refuses (empty aside). */
	if (n < 0) {
		CHECK(n == -EINVAL, "error %d", n);
		CHECK(size && !ok, "\"%.*s\": valid, yet refused", (int)size,
		      v);
		return 0;
	}
	CHECK(!size || ok, "\"%.*s\": invalid, yet taken", (int)size, v);
	CHECK(!ok || (!fz_contains(v, size, "..", 2) && !memchr(v, '@', size) &&
		      !memchr(v, '/', size) && !memchr(v, '\\', size) &&
		      !memchr(v, '\0', size) && v[0] != ':'),
	      "\"%.*s\": valid?", (int)size, v);
	CHECK((size_t)n == strlen(out) && n <= KWEB_HOST_MAX, "length %d", n);
	if (!n) {
		/* the default's: empty, or no directory name */
		return 0;
	}
	CHECK(strcmp(out, ".") && strcmp(out, "..") && !strstr(out, "..") &&
	      out[0] != '.' && !strchr(out, '/') && !strchr(out, '\\'),
	      "unsafe directory \"%s\"", out);
	for (i = 0; i < (size_t)n; i++)
		CHECK(islower((unsigned char)out[i]) ||
		      isdigit((unsigned char)out[i]) ||
		      strchr("-_.[]:", out[i]), "character %#x", out[i]);
	CHECK(kweb_host_dir(out, n, again) == n && !strcmp(out, again),
	      "\"%s\" maps to something else", out);
	/* The input, lowercased, to its port (after ']' for a literal). */
	end = 0;
	if (v[0] == '[') {
		while (v[end] != ']')
			end++;
		end++;
	} else {
		while (end < size && v[end] != ':')
			end++;
		if (v[end - 1] == '.')
			end--;
	}
	CHECK(end == (size_t)n, "\"%.*s\": %d bytes, not %zu", (int)size, v, n,
	      end);
	for (i = 0; i < end; i++)
		CHECK(out[i] == fz_lower(v[i]), "\"%.*s\" -> \"%s\"", (int)size,
		      v, out);
	return 0;
}
