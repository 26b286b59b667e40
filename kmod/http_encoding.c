// SPDX-License-Identifier: GPL-2.0
/*
 * Accept-Encoding (RFC 9110 12.5.3) for kweb's precompressed files:
 *
 *   Accept-Encoding = #( codings [ OWS ";" OWS "q=" qvalue ] )
 *   codings = content-coding / "identity" / "*"
 *   qvalue  = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
 *
 * Codings are case-insensitive, and so is "q"; "x-gzip" is gzip (8.4.1.3).
 * A coding named with q=0 is refused even if named again with a weight;
 * "*" stands for every coding not named. An element that does not follow
 * the grammar is ignored: it can only make kweb send less compressed
 * bytes, never bytes a client refused. Weights other than 0 do not order
 * anything here: of what is acceptable, br is sent before gzip, as nginx
 * does with both brotli_static and gzip_static on.
 */
#include "http_encoding.h"
#include "http_token.h"

/* qvalue: 1 if above 0, 0 if 0, -1 if not a qvalue. */
static int kweb_ae_qvalue(const char *p, size_t len)
{
	bool nonzero = false;
	size_t i;

	if (!len || (p[0] != '0' && p[0] != '1'))
		return -1;
	if (len > 1 && (p[1] != '.' || len > 5))
		return -1;
	for (i = 2; i < len; i++) {
		if (p[i] < '0' || p[i] > '9' || (p[0] == '1' && p[i] != '0'))
			return -1;
		nonzero |= p[i] != '0';
	}
	return p[0] == '1' || nonzero;
}

/* The bit an element's coding stands for; 0 for codings kweb has not. */
static u8 kweb_ae_coding_bit(const char *p, size_t len)
{
	if (kweb_http_ieq(p, len, "br"))
		return KWEB_ENC_BIT(KWEB_ENC_BR);
	if (kweb_http_ieq(p, len, "gzip") || kweb_http_ieq(p, len, "x-gzip"))
		return KWEB_ENC_BIT(KWEB_ENC_GZIP);
	if (len == 1 && p[0] == '*')
		return KWEB_ENC_BIT(KWEB_ENC_NR);
	return 0;
}

/* One element, p[0, len), trimmed of OWS on both sides. */
static void kweb_ae_element(struct kweb_accept_enc *a, const char *p,
			    size_t len)
{
	size_t i = 0, tok;
	int q = 1;
	u8 bit;

	while (i < len && kweb_http_tchar(p[i]))
		i++;
	tok = i;
	if (!tok)
		return;
	if (i < len) {
		while (i < len && kweb_http_ows(p[i]))
			i++;
		if (i == len || p[i++] != ';')
			return;
		while (i < len && kweb_http_ows(p[i]))
			i++;
		if (len - i < 2 || (p[i] != 'q' && p[i] != 'Q') ||
		    p[i + 1] != '=')
			return;
		q = kweb_ae_qvalue(p + i + 2, len - i - 2);
		if (q < 0)
			return;
	}
	bit = kweb_ae_coding_bit(p, tok);
	if (q)
		a->listed |= bit;
	else
		a->refused |= bit;
}

void kweb_accept_encoding_add(struct kweb_accept_enc *a, const char *p,
			      size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t s, e;

		while (i < len && (kweb_http_ows(p[i]) || p[i] == ','))
			i++;
		s = i;
		while (i < len && p[i] != ',')
			i++;
		e = i;
		while (e > s && kweb_http_ows(p[e - 1]))
			e--;
		if (e > s)
			kweb_ae_element(a, p + s, e - s);
	}
}

u8 kweb_accept_encoding_mask(const struct kweb_accept_enc *a)
{
	u8 star = KWEB_ENC_BIT(KWEB_ENC_NR);
	u8 named = (a->listed | a->refused) & KWEB_ENC_ALL;
	u8 ok = a->listed & ~a->refused & KWEB_ENC_ALL;

	/* "*" is every coding the field does not name (RFC 9110 12.5.3). */
	if ((a->listed & star) && !(a->refused & star))
		ok |= KWEB_ENC_ALL & ~named;
	return ok;
}

/*
 * nginx's gzip_static, with gzip_http_version 1.1 and gzip_proxied off
 * (its defaults), sends no gzip to HTTP/1.0 or through a proxy: such
 * caches may not keep the variants apart. brotli_static checks neither.
 */
u8 kweb_encoding_sendable(u8 accepted, bool http10, bool via)
{
	if (http10 || via)
		accepted &= ~KWEB_ENC_BIT(KWEB_ENC_GZIP);
	return accepted;
}

enum kweb_encoding kweb_encoding_choose(u8 accepted, u8 available)
{
	u8 both = accepted & available;
	int e;

	for (e = 0; e < KWEB_ENC_NR; e++)
		if (both & KWEB_ENC_BIT(e))
			return e;
	return KWEB_ENC_IDENTITY;
}

/* Content-Encoding values and file name suffixes, by enum kweb_encoding. */
static const struct {
	const char *name;
	const char *suffix;
} kweb_encodings[KWEB_ENC_IDENTITY + 1] = {
	[KWEB_ENC_BR] = { "br", ".br" },
	[KWEB_ENC_GZIP] = { "gzip", ".gz" },
	[KWEB_ENC_IDENTITY] = { "identity", "" },
};

const char *kweb_encoding_name(enum kweb_encoding e)
{
	return kweb_encodings[e < KWEB_ENC_NR ? e : KWEB_ENC_IDENTITY].name;
}

const char *kweb_encoding_suffix(enum kweb_encoding e)
{
	return kweb_encodings[e < KWEB_ENC_NR ? e : KWEB_ENC_IDENTITY].suffix;
}
