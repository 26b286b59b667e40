// SPDX-License-Identifier: GPL-2.0
/* KUnit: response header and error body formatting (kmod/response.c). */
#include <kunit/test.h>

#include "response.h"

#define DATE "Sun, 06 Nov 1994 08:49:37 GMT"

static void kweb_resp_200(struct kunit *test)
{
	char buf[512];
	struct kweb_resp_hdr h = {
		.status = 200, .date = DATE, .content_type = "text/plain",
		.has_length = true, .length = 1234, .last_modified = DATE,
		.etag = { "\"1-2\"", 5 }, .accept_ranges = true,
	};
	int n = kweb_resp_format(buf, sizeof(buf), &h);

	KUNIT_ASSERT_GT(test, n, 0);
	KUNIT_EXPECT_STREQ(test, buf,
			   "HTTP/1.1 200 OK\r\nServer: kweb\r\n"
			   "Date: " DATE "\r\nContent-Type: text/plain\r\n"
			   "Content-Length: 1234\r\nLast-Modified: " DATE "\r\n"
			   "ETag: \"1-2\"\r\nAccept-Ranges: bytes\r\n\r\n");
	KUNIT_EXPECT_EQ(test, n, (int)strlen(buf));
}

/*
 * A cached file's fields, made once, make the same header as the fields
 * they stand for; the three fields given beside them are not looked at.
 */
static void kweb_resp_file_fields_same(struct kunit *test)
{
	char buf[512], made[512], fields[KWEB_FILE_FIELDS_MAX];
	struct kweb_resp_hdr h = {
		.status = 200, .date = DATE, .content_type = "text/plain",
		.has_length = true, .length = 1234, .last_modified = DATE,
		.etag = { "\"1-2\"", 5 }, .accept_ranges = true,
	};
	int n, f;

	n = kweb_resp_format(buf, sizeof(buf), &h);
	f = kweb_resp_file_fields(fields, sizeof(fields), "text/plain", 1234,
				  DATE);
	KUNIT_ASSERT_GT(test, f, 0);
	KUNIT_EXPECT_STREQ(test, fields,
			   "Content-Type: text/plain\r\nContent-Length: 1234\r\n"
			   "Last-Modified: " DATE "\r\n");
	h.file_fields.p = fields;
	h.file_fields.len = f;
	h.content_type = "x/y";
	h.length = 1;
	h.last_modified = NULL;
	KUNIT_EXPECT_EQ(test, kweb_resp_format(made, sizeof(made), &h), n);
	KUNIT_EXPECT_STREQ(test, made, buf);
	/* Too little room is an error, never a cut field. */
	KUNIT_EXPECT_EQ(test, kweb_resp_file_fields(fields, f, "text/plain",
						    1234, DATE), -ENOSPC);
	/* No type (none known) and no date: the length alone. */
	KUNIT_EXPECT_EQ(test, kweb_resp_file_fields(fields, sizeof(fields),
						    NULL, 0, NULL),
			(int)strlen("Content-Length: 0\r\n"));
	KUNIT_EXPECT_STREQ(test, fields, "Content-Length: 0\r\n");
}

/* A precompressed file's: Vary, then its coding, where nginx puts them. */
static void kweb_resp_encoding(struct kunit *test)
{
	char buf[512];
	struct kweb_resp_hdr h = {
		.status = 200, .date = DATE, .content_type = "text/css",
		.has_length = true, .length = 20, .etag = { "\"1-14\"", 6 },
		.content_encoding = "br", .vary = true, .accept_ranges = true,
	};

	KUNIT_ASSERT_GT(test, kweb_resp_format(buf, sizeof(buf), &h), 0);
	KUNIT_EXPECT_STREQ(test, buf,
			   "HTTP/1.1 200 OK\r\nServer: kweb\r\n"
			   "Date: " DATE "\r\nContent-Type: text/css\r\n"
			   "Content-Length: 20\r\n"
			   "Vary: Accept-Encoding\r\nContent-Encoding: br\r\n"
			   "ETag: \"1-14\"\r\nAccept-Ranges: bytes\r\n\r\n");
	/* The uncompressed file of a path that has variants: Vary alone. */
	h.content_encoding = NULL;
	KUNIT_ASSERT_GT(test, kweb_resp_format(buf, sizeof(buf), &h), 0);
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "\r\nVary: Accept-Encoding\r\n"));
	KUNIT_EXPECT_NULL(test, strstr(buf, "Content-Encoding"));
	h.vary = false;
	KUNIT_ASSERT_GT(test, kweb_resp_format(buf, sizeof(buf), &h), 0);
	KUNIT_EXPECT_NULL(test, strstr(buf, "Vary"));
}

static void kweb_resp_connection(struct kunit *test)
{
	char buf[256];
	struct kweb_resp_hdr h = { .status = 304, .date = DATE, .close = true };

	KUNIT_ASSERT_GT(test, kweb_resp_format(buf, sizeof(buf), &h), 0);
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "\r\nConnection: close\r\n"));
	KUNIT_EXPECT_NULL(test, strstr(buf, "Content-Length"));

	h.close = false;
	h.keep_alive = true;
	KUNIT_ASSERT_GT(test, kweb_resp_format(buf, sizeof(buf), &h), 0);
	KUNIT_EXPECT_NOT_NULL(test,
			      strstr(buf, "\r\nConnection: keep-alive\r\n"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "304 Not Modified\r\n"));
}

static void kweb_resp_ranges(struct kunit *test)
{
	char buf[256];
	struct kweb_resp_hdr h = {
		.status = 206, .date = DATE, .content_range = true,
		.first = 0, .last = 18446744073709551614ULL,
		.size = 18446744073709551615ULL,
	};

	KUNIT_ASSERT_GT(test, kweb_resp_format(buf, sizeof(buf), &h), 0);
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf,
		"\r\nContent-Range: bytes 0-18446744073709551614/18446744073709551615\r\n"));

	h.status = 416;
	h.content_range = false;
	h.unsatisfied_range = true;
	h.size = 0;
	KUNIT_ASSERT_GT(test, kweb_resp_format(buf, sizeof(buf), &h), 0);
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "\r\nContent-Range: bytes */0\r\n"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "416 Range Not Satisfiable"));
}

static void kweb_resp_location(struct kunit *test)
{
	char buf[256];
	struct kweb_resp_hdr h = {
		.status = 301, .date = DATE,
		.location = { "/a b%\"<\x7f\xc3\xa9", 10 },
	};

	KUNIT_ASSERT_GT(test, kweb_resp_format(buf, sizeof(buf), &h), 0);
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "\r\nLocation: /a%20b%25%22%3C%7F%C3%A9/\r\n"));
}

static void kweb_resp_overflow(struct kunit *test)
{
	char buf[128];
	struct kweb_resp_hdr h = { .status = 200, .date = DATE };
	int n, full;

	full = kweb_resp_format(buf, sizeof(buf), &h);
	KUNIT_ASSERT_GT(test, full, 0);
	/* Exactly enough room (with the NUL) works; one byte less does not. */
	KUNIT_EXPECT_EQ(test, kweb_resp_format(buf, full + 1, &h), full);
	n = kweb_resp_format(buf, full, &h);
	KUNIT_EXPECT_EQ(test, n, -ENOSPC);
	KUNIT_EXPECT_EQ(test, kweb_error_body(buf, 10, 404), -ENOSPC);
}

static void kweb_resp_error_body(struct kunit *test)
{
	char buf[512];
	int n = kweb_error_body(buf, sizeof(buf), 404);

	KUNIT_EXPECT_STREQ(test, buf,
			   "<html>\r\n<head><title>404 Not Found</title></head>\r\n"
			   "<body>\r\n<center><h1>404 Not Found</h1></center>\r\n"
			   "<hr><center>kweb</center>\r\n</body>\r\n</html>\r\n");
	KUNIT_EXPECT_EQ(test, n, (int)strlen(buf));
}

/* Content-Length of every number of digits, two at a time or one. */
static void kweb_resp_lengths(struct kunit *test)
{
	static const struct {
		u64 v;
		const char *s;
	} cases[] = {
		{ 0, "0" }, { 7, "7" }, { 10, "10" }, { 99, "99" },
		{ 100, "100" }, { 101, "101" }, { 1000, "1000" },
		{ 12345, "12345" }, { 1048576, "1048576" },
		{ 18446744073709551615ULL, "18446744073709551615" },
	};
	char buf[256], want[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kweb_resp_hdr h = {
			.status = 404, .date = DATE, .has_length = true,
			.length = cases[i].v,
		};

		KUNIT_ASSERT_GT(test, kweb_resp_format(buf, sizeof(buf), &h),
				0);
		snprintf(want, sizeof(want), "\r\nContent-Length: %s\r\n",
			 cases[i].s);
		KUNIT_EXPECT_TRUE_MSG(test, strstr(buf, want) != NULL, "%s",
				      cases[i].s);
		KUNIT_EXPECT_TRUE(test,
				  !strncmp(buf, "HTTP/1.1 404 Not Found\r\n", 24));
	}
}

static void kweb_resp_reasons(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, kweb_status_reason(200), "OK");
	KUNIT_EXPECT_STREQ(test, kweb_status_reason(414), "URI Too Long");
	KUNIT_EXPECT_STREQ(test, kweb_status_reason(431),
			   "Request Header Fields Too Large");
	KUNIT_EXPECT_STREQ(test, kweb_status_reason(505),
			   "HTTP Version Not Supported");
	KUNIT_EXPECT_STREQ(test, kweb_status_reason(299), "Unknown");
}

static struct kunit_case kweb_response_cases[] = {
	KUNIT_CASE(kweb_resp_200),
	KUNIT_CASE(kweb_resp_file_fields_same),
	KUNIT_CASE(kweb_resp_encoding),
	KUNIT_CASE(kweb_resp_connection),
	KUNIT_CASE(kweb_resp_ranges),
	KUNIT_CASE(kweb_resp_location),
	KUNIT_CASE(kweb_resp_overflow),
	KUNIT_CASE(kweb_resp_error_body),
	KUNIT_CASE(kweb_resp_reasons),
	KUNIT_CASE(kweb_resp_lengths),
	{}
};

static struct kunit_suite kweb_response_suite = {
	.name = "kweb_response",
	.test_cases = kweb_response_cases,
};

kunit_test_suite(kweb_response_suite);
