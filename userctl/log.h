/* SPDX-License-Identifier: GPL-2.0 */
/* kwebctl log: the access log, as Combined Log Format lines or JSON. */
#ifndef KWEBCTL_LOG_H
#define KWEBCTL_LOG_H

#include <stdbool.h>

#include "nl.h"

int kc_cmd_log(struct kc_nl *nl, int argc, char **argv, bool json);

#endif /* KWEBCTL_LOG_H */
