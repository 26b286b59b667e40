// SPDX-License-Identifier: GPL-2.0
/*
 * Content-Type by file name extension.
 *
 * The values are those of nginx's conf/mime.types, so a site moved from
 * nginx gets the same headers, except that JavaScript is text/javascript
 * (RFC 9239). Entries below the first block are types nginx does not list,
 * with their IANA registrations. Like nginx, text types get no charset.
 */
#include "mime.h"

/* The longest extension in the table ("webmanifest"), for a quick reject. */
#define KWEB_MM_EXT_MAX	11

struct kweb_mm_type {
	const char *ext;	/* lower case */
	const char *type;
};

static const struct kweb_mm_type kweb_mm_types[] = {
	/* nginx's mime.types */
	{ "html", "text/html" },
	{ "htm", "text/html" },
	{ "shtml", "text/html" },
	{ "css", "text/css" },
	{ "xml", "text/xml" },
	{ "gif", "image/gif" },
	{ "jpeg", "image/jpeg" },
	{ "jpg", "image/jpeg" },
	{ "js", "text/javascript" },
	{ "atom", "application/atom+xml" },
	{ "rss", "application/rss+xml" },
	{ "mml", "text/mathml" },
	{ "txt", "text/plain" },
	{ "jad", "text/vnd.sun.j2me.app-descriptor" },
	{ "wml", "text/vnd.wap.wml" },
	{ "htc", "text/x-component" },
	{ "avif", "image/avif" },
	{ "png", "image/png" },
	{ "svg", "image/svg+xml" },
	{ "svgz", "image/svg+xml" },
	{ "tif", "image/tiff" },
	{ "tiff", "image/tiff" },
	{ "wbmp", "image/vnd.wap.wbmp" },
	{ "webp", "image/webp" },
	{ "ico", "image/x-icon" },
	{ "jng", "image/x-jng" },
	{ "bmp", "image/x-ms-bmp" },
	{ "woff", "font/woff" },
	{ "woff2", "font/woff2" },
	{ "jar", "application/java-archive" },
	{ "war", "application/java-archive" },
	{ "ear", "application/java-archive" },
	{ "json", "application/json" },
	{ "hqx", "application/mac-binhex40" },
	{ "doc", "application/msword" },
	{ "pdf", "application/pdf" },
	{ "ps", "application/postscript" },
	{ "eps", "application/postscript" },
	{ "ai", "application/postscript" },
	{ "rtf", "application/rtf" },
	{ "m3u8", "application/vnd.apple.mpegurl" },
	{ "kml", "application/vnd.google-earth.kml+xml" },
	{ "kmz", "application/vnd.google-earth.kmz" },
	{ "xls", "application/vnd.ms-excel" },
	{ "eot", "application/vnd.ms-fontobject" },
	{ "ppt", "application/vnd.ms-powerpoint" },
	{ "odg", "application/vnd.oasis.opendocument.graphics" },
	{ "odp", "application/vnd.oasis.opendocument.presentation" },
	{ "ods", "application/vnd.oasis.opendocument.spreadsheet" },
	{ "odt", "application/vnd.oasis.opendocument.text" },
	{ "pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation" },
	{ "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" },
	{ "docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document" },
	{ "wmlc", "application/vnd.wap.wmlc" },
	{ "wasm", "application/wasm" },
	{ "7z", "application/x-7z-compressed" },
	{ "cco", "application/x-cocoa" },
	{ "jardiff", "application/x-java-archive-diff" },
	{ "jnlp", "application/x-java-jnlp-file" },
	{ "run", "application/x-makeself" },
	{ "pl", "application/x-perl" },
	{ "pm", "application/x-perl" },
	{ "prc", "application/x-pilot" },
	{ "pdb", "application/x-pilot" },
	{ "rar", "application/x-rar-compressed" },
	{ "rpm", "application/x-redhat-package-manager" },
	{ "sea", "application/x-sea" },
	{ "swf", "application/x-shockwave-flash" },
	{ "sit", "application/x-stuffit" },
	{ "tcl", "application/x-tcl" },
	{ "tk", "application/x-tcl" },
	{ "der", "application/x-x509-ca-cert" },
	{ "pem", "application/x-x509-ca-cert" },
	{ "crt", "application/x-x509-ca-cert" },
	{ "xpi", "application/x-xpinstall" },
	{ "xhtml", "application/xhtml+xml" },
	{ "xspf", "application/xspf+xml" },
	{ "zip", "application/zip" },
	{ "mid", "audio/midi" },
	{ "midi", "audio/midi" },
	{ "kar", "audio/midi" },
	{ "mp3", "audio/mpeg" },
	{ "ogg", "audio/ogg" },
	{ "m4a", "audio/x-m4a" },
	{ "ra", "audio/x-realaudio" },
	{ "3gpp", "video/3gpp" },
	{ "3gp", "video/3gpp" },
	{ "ts", "video/mp2t" },
	{ "mp4", "video/mp4" },
	{ "mpeg", "video/mpeg" },
	{ "mpg", "video/mpeg" },
	{ "mov", "video/quicktime" },
	{ "webm", "video/webm" },
	{ "flv", "video/x-flv" },
	{ "m4v", "video/x-m4v" },
	{ "mng", "video/x-mng" },
	{ "asx", "video/x-ms-asf" },
	{ "asf", "video/x-ms-asf" },
	{ "wmv", "video/x-ms-wmv" },
	{ "avi", "video/x-msvideo" },

	/* not in nginx's list */
	{ "mjs", "text/javascript" },
	{ "map", "application/json" },
	{ "csv", "text/csv" },
	{ "md", "text/markdown" },
	{ "markdown", "text/markdown" },
	{ "vtt", "text/vtt" },
	{ "ics", "text/calendar" },
	{ "yaml", "application/yaml" },
	{ "yml", "application/yaml" },
	{ "jsonld", "application/ld+json" },
	{ "webmanifest", "application/manifest+json" },
	{ "mpd", "application/dash+xml" },
	{ "gz", "application/gzip" },
	{ "tgz", "application/gzip" },
	{ "tar", "application/x-tar" },
	{ "bz2", "application/x-bzip2" },
	{ "xz", "application/x-xz" },
	{ "zst", "application/zstd" },
	{ "otf", "font/otf" },
	{ "ttf", "font/ttf" },
	{ "apng", "image/apng" },
	{ "jxl", "image/jxl" },
	{ "heic", "image/heic" },
	{ "wav", "audio/wav" },
	{ "flac", "audio/flac" },
	{ "oga", "audio/ogg" },
	{ "opus", "audio/ogg" },
	{ "weba", "audio/webm" },
	{ "ogv", "video/ogg" },
	{ "mkv", "video/x-matroska" },
	{ NULL, NULL }
};

static char kweb_mm_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static bool kweb_mm_ieq(const char *p, size_t len, const char *lc)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!lc[i] || kweb_mm_lower(p[i]) != lc[i])
			return false;
	return !lc[len];
}

size_t kweb_mime_ext(const char *path, size_t len)
{
	size_t i = len, dot = 0;

	/* The last '.' of the last segment, unless it starts the segment. */
	while (i && path[i - 1] != '/') {
		if (path[i - 1] == '.' && !dot)
			dot = i;
		i--;
	}
	return !dot || dot - 1 == i ? len : dot;
}

const char *kweb_mime_type(const char *path, size_t len)
{
	const struct kweb_mm_type *m;
	size_t dot = kweb_mime_ext(path, len);

	if (dot == len || len - dot > KWEB_MM_EXT_MAX)
		return "application/octet-stream";

	for (m = kweb_mm_types; m->ext; m++)
		if (kweb_mm_ieq(path + dot, len - dot, m->ext))
			return m->type;
	return "application/octet-stream";
}
