/* SPDX-License-Identifier: GPL-2.0 */
/* JSON output shared by kwebctl's commands. */
#ifndef KWEBCTL_JSON_H
#define KWEBCTL_JSON_H

void kc_json_str(const char *s);

#endif /* KWEBCTL_JSON_H */
