/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KWEB_SPARE_H
#define KWEB_SPARE_H

#include <linux/types.h>

/*
 * The worker's per-request buffers, kept one per CPU between requests
 * (spare.c).
 */
enum kweb_spare {
	KWEB_SPARE_REQ,		/* struct kweb_req_scratch */
	KWEB_SPARE_HDR,		/* a response header, KWEB_HDR_MAX bytes */
	KWEB_SPARE_NR,
};

void *kweb_spare_get(enum kweb_spare which, size_t size);
void kweb_spare_put(enum kweb_spare which, void *p);
void kweb_spare_exit(void);

#endif /* KWEB_SPARE_H */
