// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kmod/mime.c: the required extensions, case, which dot
 * counts (last segment only, dotfiles have none) and unknown names.
 */
#include <kunit/test.h>

#include "mime.h"

#define OCTET "application/octet-stream"

struct mime_case {
	const char *path;
	const char *type;
};

static const struct mime_case mime_cases[] = {
	{ "/index.html", "text/html" },
	{ "/a.htm", "text/html" },
	{ "/s.css", "text/css" },
	{ "/app.js", "text/javascript" },
	{ "/m.mjs", "text/javascript" },
	{ "/d.json", "application/json" },
	{ "/x.xml", "text/xml" },
	{ "/r.txt", "text/plain" },
	{ "/i.svg", "image/svg+xml" },
	{ "/i.png", "image/png" },
	{ "/i.jpg", "image/jpeg" },
	{ "/i.jpeg", "image/jpeg" },
	{ "/i.gif", "image/gif" },
	{ "/i.webp", "image/webp" },
	{ "/i.avif", "image/avif" },
	{ "/favicon.ico", "image/x-icon" },
	{ "/m.wasm", "application/wasm" },
	{ "/f.woff", "font/woff" },
	{ "/f.woff2", "font/woff2" },
	{ "/d.pdf", "application/pdf" },
	{ "/v.mp4", "video/mp4" },
	{ "/v.webm", "video/webm" },
	{ "/app.js.map", "application/json" },
	{ "/t.csv", "text/csv" },
	{ "/README.md", "text/markdown" },
	{ "/a.mp3", "audio/mpeg" },
	{ "/a.ogg", "audio/ogg" },
	{ "/a.wav", "audio/wav" },
	{ "/z.zip", "application/zip" },
	{ "/z.tar.gz", "application/gzip" },
	{ "/z.tar", "application/x-tar" },
	{ "/i.bmp", "image/x-ms-bmp" },
	{ "/i.tif", "image/tiff" },
	{ "/i.tiff", "image/tiff" },
	{ "/f.otf", "font/otf" },
	{ "/f.ttf", "font/ttf" },
	{ "/site.webmanifest", "application/manifest+json" },
	{ "/feed.rss", "application/rss+xml" },
	{ "/feed.atom", "application/atom+xml" },
	{ "/i.apng", "image/apng" },
	{ "/x.xhtml", "application/xhtml+xml" },
	{ "/k.7z", "application/x-7z-compressed" },
	/* case-insensitive */
	{ "/INDEX.HTML", "text/html" },
	{ "/a.Css", "text/css" },
	{ "/a.WOFF2", "font/woff2" },
	{ "/Site.WebManifest", "application/manifest+json" },
	/* which dot */
	{ "/a.d/file", OCTET },
	{ "/a.html/", OCTET },
	{ "/a.html/b", OCTET },
	{ "/.bashrc", OCTET },
	{ "/.json", OCTET },
	{ "/a.b/.js", OCTET },
	{ "/dir/.htaccess", OCTET },
	{ "/.config.json", "application/json" },
	{ "/a..html", "text/html" },
	{ "/a.", OCTET },
	{ "/.", OCTET },
	{ "/..", OCTET },
	{ "/noext", OCTET },
	{ "/", OCTET },
	{ "", OCTET },
	{ "index.html", "text/html" },
	{ ".html", OCTET },
	/* unknown */
	{ "/a.htmlx", OCTET },
	{ "/a.xhtm", OCTET },
	{ "/a.h", OCTET },
	{ "/a.exe", OCTET },
	{ "/a.webmanifests", OCTET },
	{ "/a.averyveryverylongextension", OCTET },
	{ "/a.ht\xc3\xa9", OCTET },
	{ "/a.j\0s", OCTET },
};

static void mime_desc(const struct mime_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%s\"", c->path);
}

KUNIT_ARRAY_PARAM(mime, mime_cases, mime_desc);

static void mime_test(struct kunit *test)
{
	const struct mime_case *c = test->param_value;
	size_t len = strlen(c->path);
	char *p = kunit_kmalloc(test, len ? len : 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	memcpy(p, c->path, len);
	KUNIT_EXPECT_STREQ(test, kweb_mime_type(p, len), c->type);
}

/* len bounds the name; the caller need not NUL-terminate it. */
static void mime_len_test(struct kunit *test)
{
	static const char p[] = "/a.html.gz";

	KUNIT_EXPECT_STREQ(test, kweb_mime_type(p, 7), "text/html");
	KUNIT_EXPECT_STREQ(test, kweb_mime_type(p, 10), "application/gzip");
	KUNIT_EXPECT_STREQ(test, kweb_mime_type(p, 8), OCTET);
	KUNIT_EXPECT_STREQ(test, kweb_mime_type(p, 0), OCTET);
	KUNIT_EXPECT_STREQ(test, kweb_mime_type("/a.j\0s", 6), OCTET);
}

static struct kunit_case kweb_mime_cases[] = {
	KUNIT_CASE_PARAM(mime_test, mime_gen_params),
	KUNIT_CASE(mime_len_test),
	{}
};

static struct kunit_suite kweb_mime_suite = {
	.name = "kweb_mime",
	.test_cases = kweb_mime_cases,
};

kunit_test_suite(kweb_mime_suite);
