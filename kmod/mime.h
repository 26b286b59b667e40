/* SPDX-License-Identifier: GPL-2.0 */
/* Content-Type by file name extension. Pure logic. */
#ifndef KWEB_MIME_H
#define KWEB_MIME_H

#include "pure.h"

/*
 * The media type for path[0..len), by the extension after its last '.' in
 * the last segment, case-insensitively; "application/octet-stream" when
 * there is none or it is unknown. Never NULL.
 */
const char *kweb_mime_type(const char *path, size_t len);

/*
 * Where the extension kweb_mime_type() goes by starts: the index after the
 * last '.' of the last segment; len when there is none ("a", ".profile",
 * "a.").
 */
size_t kweb_mime_ext(const char *path, size_t len);

#endif /* KWEB_MIME_H */
