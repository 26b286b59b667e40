// SPDX-License-Identifier: GPL-2.0
/* JSON output shared by kwebctl's commands. */
#include <stdio.h>

#include "json.h"

/*
 * Paths, docroots and log fields are arbitrary bytes, not UTF-8: each byte
 * outside printable ASCII becomes \u00XX, so the output is valid (ASCII)
 * JSON whatever the kernel holds, and a reader gets every byte back as the
 * code point of the same value.
 */
void kc_json_fstr(FILE *f, const char *s)
{
	putc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			putc(c, f);
	}
	putc('"', f);
}

void kc_json_str(const char *s)
{
	kc_json_fstr(stdout, s);
}
