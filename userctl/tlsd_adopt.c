// SPDX-License-Identifier: GPL-2.0
/*
 * Giving a socket back to kweb: its sock-adopt command carries the
 * descriptor and the TLS listener's id; kweb looks the descriptor up in
 * this process's file table while the command runs and, if it adopts
 * the socket, takes the file and closes the descriptor. Needs CAP_NET_ADMIN over the network namespace
 * (the unit grants it as an ambient capability, and nothing else).
 */
#include <stdbool.h>
#include <stdio.h>
#include <linux/kweb.h>

#include "nl.h"
#include "tlsd.h"

static struct kc_nl tlsd_nl;
static bool tlsd_nl_ready;

int tlsd_adopt(uint32_t listener, int fd)
{
	struct nlmsghdr *nlh;

	if (!tlsd_nl_ready) {
		if (kc_nl_init(&tlsd_nl) != KC_OK)
			return -1;
		tlsd_nl_ready = true;
	}
	nlh = kc_nl_request(&tlsd_nl, KWEB_CMD_SOCK_ADOPT, false);
	mnl_attr_put_u32(nlh, KWEB_A_LISTENER_ID, listener);
	mnl_attr_put_u32(nlh, KWEB_A_LISTENER_FD, fd);
	return kc_nl_talk(&tlsd_nl, nlh, NULL, NULL, "sock-adopt") == KC_OK ?
	       0 : -1;
}
