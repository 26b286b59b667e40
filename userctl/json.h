/* SPDX-License-Identifier: GPL-2.0 */
/* JSON output shared by kwebctl's commands. */
#ifndef KWEBCTL_JSON_H
#define KWEBCTL_JSON_H

#include <stdio.h>

void kc_json_fstr(FILE *f, const char *s);
void kc_json_str(const char *s);	/* to stdout */

#endif /* KWEBCTL_JSON_H */
