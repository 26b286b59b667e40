// SPDX-License-Identifier: GPL-2.0
/*
 * Host (RFC 9110 7.2, RFC 3986 3.2.2) to a virtual host's directory, as
 * TUX's virtual_server and nginx's server_name see it: case-insensitive,
 * port ignored, "example.com." the same as "example.com". The result is
 * used as a path component, so it can never be "", "." or "..", nor hold
 * '/', '\\' or NUL: only the characters of host names get through.
 */
#include "http_host.h"
#include "http_token.h"

static bool kweb_host_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.';
}

/* ":" *DIGIT, or nothing. */
static bool kweb_host_port_ok(const char *p, size_t len)
{
	size_t i;

	if (!len)
		return true;
	if (p[0] != ':')
		return false;
	for (i = 1; i < len; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

int kweb_host_dir(const char *p, size_t len, char *out)
{
	size_t i, n;

	out[0] = '\0';
	if (!len)
		return 0;
	if (p[0] == '[') {
		bool colon = false;

		/* IPv6: hex digits, ':' and '.' (an IPv4 tail), no "..". */
		for (i = 1; i < len && p[i] != ']'; i++) {
			char c = kweb_http_lower(p[i]);

			colon |= c == ':';
			if (c == '.' && p[i - 1] == '.')
				return -EINVAL;
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
			      c == ':' || c == '.'))
				return -EINVAL;
		}
		if (i == len || !colon || i + 1 > KWEB_HOST_MAX ||
		    !kweb_host_port_ok(p + i + 1, len - i - 1))
			return -EINVAL;
		n = i + 1;
		for (i = 0; i < n; i++)
			out[i] = kweb_http_lower(p[i]);
		out[n] = '\0';
		return n;
	}

	for (n = 0; n < len && p[n] != ':'; n++) {
		char c = kweb_http_lower(p[n]);

		if (!kweb_host_name_char(c))
			return -EINVAL;
		/* No empty label: nothing starts with or holds "..". */
		if (c == '.' && (!n || p[n - 1] == '.'))
			return -EINVAL;
	}
	if (!kweb_host_port_ok(p + n, len - n))
		return -EINVAL;
	/* The root label's dot (RFC 1034 3.1) names the same host. */
	if (n && p[n - 1] == '.')
		n--;
	if (!n || n > KWEB_HOST_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++)
		out[i] = kweb_http_lower(p[i]);
	out[n] = '\0';
	return n;
}
