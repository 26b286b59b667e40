// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	uapi/kweb.yaml */
/* YNL-GEN kernel source */
/* Regenerate with scripts/ynl-regen.sh (make ynl-regen). */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "nl_gen.h"

#include <uapi/linux/kweb.h>

/* KWEB_CMD_STATS_GET - do */
const struct nla_policy kweb_stats_get_nl_policy[KWEB_A_STATS_LISTENER_ID + 1] = {
	[KWEB_A_STATS_LISTENER_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* KWEB_CMD_CONFIG_GET - do */
const struct nla_policy kweb_config_get_nl_policy[KWEB_A_CONFIG_LISTENER_ID + 1] = {
	[KWEB_A_CONFIG_LISTENER_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* KWEB_CMD_CONFIG_SET - do */
const struct nla_policy kweb_config_set_nl_policy[KWEB_A_CONFIG_PRECOMPRESSED + 1] = {
	[KWEB_A_CONFIG_HEADER_TIMEOUT] = NLA_POLICY_RANGE(NLA_U32, 1, KWEB_TIMEOUT_MAX),
	[KWEB_A_CONFIG_KEEPALIVE_TIMEOUT] = NLA_POLICY_RANGE(NLA_U32, 1, KWEB_TIMEOUT_MAX),
	[KWEB_A_CONFIG_SEND_TIMEOUT] = NLA_POLICY_RANGE(NLA_U32, 1, KWEB_TIMEOUT_MAX),
	[KWEB_A_CONFIG_MAX_CONNECTIONS] = NLA_POLICY_MIN(NLA_U32, 1),
	[KWEB_A_CONFIG_MAX_REQUESTS] = NLA_POLICY_MIN(NLA_U32, 1),
	[KWEB_A_CONFIG_CACHE_SIZE] = NLA_POLICY_RANGE(NLA_U32, 1, KWEB_CACHE_SIZE_MAX),
	[KWEB_A_CONFIG_CACHE_MAX_FILE] = { .type = NLA_U32, },
	[KWEB_A_CONFIG_BACKEND_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
	[KWEB_A_CONFIG_BACKEND_MISSING] = NLA_POLICY_MAX(NLA_U8, 1),
	[KWEB_A_CONFIG_DYNAMIC_PREFIXES] = { .type = NLA_NUL_STRING, .len = KWEB_RULES_MAX_LEN, },
	[KWEB_A_CONFIG_DYNAMIC_EXTENSIONS] = { .type = NLA_NUL_STRING, .len = KWEB_RULES_MAX_LEN, },
	[KWEB_A_CONFIG_MIME_TYPES] = { .type = NLA_NUL_STRING, .len = KWEB_MIME_TYPES_MAX_LEN, },
	[KWEB_A_CONFIG_USER] = { .type = NLA_U32, },
	[KWEB_A_CONFIG_GROUP] = { .type = NLA_U32, },
	[KWEB_A_CONFIG_PRECOMPRESSED] = NLA_POLICY_MAX(NLA_U8, 1),
};

/* KWEB_CMD_LISTENER_GET - do */
const struct nla_policy kweb_listener_get_nl_policy[KWEB_A_LISTENER_ID + 1] = {
	[KWEB_A_LISTENER_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* KWEB_CMD_CACHE_FLUSH - do */
const struct nla_policy kweb_cache_flush_nl_policy[KWEB_A_CACHE_PATH + 1] = {
	[KWEB_A_CACHE_PATH] = { .type = NLA_NUL_STRING, .len = KWEB_PATH_MAX_LEN, },
};

/* KWEB_CMD_LISTENER_ADD - do */
const struct nla_policy kweb_listener_add_nl_policy[KWEB_A_LISTENER_BACKEND_USER + 1] = {
	[KWEB_A_LISTENER_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
	[KWEB_A_LISTENER_DOCROOT] = { .type = NLA_NUL_STRING, .len = KWEB_PATH_MAX_LEN, },
	[KWEB_A_LISTENER_BACKEND_ADDR4] = { .type = NLA_U32, },
	[KWEB_A_LISTENER_BACKEND_ADDR6] = NLA_POLICY_EXACT_LEN(16),
	[KWEB_A_LISTENER_BACKEND_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
	[KWEB_A_LISTENER_ADDR4] = { .type = NLA_U32, },
	[KWEB_A_LISTENER_ADDR6] = NLA_POLICY_EXACT_LEN(16),
	[KWEB_A_LISTENER_PRECOMPRESSED] = NLA_POLICY_MAX(NLA_U8, 1),
	[KWEB_A_LISTENER_DYNAMIC_PREFIXES] = { .type = NLA_NUL_STRING, .len = KWEB_RULES_MAX_LEN, },
	[KWEB_A_LISTENER_DYNAMIC_EXTENSIONS] = { .type = NLA_NUL_STRING, .len = KWEB_RULES_MAX_LEN, },
	[KWEB_A_LISTENER_CACHE_CONTROL] = { .type = NLA_NUL_STRING, .len = KWEB_CACHE_CONTROL_MAX_LEN, },
	[KWEB_A_LISTENER_EXPIRES] = NLA_POLICY_MAX(NLA_U8, 1),
	[KWEB_A_LISTENER_ERROR_PAGES] = { .type = NLA_NUL_STRING, .len = KWEB_ERROR_PAGES_MAX_LEN, },
	[KWEB_A_LISTENER_VHOSTS] = NLA_POLICY_MAX(NLA_U8, 1),
	[KWEB_A_LISTENER_VHOST_DEFAULT] = { .type = NLA_NUL_STRING, .len = KWEB_HOST_MAX_LEN, },
	[KWEB_A_LISTENER_MIME_TYPES] = { .type = NLA_NUL_STRING, .len = KWEB_MIME_TYPES_MAX_LEN, },
	[KWEB_A_LISTENER_TLS_PORT] = { .type = NLA_U16, },
	[KWEB_A_LISTENER_HSTS] = { .type = NLA_U32, },
	[KWEB_A_LISTENER_HSTS_SUBDOMAINS] = NLA_POLICY_MAX(NLA_U8, 1),
	[KWEB_A_LISTENER_HTTPS_REDIRECT] = { .type = NLA_U16, },
	[KWEB_A_LISTENER_BACKEND_USER] = { .type = NLA_U32, },
};

/* KWEB_CMD_LISTENER_DEL - do */
const struct nla_policy kweb_listener_del_nl_policy[KWEB_A_LISTENER_ID + 1] = {
	[KWEB_A_LISTENER_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* KWEB_CMD_LISTENER_SET - do */
const struct nla_policy kweb_listener_set_nl_policy[KWEB_A_LISTENER_BACKEND_USER + 1] = {
	[KWEB_A_LISTENER_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[KWEB_A_LISTENER_BACKEND_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
	[KWEB_A_LISTENER_PRECOMPRESSED] = NLA_POLICY_MAX(NLA_U8, 1),
	[KWEB_A_LISTENER_DYNAMIC_PREFIXES] = { .type = NLA_NUL_STRING, .len = KWEB_RULES_MAX_LEN, },
	[KWEB_A_LISTENER_DYNAMIC_EXTENSIONS] = { .type = NLA_NUL_STRING, .len = KWEB_RULES_MAX_LEN, },
	[KWEB_A_LISTENER_INHERIT] = NLA_POLICY_MASK(NLA_U32, 0x1f),
	[KWEB_A_LISTENER_CACHE_CONTROL] = { .type = NLA_NUL_STRING, .len = KWEB_CACHE_CONTROL_MAX_LEN, },
	[KWEB_A_LISTENER_EXPIRES] = NLA_POLICY_MAX(NLA_U8, 1),
	[KWEB_A_LISTENER_ERROR_PAGES] = { .type = NLA_NUL_STRING, .len = KWEB_ERROR_PAGES_MAX_LEN, },
	[KWEB_A_LISTENER_VHOSTS] = NLA_POLICY_MAX(NLA_U8, 1),
	[KWEB_A_LISTENER_VHOST_DEFAULT] = { .type = NLA_NUL_STRING, .len = KWEB_HOST_MAX_LEN, },
	[KWEB_A_LISTENER_MIME_TYPES] = { .type = NLA_NUL_STRING, .len = KWEB_MIME_TYPES_MAX_LEN, },
	[KWEB_A_LISTENER_HSTS] = { .type = NLA_U32, },
	[KWEB_A_LISTENER_HSTS_SUBDOMAINS] = NLA_POLICY_MAX(NLA_U8, 1),
	[KWEB_A_LISTENER_HTTPS_REDIRECT] = { .type = NLA_U16, },
	[KWEB_A_LISTENER_BACKEND_USER] = { .type = NLA_U32, },
};

/* KWEB_CMD_SOCK_ADOPT - do */
const struct nla_policy kweb_sock_adopt_nl_policy[KWEB_A_LISTENER_FD + 1] = {
	[KWEB_A_LISTENER_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[KWEB_A_LISTENER_FD] = { .type = NLA_U32, },
};

/* Ops table for kweb */
const struct genl_ops kweb_nl_ops[9] = {
	{
		.cmd		= KWEB_CMD_STATS_GET,
		.doit		= kweb_nl_stats_get_doit,
		.policy		= kweb_stats_get_nl_policy,
		.maxattr	= KWEB_A_STATS_LISTENER_ID,
	},
	{
		.cmd		= KWEB_CMD_CONFIG_GET,
		.doit		= kweb_nl_config_get_doit,
		.policy		= kweb_config_get_nl_policy,
		.maxattr	= KWEB_A_CONFIG_LISTENER_ID,
	},
	{
		.cmd		= KWEB_CMD_CONFIG_SET,
		.doit		= kweb_nl_config_set_doit,
		.policy		= kweb_config_set_nl_policy,
		.maxattr	= KWEB_A_CONFIG_PRECOMPRESSED,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= KWEB_CMD_LISTENER_GET,
		.doit		= kweb_nl_listener_get_doit,
		.dumpit		= kweb_nl_listener_get_dumpit,
		.policy		= kweb_listener_get_nl_policy,
		.maxattr	= KWEB_A_LISTENER_ID,
	},
	{
		.cmd		= KWEB_CMD_CACHE_FLUSH,
		.doit		= kweb_nl_cache_flush_doit,
		.policy		= kweb_cache_flush_nl_policy,
		.maxattr	= KWEB_A_CACHE_PATH,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= KWEB_CMD_LISTENER_ADD,
		.doit		= kweb_nl_listener_add_doit,
		.policy		= kweb_listener_add_nl_policy,
		.maxattr	= KWEB_A_LISTENER_BACKEND_USER,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= KWEB_CMD_LISTENER_DEL,
		.doit		= kweb_nl_listener_del_doit,
		.policy		= kweb_listener_del_nl_policy,
		.maxattr	= KWEB_A_LISTENER_ID,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= KWEB_CMD_LISTENER_SET,
		.doit		= kweb_nl_listener_set_doit,
		.policy		= kweb_listener_set_nl_policy,
		.maxattr	= KWEB_A_LISTENER_BACKEND_USER,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= KWEB_CMD_SOCK_ADOPT,
		.doit		= kweb_nl_sock_adopt_doit,
		.policy		= kweb_sock_adopt_nl_policy,
		.maxattr	= KWEB_A_LISTENER_FD,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
};

static const struct genl_multicast_group kweb_nl_mcgrps[] = {
	[KWEB_NLGRP_LOG] = { "log", },
};
