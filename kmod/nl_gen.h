/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	uapi/kweb.yaml */
/* YNL-GEN kernel header */
/* Regenerate with scripts/ynl-regen.sh (make ynl-regen). */

#ifndef _LINUX_KWEB_GEN_H
#define _LINUX_KWEB_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/kweb.h>

extern const struct nla_policy kweb_stats_get_nl_policy[KWEB_A_STATS_LISTENER_ID + 1];

extern const struct nla_policy kweb_config_get_nl_policy[KWEB_A_CONFIG_LISTENER_ID + 1];

extern const struct nla_policy kweb_config_set_nl_policy[KWEB_A_CONFIG_PRECOMPRESSED + 1];

extern const struct nla_policy kweb_listener_get_nl_policy[KWEB_A_LISTENER_ID + 1];

extern const struct nla_policy kweb_cache_flush_nl_policy[KWEB_A_CACHE_PATH + 1];

extern const struct nla_policy kweb_listener_add_nl_policy[KWEB_A_LISTENER_BACKEND_USER + 1];

extern const struct nla_policy kweb_listener_del_nl_policy[KWEB_A_LISTENER_ID + 1];

extern const struct nla_policy kweb_listener_set_nl_policy[KWEB_A_LISTENER_BACKEND_USER + 1];

extern const struct nla_policy kweb_sock_adopt_nl_policy[KWEB_A_LISTENER_FD + 1];

/* Ops table for kweb */
extern const struct genl_ops kweb_nl_ops[9];

int kweb_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info);
int kweb_nl_config_get_doit(struct sk_buff *skb, struct genl_info *info);
int kweb_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info);
int kweb_nl_listener_get_doit(struct sk_buff *skb, struct genl_info *info);
int kweb_nl_listener_get_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb);
int kweb_nl_cache_flush_doit(struct sk_buff *skb, struct genl_info *info);
int kweb_nl_listener_add_doit(struct sk_buff *skb, struct genl_info *info);
int kweb_nl_listener_del_doit(struct sk_buff *skb, struct genl_info *info);
int kweb_nl_listener_set_doit(struct sk_buff *skb, struct genl_info *info);
int kweb_nl_sock_adopt_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	KWEB_NLGRP_LOG,
};

#endif /* _LINUX_KWEB_GEN_H */
