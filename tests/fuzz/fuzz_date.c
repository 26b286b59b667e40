// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the input is an HTTP date field value (or any bytes).
 * kweb_http_date_parse() (kmod/http_date.c) must only accept the three
 * formats, and what it accepts must format back (IMF-fixdate canonically)
 * and parse again to the same time; the conditional helpers of
 * kmod/http_cond.c get the value too, against validators made from it.
 * The first eight bytes, as a time, go through kweb_http_date_format().
 */
#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data;
	s64 t = 1700000000, raw = 0;

	if (size >= sizeof(raw)) {
		memcpy(&raw, data, sizeof(raw));
		check_date_format(raw);
		check_date_format(raw % (FZ_DATE_MAX + 2));
	}
	check_date(b, size, &t);
	check_cond(b, size, t, size);
	return 0;
}
