// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/http_parse.c: every error status, prefixes of valid
 * heads, the max_head limit, smuggling and framing cases.
 *
 * Inputs are copied into buffers of their exact size, so reading one byte
 * too far shows up under KASAN (and ASan in tests/pure).
 */
#include <kunit/test.h>

#include "http_parse.h"
#include "http_token.h"

#define MAX_HEAD 8192

/* Table entries and calls take string literals, so NULs inside count. */
#define E(name, lit, status) { name, lit, sizeof(lit) - 1, status }
#define K(name, lit, head_len, ka) { name, lit, sizeof(lit) - 1, head_len, ka }
#define PARSE(test, lit, max, req) parse(test, lit, sizeof(lit) - 1, max, req)

/* Most cases are about one field of an otherwise fine head. */
#define H11 "GET / HTTP/1.1\r\nHost: a\r\n"
#define TE "Transfer-Encoding: "
#define CL "Content-Length: "

static char *dup_exact(struct kunit *test, const char *s, size_t len)
{
	char *buf = kunit_kmalloc(test, len ? len : 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memcpy(buf, s, len);
	return buf;
}

static enum kweb_parse_result parse(struct kunit *test, const char *s,
				    size_t len, size_t max_head,
				    struct kweb_request *req)
{
	return kweb_http_parse(dup_exact(test, s, len), len, max_head, req);
}

static bool slice_is(struct kweb_str s, const char *want)
{
	return s.p && s.len == strlen(want) && !memcmp(s.p, want, s.len);
}

/* Heads that must be refused, and with which status. */
struct parse_err_case {
	const char *name;
	const char *in;
	size_t len;
	u16 status;
};

static const struct parse_err_case parse_err_cases[] = {
	/* request line */
	E("HTTP/0.9, no version", "GET /\r\n\r\n", 400),
	E("no target", "GET\r\n\r\n", 400),
	E("empty target", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("leading space", " GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("tab separator", "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("tab before version", "GET /\tHTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("two spaces before version", "GET /  HTTP/1.1\r\nHost: a\r\n\r\n",
	  400),
	E("method not a token", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("NUL in method", "GE\0 / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("CTL in target", "GET /a\x01 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("NUL in target", "GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("DEL in target", "GET /a\x7f HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("lower-case protocol", "GET / http/1.1\r\nHost: a\r\n\r\n", 400),
	E("no minor", "GET / HTTP/1\r\nHost: a\r\n\r\n", 400),
	E("two-digit major", "GET / HTTP/11.1\r\nHost: a\r\n\r\n", 400),
	E("two-digit minor", "GET / HTTP/1.10\r\nHost: a\r\n\r\n", 400),
	E("space after version", "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400),
	E("junk after version", "GET / HTTP/1.1x\r\nHost: a\r\n\r\n", 400),
	E("bare CR ends request line", "GET / HTTP/1.1\rHost: a\r\n\r\n", 400),
	E("nine empty lines first",
	  "\r\n\n\r\n\n\r\n\n\r\n\n\r\n"
	  H11 "\r\n", 400),
	E("bare CR before request line", "\rGET / HTTP/1.1\r\n\r\n", 400),
	/* versions */
	E("HTTP/2.0 request", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
	E("HTTP/0.9 request", "GET / HTTP/0.9\r\n\r\n", 505),
	E("HTTP/3.1 request", "GET / HTTP/3.1\r\nHost: a\r\n\r\n", 505),
	E("HTTP/9.9 request", "GET / HTTP/9.9\r\n", 505),
	E("bad h2 preface", "PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n", 505),
	E("h2 preface after empty line", "\r\nPRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
	  505),
	E("h2 preface with bare LF", "PRI * HTTP/2.0\n\r\nSM\r\n\r\n", 505),
	E("h2 preface other target", "PRI / HTTP/2.0\r\n\r\nSM\r\n\r\n", 505),
	/* field syntax */
	E("obs-fold", H11 "X: b\r\n c\r\n\r\n", 400),
	E("obs-fold with tab", H11 "X: b\r\n\tc\r\n\r\n", 400),
	E("space before first field", "GET / HTTP/1.1\r\n Host: a\r\n\r\n",
	  400),
	E("space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
	E("tab before colon", "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", 400),
	E("no colon", H11 "Junk\r\n\r\n", 400),
	E("empty name", H11 ": x\r\n\r\n", 400),
	E("name not a token", "GET / HTTP/1.1\r\nHo(st: a\r\n\r\n", 400),
	E("name with obs-text", H11 "X\xe9: a\r\n\r\n", 400),
	E("NUL in name", "GET / HTTP/1.1\r\nHo\0st: a\r\n\r\n", 400),
	E("NUL in value", H11 "X: a\0b\r\n\r\n", 400),
	E("CTL in value", H11 "X: a\x1b\r\n\r\n", 400),
	E("DEL in value", H11 "X: \x7f\r\n\r\n", 400),
	E("bare CR in value", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400),
	E("bare CR as blank line", H11 "\rX\r\n", 400),
	/* Host */
	E("no Host in 1.1", "GET / HTTP/1.1\r\n\r\n", 400),
	E("no Host in 1.2", "GET / HTTP/1.2\r\nX: y\r\n\r\n", 400),
	E("two Hosts", H11 "Host: a\r\n\r\n", 400),
	E("two Hosts, any case", "GET / HTTP/1.0\r\nhost: a\r\nHOST: b\r\n\r\n",
	  400),
	E("Host with space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
	E("Host with slash", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
	E("Host with backslash", "GET / HTTP/1.1\r\nHost: a\\b\r\n\r\n", 400),
	E("Host with dot-dot", "GET / HTTP/1.1\r\nHost: ..\r\n\r\n", 400),
	E("Host with obs-text", "GET / HTTP/1.1\r\nHost: \xe9\r\n\r\n", 400),
	E("Host with two ports", "GET / HTTP/1.1\r\nHost: a:9000:80\r\n\r\n",
	  400),
	E("Host with userinfo", "GET / HTTP/1.1\r\nHost: a@b.test\r\n\r\n",
	  400),
	E("Host [ without ]", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400),
	E("Host bad IPv6", "GET / HTTP/1.1\r\nHost: [ab..cd::1]\r\n\r\n",
	  400),
	E("Host bad escape", "GET / HTTP/1.1\r\nHost: a%zz\r\n\r\n", 400),
	E("Host port only", "GET / HTTP/1.1\r\nHost: :80\r\n\r\n", 400),
	/* absolute-form: its authority is checked as Host is */
	E("absolute-form two ports",
	  "GET http://host:9000:80/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form bad IPv6",
	  "GET http://[ab..cd::1]/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form [ without ]",
	  "GET http://[::1/x HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form ] without [",
	  "GET http://::1]/x HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form userinfo",
	  "GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form empty authority",
	  "GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form nothing after //",
	  "GET http:// HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form port only",
	  "GET http://:80/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form bad escape",
	  "GET http://a%zz/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form HTTPS, bad port",
	  "GET HTTPS://a:b/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form obs-text",
	  "GET http://\xe9/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form zone ID",
	  "GET http://[fe80::1%25eth0]/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
	E("absolute-form bad, in HTTP/1.0",
	  "GET http://a..b/ HTTP/1.0\r\n\r\n", 400),
	/* Content-Length */
	E("CL negative", H11 CL "-1\r\n\r\n", 400),
	E("CL plus sign", H11 CL "+1\r\n\r\n", 400),
	E("CL space inside", H11 CL "1 2\r\n\r\n", 400),
	E("CL list", H11 CL "5, 5\r\n\r\n", 400),
	E("CL empty", H11 CL "\r\n\r\n", 400),
	E("CL hex", H11 CL "0x1\r\n\r\n", 400),
	E("CL overflow", H11 CL "18446744073709551616\r\n\r\n", 400),
	E("CL far overflow", H11 CL "99999999999999999999999\r\n\r\n", 400),
	E("CL twice, equal", H11 CL "5\r\n" CL "5\r\n\r\n", 400),
	E("CL twice, differing", H11 CL "5\r\ncontent-length: 6\r\n\r\n", 400),
	/* Transfer-Encoding */
	E("CL then TE", H11 CL "5\r\n" TE "chunked\r\n\r\n", 400),
	E("TE then CL", H11 TE "chunked\r\n" CL "5\r\n\r\n", 400),
	E("TE in HTTP/1.0", "GET / HTTP/1.0\r\n" TE "chunked\r\n\r\n", 400),
	E("TE empty", H11 TE "\r\n\r\n", 400),
	E("TE only commas", H11 TE ", ,\r\n\r\n", 400),
	E("TE chunked twice", H11 TE "chunked, chunked\r\n\r\n", 400),
	E("TE chunked in two fields", H11 TE "chunked\r\n" TE "chunked\r\n\r\n",
	  400),
	E("TE quoted", H11 TE "\"chunked\"\r\n\r\n", 400),
	E("TE gzip", H11 TE "gzip\r\n\r\n", 501),
	E("TE gzip, chunked", H11 TE "gzip, chunked\r\n\r\n", 501),
	E("TE chunked, gzip", H11 TE "chunked, gzip\r\n\r\n", 501),
	E("TE identity", H11 TE "identity\r\n\r\n", 501),
	E("TE unknown", H11 TE "foo\r\n\r\n", 501),
	E("TE chunked with parameter", H11 TE "chunked;x=1\r\n\r\n", 501),
	E("TE xchunked", H11 TE "xchunked\r\n\r\n", 501),
	E("TE gzip, then chunked field", H11 TE "gzip\r\n" TE "chunked\r\n\r\n",
	  501),
};

static void parse_err_desc(const struct parse_err_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(parse_err, parse_err_cases, parse_err_desc);

static void parse_err_test(struct kunit *test)
{
	const struct parse_err_case *c = test->param_value;
	struct kweb_request req;

	KUNIT_ASSERT_EQ_MSG(test, parse(test, c->in, c->len, MAX_HEAD, &req),
			    KWEB_PARSE_ERROR, "%s", c->name);
	KUNIT_EXPECT_EQ_MSG(test, req.status, c->status, "%s", c->name);
}

/* Valid heads: the length parsed and the resulting keep-alive. */
struct parse_ok_case {
	const char *name;
	const char *in;
	size_t len;
	u32 head_len;		/* 0: all of in */
	bool keep_alive;
};

static const struct parse_ok_case parse_ok_cases[] = {
	K("1.1", H11 "\r\n", 0, true),
	K("1.0 without Host", "GET / HTTP/1.0\r\n\r\n", 0, false),
	K("1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	  0, true),
	K("1.0 Keep-Alive, any case",
	  "GET / HTTP/1.0\r\nconnection: Keep-ALIVE\r\n\r\n", 0, true),
	K("1.0 keep-alive in a list",
	  "GET / HTTP/1.0\r\nConnection: foo ,keep-alive , bar\r\n\r\n",
	  0, true),
	K("1.1 close", H11 "Connection: close\r\n\r\n", 0, false),
	K("1.1 CLOSE in a list", H11 "Connection: Upgrade, CLOSE\r\n\r\n",
	  0, false),
	K("close wins",
	  "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", 0, false),
	K("close wins across fields",
	  H11 "Connection: close\r\nConnection: keep-alive\r\n\r\n", 0, false),
	K("closed is not close", H11 "Connection: closed\r\n\r\n", 0, true),
	K("1.1 keep-alive", H11 "Connection: keep-alive\r\n\r\n", 0, true),
	K("1.2 is 1.1", "GET / HTTP/1.2\r\nHost: a\r\n\r\n", 0, true),
	K("bare LF", "GET / HTTP/1.1\nHost: a\n\n", 0, true),
	K("mixed line ends", "GET / HTTP/1.1\nHost: a\r\nX: y\n\r\n", 0, true),
	K("eight empty lines first",
	  "\r\n\n\r\n\n\r\n\n\r\n\n"
	  H11 "\r\n", 0, true),
	K("pipelined",
	  "GET /a HTTP/1.1\r\nHost: a\r\n\r\n"
	  "GET /b HTTP/1.1\r\n", 28, true),
	K("body after head", H11 CL "3\r\n\r\nabc", 46, true),
	K("garbage after head", "GET / HTTP/1.0\r\n\r\n\0\x01\r", 18, false),
	K("obs-text target", "GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n",
	  0, true),
	K("visible target chars",
	  "GET /a\"<>\\^`{|}~!$&'()*+,;=:@[]%zz?#x HTTP/1.1\r\n"
	  "Host: a\r\n\r\n", 0, true),
	K("absolute-form", "GET http://a/b HTTP/1.1\r\nHost: a\r\n\r\n", 0,
	  true),
	K("asterisk-form", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", 0, true),
	K("empty Host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 0, true),
	K("Host unreserved and sub-delims",
	  "GET / HTTP/1.1\r\nHost: a~b!$&'()*+,;=_-.test:80\r\n\r\n", 0, true),
	K("Host pct-encoded", "GET / HTTP/1.1\r\nHost: a%41.test\r\n\r\n", 0,
	  true),
	K("Host IPvFuture", "GET / HTTP/1.1\r\nHost: [v1.x]\r\n\r\n", 0,
	  true),
	K("absolute-form sub-delims and port",
	  "GET http://a~b.test:80/x?y HTTP/1.1\r\nHost: a\r\n\r\n", 0, true),
	K("absolute-form without path",
	  "GET http://a HTTP/1.1\r\nHost: a\r\n\r\n", 0, true),
	K("absolute-form query after authority",
	  "GET https://[::1]:8?b HTTP/1.1\r\nHost: a\r\n\r\n", 0, true),
	K("other schemes are the path's to refuse",
	  "GET ftp://a:b:c/ HTTP/1.1\r\nHost: a\r\n\r\n", 0, true),
	/* answered without reading the content, then closed */
	K("Expect: 100-continue with content closes",
	  H11 "Expect: 100-continue\r\n" CL "5\r\n\r\n", 0, false),
	K("Expect: 100-continue, content of 0",
	  H11 "Expect: 100-continue\r\n" CL "0\r\n\r\n", 0, true),
	K("Expect: 100-continue, no content",
	  H11 "Expect: 100-continue\r\n\r\n", 0, true),
	K("Expect: 100-continue ignored in 1.0",
	  "GET / HTTP/1.0\r\nConnection: keep-alive\r\n"
	  "Expect: 100-continue\r\n" CL "5\r\n\r\n", 0, true),
	K("Host IP literal", "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", 0,
	  true),
	K("Host reg-name chars",
	  "GET / HTTP/1.1\r\nHost: a-b_c~d!$&'()*+,;=%41.example:80\r\n\r\n",
	  0, true),
	K("value with tabs and obs-text", H11 "X:\t a \t\xff b\t \r\n\r\n", 0,
	  true),
	K("empty value", H11 "X:\r\n\r\n", 0, true),
	K("name of all tchars", H11 "!#$%&'*+-.^_`|~09AZaz: x\r\n\r\n", 0,
	  true),
	K("CL zero", H11 CL "0\r\n\r\n", 0, true),
	K("CL max", H11 CL "18446744073709551615\r\n\r\n", 0, true),
	K("TE chunked", H11 TE "chunked\r\n\r\n", 0, true),
	K("TE CHUNKED with empty elements", H11 TE ", CHUNKED ,\r\n\r\n", 0,
	  true),
	K("Range and If-Range repeated",
	  H11 "Range: bytes=0-1\r\nRange: bytes=0-1\r\n"
	  "If-Range: x\r\nIf-Range: y\r\n\r\n", 0, true),
};

static void parse_ok_desc(const struct parse_ok_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(parse_ok, parse_ok_cases, parse_ok_desc);

static void parse_ok_test(struct kunit *test)
{
	const struct parse_ok_case *c = test->param_value;
	u32 head_len = c->head_len ? c->head_len : c->len;
	struct kweb_request req;

	KUNIT_ASSERT_EQ_MSG(test, parse(test, c->in, c->len, MAX_HEAD, &req),
			    KWEB_PARSE_OK, "%s: status %u", c->name,
			    req.status);
	KUNIT_EXPECT_EQ_MSG(test, req.head_len, head_len, "%s", c->name);
	KUNIT_EXPECT_EQ_MSG(test, req.keep_alive, c->keep_alive, "%s",
			    c->name);
}

/*
 * Every proper prefix of a valid head is INCOMPLETE, never an error and
 * never OK: a head may arrive one byte at a time.
 */
static const char * const prefix_cases[] = {
	"GET /index.html HTTP/1.1\r\nHost: example.com\r\n"
	"Range: bytes=0-9\r\n\r\n",
	"GET / HTTP/1.0\n\n",
	"\r\n\nHEAD /a?b HTTP/1.1\nHost: a\r\nX:  \t\r\n"
	"If-None-Match: \"x\"\n\r\n",
	"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
	"GET http://a/ HTTP/1.9\r\nHost: a\r\nContent-Length: 12\r\n\r\n",
};

static void prefix_desc(const char * const *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%.40s", *c);
}

KUNIT_ARRAY_PARAM(prefix, prefix_cases, prefix_desc);

static void parse_prefix_test(struct kunit *test)
{
	const char *in = *(const char * const *)test->param_value;
	size_t len = strlen(in), n;
	struct kweb_request req;

	for (n = 0; n < len; n++)
		KUNIT_EXPECT_EQ_MSG(test, parse(test, in, n, MAX_HEAD, &req),
				    KWEB_PARSE_INCOMPLETE, "prefix of %zu", n);
	KUNIT_EXPECT_EQ(test, parse(test, in, len, MAX_HEAD, &req),
			KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.head_len, len);
}

/* A prefix that can never become valid is refused before the head ends. */
static const struct parse_err_case early_cases[] = {
	E("bad method byte", "G\x01", 400),
	E("NUL first", "\0", 400),
	E("bad version byte", "GET / HTTX", 400),
	E("CTL in target", "GET /\x1b", 400),
	E("0.9 line end", "GET /\r", 400),
	E("version 2", "GET / HTTP/2.0\r\n", 505),
	E("bad preface byte", "PRI * HTTP/2.0\r\n\r\nSX", 505),
	E("space before colon", "GET / HTTP/1.1\r\nHost ", 400),
	E("obs-fold", H11 " ", 400),
	E("NUL in value", "GET / HTTP/1.1\r\nX: \0", 400),
	E("bare CR in value", "GET / HTTP/1.1\r\nX: a\rb", 400),
	E("second Host", H11 "Host: a\r\n", 400),
	E("TE and CL", "GET / HTTP/1.1\r\n" CL "1\r\n" TE "chunked\r\n", 400),
	E("bad TE", "GET / HTTP/1.1\r\n" TE "gzip\r\n", 501),
};

static void early_desc(const struct parse_err_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(early, early_cases, early_desc);

static void parse_early_test(struct kunit *test)
{
	parse_err_test(test);
}

static void parse_incomplete_test(struct kunit *test)
{
	struct kweb_request req;

	/* A lone CR may still become CRLF. */
	KUNIT_EXPECT_EQ(test, PARSE(test, "GET / HTTP/1.1\r", MAX_HEAD, &req),
			KWEB_PARSE_INCOMPLETE);
	KUNIT_EXPECT_EQ(test, PARSE(test, H11 "\r", MAX_HEAD, &req),
			KWEB_PARSE_INCOMPLETE);
	KUNIT_EXPECT_EQ(test, PARSE(test, "\r", MAX_HEAD, &req),
			KWEB_PARSE_INCOMPLETE);
	/* A missing Host is only known once the head ends. */
	KUNIT_EXPECT_EQ(test, PARSE(test, "GET / HTTP/1.1\r\nX: y\r\n",
				    MAX_HEAD, &req), KWEB_PARSE_INCOMPLETE);
	/* Eight empty lines are allowed, and so is waiting after them. */
	KUNIT_EXPECT_EQ(test, PARSE(test, "\n\n\n\n\r\n\r\n\r\n\r\n",
				    MAX_HEAD, &req), KWEB_PARSE_INCOMPLETE);
	KUNIT_EXPECT_EQ(test, PARSE(test, "", MAX_HEAD, &req),
			KWEB_PARSE_INCOMPLETE);
}

static void parse_fields_test(struct kunit *test)
{
	static const char in[] =
		"GET /a/b?c=d HTTP/1.1\r\n"
		"hOST:  example.com:8080 \r\n"
		"RANGE:\tbytes=0-99\t\r\n"
		"If-Range: \"abc\"\r\n"
		"If-None-Match: W/\"x\", \"y\"\r\n"
		"If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
		"if-match: \"m\" \r\n"
		"If-Unmodified-Since: Sun, 06 Nov 1994 08:49:38 GMT\r\n"
		"Upgrade: h2c\r\n"
		"Expect: 100-Continue\r\n"
		"Content-Length: 007\r\n"
		"Referer: http://example.com/a?b \r\n"
		"user-agent: curl/7.88.1\r\n"
		"\r\n";
	struct kweb_request req;

	KUNIT_ASSERT_EQ(test, PARSE(test, in, MAX_HEAD, &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.method, KWEB_METHOD_GET);
	KUNIT_EXPECT_TRUE(test, slice_is(req.method_str, "GET"));
	KUNIT_EXPECT_TRUE(test, slice_is(req.target, "/a/b?c=d"));
	KUNIT_EXPECT_EQ(test, req.major, 1);
	KUNIT_EXPECT_EQ(test, req.minor, 1);
	KUNIT_EXPECT_TRUE(test, slice_is(req.host, "example.com:8080"));
	KUNIT_EXPECT_TRUE(test, slice_is(req.range, "bytes=0-99"));
	KUNIT_EXPECT_TRUE(test, slice_is(req.if_range, "\"abc\""));
	KUNIT_EXPECT_TRUE(test, slice_is(req.if_none_match, "W/\"x\", \"y\""));
	KUNIT_EXPECT_TRUE(test, slice_is(req.if_modified_since,
					 "Sun, 06 Nov 1994 08:49:37 GMT"));
	KUNIT_EXPECT_TRUE(test, slice_is(req.if_match, "\"m\""));
	KUNIT_EXPECT_TRUE(test, slice_is(req.if_unmodified_since,
					 "Sun, 06 Nov 1994 08:49:38 GMT"));
	KUNIT_EXPECT_TRUE(test, req.upgrade);
	KUNIT_EXPECT_TRUE(test, req.expect_continue);
	KUNIT_EXPECT_FALSE(test, req.keep_alive);
	KUNIT_EXPECT_TRUE(test, slice_is(req.referer, "http://example.com/a?b"));
	KUNIT_EXPECT_TRUE(test, slice_is(req.user_agent, "curl/7.88.1"));
	KUNIT_EXPECT_TRUE(test, req.has_content_length);
	KUNIT_EXPECT_EQ(test, req.content_length, 7);
	KUNIT_EXPECT_FALSE(test, req.chunked);
	KUNIT_EXPECT_FALSE(test, req.h2_preface);
	KUNIT_EXPECT_EQ(test, req.head_len, sizeof(in) - 1);
}

static void parse_absent_fields_test(struct kunit *test)
{
	struct kweb_request req;

	/* HTTP/1.0 ignores Upgrade and Expect: 100-continue */
	KUNIT_ASSERT_EQ(test, PARSE(test, "HEAD / HTTP/1.0\r\nUpgrade: h2c\r\n"
				    "Expect: 100-continue\r\n\r\n",
				    MAX_HEAD, &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.method, KWEB_METHOD_HEAD);
	KUNIT_EXPECT_EQ(test, req.minor, 0);
	KUNIT_EXPECT_NULL(test, req.host.p);
	KUNIT_EXPECT_NULL(test, req.range.p);
	KUNIT_EXPECT_NULL(test, req.if_range.p);
	KUNIT_EXPECT_NULL(test, req.if_none_match.p);
	KUNIT_EXPECT_NULL(test, req.if_modified_since.p);
	KUNIT_EXPECT_NULL(test, req.if_match.p);
	KUNIT_EXPECT_NULL(test, req.if_unmodified_since.p);
	KUNIT_EXPECT_NULL(test, req.referer.p);
	KUNIT_EXPECT_NULL(test, req.user_agent.p);
	KUNIT_EXPECT_FALSE(test, req.upgrade);
	KUNIT_EXPECT_FALSE(test, req.expect_continue);
	KUNIT_EXPECT_FALSE(test, req.has_content_length);

	/* Present but empty is told apart from absent. */
	KUNIT_ASSERT_EQ(test, PARSE(test, "GET / HTTP/1.1\r\nHost:\r\n"
				    "Range: \r\nUpgrade: \r\n"
				    "Expect: 100-continue, x\r\n\r\n",
				    MAX_HEAD, &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_FALSE(test, req.upgrade);
	KUNIT_EXPECT_FALSE(test, req.expect_continue);
	KUNIT_EXPECT_NOT_NULL(test, req.host.p);
	KUNIT_EXPECT_EQ(test, req.host.len, 0);
	KUNIT_EXPECT_NOT_NULL(test, req.range.p);
	KUNIT_EXPECT_EQ(test, req.range.len, 0);
}

/*
 * Field values are tested a word at a time: every byte value, at every
 * offset of the value's first two words, is refused or kept as the
 * byte-wise grammar says (field-content: VCHAR, obs-text, SP, HTAB).
 */
static void parse_value_bytes_test(struct kunit *test)
{
	static const char pre[] = "GET / HTTP/1.1\r\nHost: a\r\nX-V: ";
	char buf[sizeof(pre) - 1 + 20 + 4];
	struct kweb_request req;
	unsigned int c, off;

	for (c = 0; c < 256; c++) {
		bool ok = c == '\t' || (c >= 0x20 && c != 0x7f);

		if (c == '\r' || c == '\n')
			continue;	/* a line end: another head */
		for (off = 1; off < 19; off++) {
			size_t len = sizeof(pre) - 1;
			enum kweb_parse_result res;

			memcpy(buf, pre, len);
			memset(buf + len, 'v', 20);
			buf[len + off] = (char)c;
			len += 20;
			memcpy(buf + len, "\r\n\r\n", 4);
			len += 4;
			res = parse(test, buf, len, MAX_HEAD, &req);
			KUNIT_EXPECT_EQ_MSG(test, res, ok ? KWEB_PARSE_OK :
					    KWEB_PARSE_ERROR,
					    "byte %#x at %u", c, off);
			if (!ok)
				KUNIT_EXPECT_EQ(test, req.status, 400);
		}
	}
}

/* Names one byte off a known one, in length or spelling, are other fields. */
static void parse_near_names_test(struct kunit *test)
{
	struct kweb_request req;

	KUNIT_ASSERT_EQ(test, PARSE(test, "GET / HTTP/1.1\r\nHost: a\r\n"
				    "Hosts: b\r\nHos: c\r\nRange: bytes=1-\r\n"
				    "Ranges: x\r\nRangf: y\r\n"
				    "Upgradf: h2c\r\nRefererr: r\r\n"
				    "If-Matcf: \"m\"\r\nIf-Rangf: \"r\"\r\n"
				    "Connectioo: close\r\nUser-Agenr: u\r\n"
				    "Content-Lengtx: 5\r\n"
				    "Transfer-Encodinf: chunked\r\n"
				    "If-Modified-Sincf: x\r\n"
				    "If-Unmodified-Sinc: x\r\n"
				    "Accept-Encodings: gzip\r\n"
				    "Expecu: 100-continue\r\n\r\n",
				    MAX_HEAD, &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_TRUE(test, slice_is(req.host, "a"));
	KUNIT_EXPECT_TRUE(test, slice_is(req.range, "bytes=1-"));
	KUNIT_EXPECT_FALSE(test, req.upgrade);
	KUNIT_EXPECT_NULL(test, req.referer.p);
	KUNIT_EXPECT_NULL(test, req.if_match.p);
	KUNIT_EXPECT_NULL(test, req.if_range.p);
	KUNIT_EXPECT_TRUE(test, req.keep_alive);
	KUNIT_EXPECT_NULL(test, req.user_agent.p);
	KUNIT_EXPECT_FALSE(test, req.has_content_length);
	KUNIT_EXPECT_FALSE(test, req.chunked);
	KUNIT_EXPECT_NULL(test, req.if_modified_since.p);
	KUNIT_EXPECT_NULL(test, req.if_unmodified_since.p);
	KUNIT_EXPECT_EQ(test, req.accept_enc.listed, 0);
	KUNIT_EXPECT_FALSE(test, req.expect_continue);
}

/* GET and HEAD are case-sensitive; any other token is for the caller. */
static void parse_methods_test(struct kunit *test)
{
	struct kweb_request req;

	KUNIT_ASSERT_EQ(test, PARSE(test, "get / HTTP/1.0\r\n\r\n", MAX_HEAD,
				    &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.method, KWEB_METHOD_OTHER);
	KUNIT_EXPECT_TRUE(test, slice_is(req.method_str, "get"));

	KUNIT_ASSERT_EQ(test, PARSE(test, "Head / HTTP/1.0\r\n\r\n", MAX_HEAD,
				    &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.method, KWEB_METHOD_OTHER);

	KUNIT_ASSERT_EQ(test, PARSE(test, "GETS / HTTP/1.0\r\n\r\n", MAX_HEAD,
				    &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.method, KWEB_METHOD_OTHER);

	KUNIT_ASSERT_EQ(test, PARSE(test, "POST / HTTP/1.0\r\n\r\n", MAX_HEAD,
				    &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.method, KWEB_METHOD_OTHER);
	KUNIT_EXPECT_TRUE(test, slice_is(req.method_str, "POST"));

	KUNIT_ASSERT_EQ(test, PARSE(test, "HEAD / HTTP/1.0\r\n\r\n", MAX_HEAD,
				    &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.method, KWEB_METHOD_HEAD);

	KUNIT_ASSERT_EQ(test, PARSE(test, "M-SEARCH * HTTP/1.1\r\nHost: a\r\n"
				    "\r\n", MAX_HEAD, &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.method, KWEB_METHOD_OTHER);
	KUNIT_EXPECT_TRUE(test, slice_is(req.target, "*"));
}

static void parse_versions_test(struct kunit *test)
{
	struct kweb_request req;

	KUNIT_ASSERT_EQ(test, PARSE(test, "GET / HTTP/1.7\r\nHost: a\r\n\r\n",
				    MAX_HEAD, &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.major, 1);
	KUNIT_EXPECT_EQ(test, req.minor, 7);
	KUNIT_EXPECT_TRUE(test, req.keep_alive);

	KUNIT_ASSERT_EQ(test, PARSE(test, "GET / HTTP/1.0\r\n\r\n", MAX_HEAD,
				    &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.minor, 0);
	KUNIT_EXPECT_FALSE(test, req.keep_alive);
}

static void parse_h2_preface_test(struct kunit *test)
{
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	struct kweb_request req;

	/* With a frame after it: head_len still stops at the preface. */
	KUNIT_ASSERT_EQ(test, PARSE(test, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
				    "\0\0\x12\x04", MAX_HEAD, &req),
			KWEB_PARSE_OK);
	KUNIT_EXPECT_TRUE(test, req.h2_preface);
	KUNIT_EXPECT_EQ(test, req.head_len, 24);
	KUNIT_EXPECT_EQ(test, req.major, 2);
	KUNIT_EXPECT_EQ(test, req.minor, 0);

	KUNIT_EXPECT_EQ(test, parse(test, preface, 23, MAX_HEAD, &req),
			KWEB_PARSE_INCOMPLETE);
	KUNIT_EXPECT_EQ(test, parse(test, preface, 17, MAX_HEAD, &req),
			KWEB_PARSE_INCOMPLETE);
}

static void parse_dup_fields_test(struct kunit *test)
{
	struct kweb_request req;

	KUNIT_ASSERT_EQ(test, PARSE(test, H11
				    "Range: bytes=0-1\r\nrange: bytes=2-3\r\n"
				    "If-Range: \"a\"\r\nIF-RANGE: \"a\"\r\n"
				    "If-None-Match: \"1\"\r\n"
				    "If-None-Match: \"2\"\r\n"
				    "If-Modified-Since: one\r\n"
				    "If-Modified-Since: two\r\n"
				    "Referer: /r1\r\nReferer: /r2\r\n"
				    "User-Agent: u1\r\nUser-Agent: u2\r\n"
				    "If-Match: \"1\"\r\nIf-match: \"2\"\r\n"
				    "If-Unmodified-Since: one\r\n"
				    "if-unmodified-since: two\r\n"
				    "\r\n", MAX_HEAD, &req), KWEB_PARSE_OK);
	/* repeated Range and If-Range hold the repeated field's name */
	KUNIT_EXPECT_TRUE(test, slice_is(req.range, "range"));
	KUNIT_EXPECT_TRUE(test, slice_is(req.if_range, "IF-RANGE"));
	KUNIT_EXPECT_TRUE(test, slice_is(req.if_none_match, "\"1\""));
	KUNIT_EXPECT_TRUE(test, slice_is(req.referer, "/r1"));
	KUNIT_EXPECT_TRUE(test, slice_is(req.user_agent, "u1"));
	/* so do If-Match (412), the dates (ignored: RFC 9110 13.1.3-4) */
	KUNIT_EXPECT_TRUE(test, slice_is(req.if_modified_since,
					 "If-Modified-Since"));
	KUNIT_EXPECT_TRUE(test, slice_is(req.if_match, "If-match"));
	KUNIT_EXPECT_TRUE(test, slice_is(req.if_unmodified_since,
					 "if-unmodified-since"));

	/* and a third one changes nothing */
	KUNIT_ASSERT_EQ(test, PARSE(test, H11
				    "Range: a\r\nRange: b\r\nRange: c\r\n\r\n",
				    MAX_HEAD, &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_TRUE(test, slice_is(req.range, "Range"));
}

static void parse_framing_test(struct kunit *test)
{
	struct kweb_request req;

	KUNIT_ASSERT_EQ(test, PARSE(test, H11 TE "chunked\r\n\r\n", MAX_HEAD,
				    &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_TRUE(test, req.chunked);
	KUNIT_EXPECT_FALSE(test, req.has_content_length);

	KUNIT_ASSERT_EQ(test, PARSE(test, H11 CL "18446744073709551615\r\n"
				    "\r\n", MAX_HEAD, &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_FALSE(test, req.chunked);
	KUNIT_EXPECT_TRUE(test, req.has_content_length);
	KUNIT_EXPECT_EQ(test, req.content_length, ~0ULL);

	/* RFC 9112 2.2 lets us take a bare LF for a line end. */
	KUNIT_ASSERT_EQ(test, PARSE(test, "GET / HTTP/1.1\nHost: a\nX: b\n\n",
				    MAX_HEAD, &req), KWEB_PARSE_OK);
	KUNIT_EXPECT_TRUE(test, slice_is(req.host, "a"));
}

/*
 * max_head: a head that ends within it is fine; otherwise 414 while the
 * request line is still open, 431 once it has ended.
 */
static void parse_limits_test(struct kunit *test)
{
	/* the request line is 16 bytes, the head (H11 "\r\n") 27 */
	static const char line[] = "GET / HTTP/1.1\r\nX";
	struct kweb_request req;

	KUNIT_EXPECT_EQ(test, PARSE(test, H11 "\r\n", 27, &req),
			KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.head_len, 27);
	KUNIT_EXPECT_EQ(test, PARSE(test, H11 "\r\n", 26, &req),
			KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 431);
	/* more bytes than max_head, but the head ended in time */
	KUNIT_EXPECT_EQ(test, PARSE(test, H11 "\r\nGET / HTTP/1.1\r\n", 27,
				    &req), KWEB_PARSE_OK);

	/* the line ends exactly at max_head: 431 */
	KUNIT_EXPECT_EQ(test, parse(test, line, 16, 16, &req),
			KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 431);
	KUNIT_EXPECT_EQ(test, PARSE(test, line, 16, &req), KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 431);
	/* one byte short of its LF: 414 */
	KUNIT_EXPECT_EQ(test, parse(test, line, 15, 15, &req),
			KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 414);
	KUNIT_EXPECT_EQ(test, PARSE(test, line, 15, &req), KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 414);
	/* below max_head it is only incomplete */
	KUNIT_EXPECT_EQ(test, parse(test, line, 15, 16, &req),
			KWEB_PARSE_INCOMPLETE);
	KUNIT_EXPECT_EQ(test, parse(test, line, 16, 17, &req),
			KWEB_PARSE_INCOMPLETE);
	/* an error within max_head wins over the limit */
	KUNIT_EXPECT_EQ(test, PARSE(test, "GET /\x01xxxxxxxxxx", 8, &req),
			KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 400);
	/* leading empty lines count against the limit too */
	KUNIT_EXPECT_EQ(test, PARSE(test, "\r\n\r\nGET / HTTP/1.1\r\n", 6,
				    &req), KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 414);
}

/* KWEB_MAX_FIELDS field lines pass, one more is 431. */
static void parse_field_count_test(struct kunit *test)
{
	static const char line[] = "GET / HTTP/1.1\r\nHost: a\r\n";
	static const char field[] = "Xxxx: a\r\n";
	size_t fl = sizeof(field) - 1, ll = sizeof(line) - 1;
	size_t size = ll + KWEB_MAX_FIELDS * fl + 2;
	char *buf = kunit_kmalloc(test, size, GFP_KERNEL);
	struct kweb_request req;
	size_t len = ll;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	/* Host, then KWEB_MAX_FIELDS - 1 more */
	memcpy(buf, line, ll);
	for (i = 1; i < KWEB_MAX_FIELDS; i++, len += fl)
		memcpy(buf + len, field, fl);
	memcpy(buf + len, "\r\n", 2);
	KUNIT_EXPECT_EQ(test, kweb_http_parse(buf, len + 2, 1 << 20, &req),
			KWEB_PARSE_OK);
	KUNIT_EXPECT_EQ(test, req.head_len, len + 2);

	memcpy(buf + len, field, fl);
	memcpy(buf + len + fl, "\r\n", 2);
	KUNIT_EXPECT_EQ(test, kweb_http_parse(buf, size, 1 << 20, &req),
			KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 431);
	/* as soon as the extra line starts */
	KUNIT_EXPECT_EQ(test, kweb_http_parse(buf, len + 1, 1 << 20, &req),
			KWEB_PARSE_ERROR);
	KUNIT_EXPECT_EQ(test, req.status, 431);
}

/*
 * Feed lit to kweb_http_head_ready() byte by byte, as a client sending a
 * byte per segment would; clear ready as kweb_conn_read() does when the
 * parse finds the head incomplete. Returns the lengths at which it said
 * "parse now", up to max of them, and how many bytes it looked at.
 */
static unsigned int head_ready_points(struct kunit *test, const char *lit,
				      size_t len, size_t *points,
				      unsigned int max, size_t *looked)
{
	char *buf = dup_exact(test, lit, len);
	struct kweb_head_scan s = {};
	unsigned int n = 0;
	size_t i;

	*looked = 0;
	for (i = 1; i <= len; i++) {
		u32 before = s.pos;

		if (kweb_http_head_ready(buf, i, &s)) {
			if (n < max)
				points[n] = i;
			n++;
			s.ready = false;
		}
		*looked += s.pos - before;
	}
	return n;
}

static void head_ready_test(struct kunit *test)
{
	static const char crlf[] = "GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n\r\n";
	static const char lf[] = "GET / HTTP/1.1\nHost: a\n\n";
	size_t points[4], looked;
	unsigned int n;

	/* The request line's end, then the blank line's. */
	n = head_ready_points(test, crlf, sizeof(crlf) - 1, points, 4,
			      &looked);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, points[0], 16);
	KUNIT_EXPECT_EQ(test, points[1], sizeof(crlf) - 1);
	n = head_ready_points(test, lf, sizeof(lf) - 1, points, 4, &looked);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, points[0], 15);
	KUNIT_EXPECT_EQ(test, points[1], sizeof(lf) - 1);
}

/*
 * A head that came whole is ready without a scan; a tail that ends in a
 * blank line but holds no head yet is scanned as usual from then on.
 */
static void head_ready_tail_test(struct kunit *test)
{
	static const char whole[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	static const char empty[] = "\r\n\r\nGET / HTTP/1.1\r\n";
	struct kweb_head_scan s = {};

	KUNIT_EXPECT_TRUE(test, kweb_http_head_ready(whole, sizeof(whole) - 1,
						     &s));
	KUNIT_EXPECT_EQ(test, s.pos, 0);

	/*
	 * Two empty lines: ready by the tail, INCOMPLETE when parsed; then
	 * the scan starts from the first byte, and the tail is not looked
	 * at again.
	 */
	memset(&s, 0, sizeof(s));
	KUNIT_EXPECT_TRUE(test, kweb_http_head_ready(empty, 4, &s));
	KUNIT_EXPECT_EQ(test, s.pos, 0);
	s.ready = false;
	KUNIT_EXPECT_TRUE(test, kweb_http_head_ready(empty, 4, &s));
	KUNIT_EXPECT_EQ(test, s.pos, 2);
	s.ready = false;
	KUNIT_EXPECT_TRUE(test, kweb_http_head_ready(empty, 4, &s));
	KUNIT_EXPECT_EQ(test, s.pos, 4);
	s.ready = false;
	KUNIT_EXPECT_FALSE(test, kweb_http_head_ready(empty, sizeof(empty) - 3,
						      &s));
	KUNIT_EXPECT_EQ(test, s.pos, sizeof(empty) - 3);
}

/* Byte by byte, each byte is looked at a bounded number of times. */
static void head_ready_linear_test(struct kunit *test)
{
	size_t len = 4096, i, points[4], looked;
	char *buf = kunit_kmalloc(test, len, GFP_KERNEL);
	unsigned int n;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memcpy(buf, "GET / HTTP/1.1\r\n", 16);
	for (i = 16; i + 4 <= len; i += 4)
		memcpy(buf + i, "a:\r\n", 4);
	n = head_ready_points(test, buf, i, points, 4, &looked);
	KUNIT_EXPECT_EQ(test, n, 1);
	KUNIT_EXPECT_LE(test, looked, i);
	/* Stays ready until cleared, without looking again. */
	{
		struct kweb_head_scan s = {};

		KUNIT_EXPECT_TRUE(test, kweb_http_head_ready(buf, 16, &s));
		KUNIT_EXPECT_TRUE(test, kweb_http_head_ready(buf, i, &s));
		KUNIT_EXPECT_EQ(test, s.pos, 16);
	}
}

/*
 * Heads that arrive in pieces: each must get the answer it gets whole,
 * wherever it is split (issue 33: a blank line in a segment of its own
 * after the request line was never parsed).
 */
struct split_case {
	const char *name;
	const char *in;
	size_t len;
	size_t max;
};

#define SP(name, lit, max) { name, lit, sizeof(lit) - 1, max }

static const struct split_case split_cases[] = {
	SP("HTTP/1.0, no field", "GET /small.txt HTTP/1.0\r\n\r\n", MAX_HEAD),
	SP("HTTP/1.1 without Host: 400", "GET /small.txt HTTP/1.1\r\n\r\n",
	   MAX_HEAD),
	SP("fields", H11 "Range: bytes=0-1\r\nIf-None-Match: \"x\"\r\n\r\n",
	   MAX_HEAD),
	SP("bare LF", "GET / HTTP/1.1\nHost: a\nX: y\n\n", MAX_HEAD),
	SP("LF then CRLF", "GET / HTTP/1.0\n\r\n", MAX_HEAD),
	SP("leading empty lines", "\r\n\nGET / HTTP/1.0\r\n\r\n", MAX_HEAD),
	SP("pipelined", H11 "\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n", MAX_HEAD),
	SP("Content-Length and a body", H11 CL "3\r\n\r\nabc", MAX_HEAD),
	SP("a line without a colon: 400", H11 "Bad\r\n\r\n", MAX_HEAD),
	SP("bare CR in the blank line: 400", "GET / HTTP/1.0\r\n\r\r\n",
	   MAX_HEAD),
	SP("bare CR in a field: 400", H11 "X: a\rb\r\n\r\n", MAX_HEAD),
	SP("bad method byte: 400", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",
	   MAX_HEAD),
	SP("HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", MAX_HEAD),
	SP("HTTP/3.0: 505", "GET / HTTP/3.0\r\nHost: a\r\n\r\n", MAX_HEAD),
	SP("head over max: 431", H11 "X: 0123456789abcdef\r\n\r\n", 32),
	SP("request line over max: 414",
	   "GET /0123456789abcdef0123456789 HTTP/1.1\r\nHost: a\r\n\r\n", 24),
};

static void split_desc(const struct split_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(split, split_cases, split_desc);

struct split_out {
	enum kweb_parse_result res;
	u16 status;
	u32 head_len;
};

/*
 * What kweb_conn_read() makes of buf arriving in segments that end at
 * ends[0..n): a parse whenever the scanner says so (or max is reached),
 * its ready cleared when the head is still incomplete.
 */
static void split_feed(const char *buf, size_t max, const size_t *ends,
		       unsigned int n, struct split_out *o)
{
	struct kweb_head_scan s = {};
	struct kweb_request req;
	unsigned int k;

	memset(o, 0, sizeof(*o));
	o->res = KWEB_PARSE_INCOMPLETE;
	for (k = 0; k < n; k++) {
		if (!kweb_http_head_ready(buf, ends[k], &s) && ends[k] < max)
			continue;
		o->res = kweb_http_parse(buf, ends[k], max, &req);
		if (o->res != KWEB_PARSE_INCOMPLETE) {
			o->status = o->res == KWEB_PARSE_ERROR ? req.status : 0;
			o->head_len = o->res == KWEB_PARSE_OK ? req.head_len : 0;
			return;
		}
		s.ready = false;
	}
}

static void split_expect(struct kunit *test, const struct split_out *want,
			 const size_t *ends, unsigned int n, const char *buf,
			 size_t max, const char *how)
{
	struct split_out got;

	split_feed(buf, max, ends, n, &got);
	KUNIT_EXPECT_EQ_MSG(test, got.res, want->res, "%s at %zu", how,
			    ends[0]);
	KUNIT_EXPECT_EQ_MSG(test, got.status, want->status, "%s at %zu", how,
			    ends[0]);
	KUNIT_EXPECT_EQ_MSG(test, got.head_len, want->head_len, "%s at %zu",
			    how, ends[0]);
}

static void split_test(struct kunit *test)
{
	const struct split_case *c = test->param_value;
	char *buf = dup_exact(test, c->in, c->len);
	size_t *ends = kunit_kmalloc(test, (c->len + 1) * sizeof(*ends),
				     GFP_KERNEL);
	struct split_out want;
	unsigned int n;
	size_t i, j;

	KUNIT_ASSERT_NOT_NULL(test, ends);
	/* Whole: the answer every split must give. */
	ends[0] = c->len;
	split_feed(buf, c->max, ends, 1, &want);
	KUNIT_ASSERT_NE(test, want.res, KWEB_PARSE_INCOMPLETE);

	/* One byte at a time. */
	for (i = 0; i < c->len; i++)
		ends[i] = i + 1;
	split_expect(test, &want, ends, c->len, buf, c->max, "bytewise");

	/* A segment per line, and a segment per line end's LF. */
	for (n = 0, i = 0; i < c->len; i++)
		if (c->in[i] == '\n' || i + 1 == c->len)
			ends[n++] = i + 1;
	split_expect(test, &want, ends, n, buf, c->max, "per line");
	for (n = 0, i = 0; i < c->len; i++)
		if (c->in[i] == '\n' && i)
			ends[n++] = i;
	ends[n++] = c->len;
	split_expect(test, &want, ends, n, buf, c->max, "before each LF");

	/* Every one and every two split points: three segments at most. */
	for (i = 1; i < c->len; i++) {
		for (j = i; j < c->len; j++) {
			size_t e[3] = { i, j, c->len };

			split_expect(test, &want, e, 3, buf, c->max, "split");
		}
	}
}

static struct kunit_case kweb_http_parse_cases[] = {
	KUNIT_CASE_PARAM(parse_err_test, parse_err_gen_params),
	KUNIT_CASE_PARAM(parse_ok_test, parse_ok_gen_params),
	KUNIT_CASE_PARAM(parse_prefix_test, prefix_gen_params),
	KUNIT_CASE_PARAM(parse_early_test, early_gen_params),
	KUNIT_CASE(parse_incomplete_test),
	KUNIT_CASE(parse_fields_test),
	KUNIT_CASE(parse_absent_fields_test),
	KUNIT_CASE(parse_near_names_test),
	KUNIT_CASE(parse_value_bytes_test),
	KUNIT_CASE(parse_methods_test),
	KUNIT_CASE(parse_versions_test),
	KUNIT_CASE(parse_h2_preface_test),
	KUNIT_CASE(parse_dup_fields_test),
	KUNIT_CASE(parse_framing_test),
	KUNIT_CASE(parse_limits_test),
	KUNIT_CASE(parse_field_count_test),
	KUNIT_CASE(head_ready_test),
	KUNIT_CASE(head_ready_linear_test),
	KUNIT_CASE(head_ready_tail_test),
	KUNIT_CASE_PARAM(split_test, split_gen_params),
	{}
};

static struct kunit_suite kweb_http_parse_suite = {
	.name = "kweb_http_parse",
	.test_cases = kweb_http_parse_cases,
};

kunit_test_suite(kweb_http_parse_suite);
