// SPDX-License-Identifier: GPL-2.0
/*
 * Response header and error body formatting. Pure logic: the module, the
 * KUnit suites and user-space tools build this file unchanged.
 */
#include "http_date.h"
#include "http_token.h"
#include "response.h"

struct kweb_reason {
	u16 status;
	const char *text;
};

static const struct kweb_reason kweb_reasons[] = {
	{ 200, "OK" },
	{ 206, "Partial Content" },
	{ 301, "Moved Permanently" },
	{ 304, "Not Modified" },
	{ 400, "Bad Request" },
	{ 403, "Forbidden" },
	{ 404, "Not Found" },
	{ 408, "Request Timeout" },
	{ 412, "Precondition Failed" },
	{ 414, "URI Too Long" },
	{ 416, "Range Not Satisfiable" },
	{ 431, "Request Header Fields Too Large" },
	{ 500, "Internal Server Error" },
	{ 501, "Not Implemented" },
	{ 502, "Bad Gateway" },
	{ 503, "Service Unavailable" },
	{ 505, "HTTP Version Not Supported" },
};

const char *kweb_status_reason(u16 status)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kweb_reasons); i++)
		if (kweb_reasons[i].status == status)
			return kweb_reasons[i].text;
	return "Unknown";
}

/*
 * Appends to a bounded buffer; remembers overflow instead of failing.
 * One byte stays free for the NUL that kweb_out_end() writes.
 */
struct kweb_out {
	char *buf;
	size_t size;
	size_t len;
	bool overflow;
};

/*
 * Inlined, like kweb_out_str(): most appends are literals, whose copy
 * then compiles to a few moves. An append after an overflow may still
 * fit; the result is -ENOSPC all the same.
 */
static __always_inline void kweb_out_mem(struct kweb_out *o, const char *s,
					 size_t n)
{
	if (unlikely(o->size - o->len <= n)) {
		o->overflow = true;
		return;
	}
	kweb_copy_short(o->buf + o->len, s, n);
	o->len += n;
}

static __always_inline void kweb_out_str(struct kweb_out *o, const char *s)
{
	kweb_out_mem(o, s, strlen(s));
}

/* NUL-terminate: the length, or -ENOSPC if something did not fit. */
static int kweb_out_end(struct kweb_out *o)
{
	if (o->size)
		o->buf[o->len] = '\0';
	return o->overflow ? -ENOSPC : (int)o->len;
}

/* Two digits a division: a length is formatted into every response. */
static void kweb_out_u64(struct kweb_out *o, u64 v)
{
	char tmp[20];
	int i = sizeof(tmp);

	while (v >= 100) {
		unsigned int r = v % 100;

		v /= 100;
		tmp[--i] = '0' + r % 10;
		tmp[--i] = '0' + r / 10;
	}
	if (v >= 10)
		tmp[--i] = '0' + v % 10;
	tmp[--i] = '0' + (v >= 10 ? v / 10 : v);
	kweb_out_mem(o, tmp + i, sizeof(tmp) - i);
}

/* RFC 3986 pchar and '/', less '%': everything else is escaped. */
static bool kweb_path_char_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("-._~!$&'()*+,;=:@/", c);
}

static void kweb_out_path(struct kweb_out *o, const char *p, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = p[i];
		char esc[3] = { '%', hex[c >> 4], hex[c & 15] };

		if (c && kweb_path_char_ok(c))
			kweb_out_mem(o, p + i, 1);
		else
			kweb_out_mem(o, esc, 3);
	}
}

static __always_inline void kweb_out_field(struct kweb_out *o,
					   const char *name,
					   const char *value)
{
	kweb_out_str(o, name);
	kweb_out_str(o, ": ");
	kweb_out_str(o, value);
	kweb_out_str(o, "\r\n");
}

/* A date field: an IMF-fixdate is always as long. */
static __always_inline void kweb_out_date(struct kweb_out *o,
					  const char *name, const char *date)
{
	kweb_out_str(o, name);
	kweb_out_str(o, ": ");
	kweb_out_mem(o, date, KWEB_HTTP_DATE_LEN);
	kweb_out_str(o, "\r\n");
}

/* What a file's 200 says of it, as kweb_resp_file_fields() has it. */
static __always_inline void kweb_out_file_fields(struct kweb_out *o,
						 const char *content_type,
						 bool has_length, u64 length,
						 const char *last_modified)
{
	if (content_type)
		kweb_out_field(o, "Content-Type", content_type);
	if (has_length) {
		kweb_out_str(o, "Content-Length: ");
		kweb_out_u64(o, length);
		kweb_out_str(o, "\r\n");
	}
	if (last_modified)
		kweb_out_date(o, "Last-Modified", last_modified);
}

int kweb_resp_file_fields(char *buf, size_t size, const char *content_type,
			  u64 length, const char *last_modified)
{
	struct kweb_out o = { .buf = buf, .size = size };

	kweb_out_file_fields(&o, content_type, true, length, last_modified);
	return kweb_out_end(&o);
}

int kweb_resp_format(char *buf, size_t size, const struct kweb_resp_hdr *h)
{
	struct kweb_out o = { .buf = buf, .size = size };

	/* The first lines of nearly every response, as one copy. */
	if (h->status == 200) {
		kweb_out_str(&o, "HTTP/1.1 200 OK\r\nServer: kweb\r\nDate: ");
	} else {
		kweb_out_str(&o, "HTTP/1.1 ");
		kweb_out_u64(&o, h->status);
		kweb_out_str(&o, " ");
		kweb_out_str(&o, kweb_status_reason(h->status));
		kweb_out_str(&o, "\r\nServer: kweb\r\nDate: ");
	}
	kweb_out_mem(&o, h->date, KWEB_HTTP_DATE_LEN);
	kweb_out_str(&o, "\r\n");
	if (h->file_fields.len)
		kweb_out_mem(&o, h->file_fields.p, h->file_fields.len);
	else
		kweb_out_file_fields(&o, h->content_type, h->has_length,
				     h->length, h->last_modified);
	if (h->close)
		kweb_out_str(&o, "Connection: close\r\n");
	else if (h->keep_alive)
		kweb_out_str(&o, "Connection: keep-alive\r\n");
	if (h->vary)
		kweb_out_str(&o, "Vary: Accept-Encoding\r\n");
	if (h->content_encoding)
		kweb_out_field(&o, "Content-Encoding", h->content_encoding);
	if (h->etag.len) {
		kweb_out_str(&o, "ETag: ");
		kweb_out_mem(&o, h->etag.p, h->etag.len);
		kweb_out_str(&o, "\r\n");
	}
	if (h->expires)
		kweb_out_date(&o, "Expires", h->expires);
	if (h->cache_control.len) {
		kweb_out_str(&o, "Cache-Control: ");
		kweb_out_mem(&o, h->cache_control.p, h->cache_control.len);
		kweb_out_str(&o, "\r\n");
	}
	if (h->location.len) {
		kweb_out_str(&o, "Location: ");
		kweb_out_path(&o, h->location.p, h->location.len);
		kweb_out_str(&o, "/\r\n");
	} else if (h->redirect.len) {
		kweb_out_str(&o, "Location: ");
		kweb_out_mem(&o, h->redirect.p, h->redirect.len);
		kweb_out_str(&o, "\r\n");
	}
	if (h->hsts) {
		kweb_out_str(&o, "Strict-Transport-Security: max-age=");
		kweb_out_u64(&o, h->hsts);
		if (h->hsts_subdomains)
			kweb_out_str(&o, "; includeSubDomains");
		kweb_out_str(&o, "\r\n");
	}
	if (h->content_range) {
		kweb_out_str(&o, "Content-Range: bytes ");
		kweb_out_u64(&o, h->first);
		kweb_out_str(&o, "-");
		kweb_out_u64(&o, h->last);
		kweb_out_str(&o, "/");
		kweb_out_u64(&o, h->size);
		kweb_out_str(&o, "\r\n");
	} else if (h->unsatisfied_range) {
		kweb_out_str(&o, "Content-Range: bytes */");
		kweb_out_u64(&o, h->size);
		kweb_out_str(&o, "\r\n");
	}
	if (h->accept_ranges)
		kweb_out_str(&o, "Accept-Ranges: bytes\r\n");
	kweb_out_str(&o, "\r\n");
	return kweb_out_end(&o);
}

int kweb_error_body(char *buf, size_t size, u16 status)
{
	struct kweb_out o = { .buf = buf, .size = size };
	const char *reason = kweb_status_reason(status);
	int i;

	kweb_out_str(&o, "<html>\r\n<head><title>");
	for (i = 0; i < 2; i++) {
		kweb_out_u64(&o, status);
		kweb_out_str(&o, " ");
		kweb_out_str(&o, reason);
		kweb_out_str(&o, i ? "</h1></center>\r\n"
				   : "</title></head>\r\n<body>\r\n<center><h1>");
	}
	kweb_out_str(&o, "<hr><center>kweb</center>\r\n</body>\r\n</html>\r\n");
	return kweb_out_end(&o);
}
