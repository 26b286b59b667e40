/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memcg.c: which memory cgroup a socket kweb serves is charged to. As
 * accept() does for a user-space server's, its listener's creator's
 * (srv->memcg); until a handoff, when the backend's accept() charges its
 * own.
 */
#ifndef KWEB_MEMCG_H
#define KWEB_MEMCG_H

#include <linux/types.h>

struct mem_cgroup;
struct sock;

bool kweb_sk_memcg_join(struct sock *sk, struct mem_cgroup *memcg);
bool kweb_sk_memcg_leave(struct sock *sk);

#endif /* KWEB_MEMCG_H */
