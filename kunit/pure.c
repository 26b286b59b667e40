// SPDX-License-Identifier: GPL-2.0
/*
 * The pure-logic sources of kweb.ko, built once more into kweb_test.ko so
 * the suites test exactly the code the server runs.
 */
#include "../kmod/http_token.c"
#include "../kmod/http_parse.c"
#include "../kmod/http_encoding.c"
#include "../kmod/http_host.c"
#include "../kmod/http_redirect.c"
#include "../kmod/http_path.c"
#include "../kmod/http_route.c"
#include "../kmod/http_cache_rules.c"
#include "../kmod/http_error_pages.c"
#include "../kmod/http_range.c"
#include "../kmod/http_date.c"
#include "../kmod/http_cond.c"
#include "../kmod/mime.c"
#include "../kmod/response.c"
