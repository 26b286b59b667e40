// SPDX-License-Identifier: GPL-2.0
/*
 * An authority (RFC 3986 3.2.2), the Host field's and an absolute-form
 * target's, checked the one way for both; and a virtual host's directory,
 * as TUX's virtual_server and nginx's server_name see it: case-insensitive,
 * port ignored, "example.com." the same as "example.com". The directory is
 * used as a path component, so it can never be "", "." or "..", nor hold
 * '/', '\\' or NUL: only host names of letters, digits, '-', '_' and '.'
 * get one. Any other valid host (a '%', a sub-delim, an IPvFuture) is
 * served from the default directory, as nginx's default server answers a
 * name no server_name has.
 */
#include "http_host.h"
#include "http_token.h"

/* IPv4address: four dec-octets, 0 to 255 without leading zeros. */
static bool kweb_host_ipv4(const char *p, size_t len)
{
	size_t i = 0;
	int parts;

	for (parts = 0; parts < 4; parts++) {
		size_t s = i;
		unsigned int v = 0;

		if (parts) {
			if (i == len || p[i] != '.')
				return false;
			s = ++i;
		}
		while (i < len && kweb_http_is(p[i], KWEB_CT_DIGIT) && i - s < 3)
			v = v * 10 + (p[i++] - '0');
		if (i == s || v > 255 || (p[s] == '0' && i - s > 1))
			return false;
	}
	return i == len;
}

/*
 * IPv6address (RFC 3986 3.2.2): eight groups of 1 to 4 hex digits, the
 * last two of which may be an IPv4address, with at most one "::" standing
 * for one or more groups of zeros.
 */
static bool kweb_host_ipv6(const char *p, size_t len)
{
	bool gap = false;
	int groups = 0;
	size_t i = 0;

	if (len >= 2 && p[0] == ':' && p[1] == ':') {
		gap = true;
		i = 2;
	}
	while (i < len) {
		size_t s = i;

		while (i < len && kweb_http_is(p[i], KWEB_CT_HEX) && i - s < 5)
			i++;
		if (i < len && p[i] == '.') {
			/* The IPv4 tail ends the address. */
			if (!kweb_host_ipv4(p + s, len - s))
				return false;
			groups += 2;
			break;
		}
		if (i == s || i - s > 4)
			return false;
		groups++;
		if (i == len)
			break;
		if (p[i++] != ':' || i == len)
			return false;
		if (p[i] == ':') {
			if (gap)
				return false;
			gap = true;
			i++;
		}
	}
	return gap ? groups <= 7 : groups == 8;
}

/* IPvFuture: "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ) */
static bool kweb_host_ipvfuture(const char *p, size_t len)
{
	size_t i = 1;

	if (!len || (p[0] != 'v' && p[0] != 'V'))
		return false;
	while (i < len && kweb_http_is(p[i], KWEB_CT_HEX))
		i++;
	if (i == 1 || i == len || p[i] != '.' || ++i == len)
		return false;
	for (; i < len; i++)
		if (!kweb_http_is(p[i], KWEB_CT_HOST) && p[i] != ':')
			return false;
	return true;
}

/*
 * The host part of p[0, len): its length, or -EINVAL. A reg-name is
 * *( unreserved / pct-encoded / sub-delims ) (an IPv4address is one), but
 * an empty one is refused (RFC 9110 4.2.1: an "http" URI has a host), and
 * so is "..", like nginx: no DNS name has it, and it must never come near
 * a file path.
 */
static int kweb_host_part(const char *p, size_t len)
{
	bool dot = false;
	size_t i;

	if (len && p[0] == '[') {
		for (i = 1; i < len && p[i] != ']'; i++)
			;
		if (i == len)
			return -EINVAL;
		if (!kweb_host_ipv6(p + 1, i - 1) &&
		    !kweb_host_ipvfuture(p + 1, i - 1))
			return -EINVAL;
		for (i = 1; p[i] != ']'; i++)
			if (p[i] == '.' && p[i - 1] == '.')
				return -EINVAL;
		return i + 1;
	}
	for (i = 0; i < len; i++) {
		char c = p[i];

		/* Every request's Host: the common bytes tested first. */
		if (likely(kweb_http_is(c, KWEB_CT_HOST))) {
			if (c == '.') {
				if (dot)
					return -EINVAL;
				dot = true;
			} else {
				dot = false;
			}
			continue;
		}
		if (c == ':')
			break;
		if (c != '%' || len - i < 3 ||
		    !kweb_http_is(p[i + 1], KWEB_CT_HEX) ||
		    !kweb_http_is(p[i + 2], KWEB_CT_HEX))
			return -EINVAL;
		dot = false;
		i += 2;
	}
	return i ? (int)i : -EINVAL;
}

bool kweb_authority_ok(const char *p, size_t len)
{
	int n = kweb_host_part(p, len);
	size_t i;

	if (n < 0)
		return false;
	/* [ ":" port ], port = *DIGIT */
	if ((size_t)n == len)
		return true;
	if (p[n] != ':')
		return false;
	for (i = n + 1; i < len; i++)
		if (!kweb_http_is(p[i], KWEB_CT_DIGIT))
			return false;
	return true;
}

/* A host name that may be a directory: LDH and '_' labels, none empty. */
static bool kweb_host_is_name(const char *p, size_t n)
{
	size_t i;

	if (!n || n > KWEB_HOST_MAX)
		return false;
	for (i = 0; i < n; i++) {
		char c = kweb_http_lower(p[i]);

		if (c == '.') {
			if (!i || p[i - 1] == '.')
				return false;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || kweb_http_is(c, KWEB_CT_DIGIT) ||
		      c == '-' || c == '_'))
			return false;
	}
	return true;
}

/* An IPv6 literal that may be a directory: hex, ':' and '.' in brackets. */
static bool kweb_host_is_v6(const char *p, size_t n)
{
	return n > 2 && n <= KWEB_HOST_MAX && kweb_host_ipv6(p + 1, n - 2);
}

int kweb_host_dir(const char *p, size_t len, char *out)
{
	size_t i;
	int n;

	out[0] = '\0';
	if (!len)
		return 0;
	if (!kweb_authority_ok(p, len))
		return -EINVAL;
	n = kweb_host_part(p, len);
	if (p[0] == '[') {
		if (!kweb_host_is_v6(p, n))
			return 0;
	} else {
		/* The root label's dot (RFC 1034 3.1) names the same host. */
		if (n > 1 && p[n - 1] == '.')
			n--;
		if (!kweb_host_is_name(p, n))
			return 0;
	}
	for (i = 0; i < (size_t)n; i++)
		out[i] = kweb_http_lower(p[i]);
	out[n] = '\0';
	return n;
}
