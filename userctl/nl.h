/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink plumbing of kwebctl, on libmnl: find the kweb
 * family, send one request, hand each reply message to a callback, and
 * turn a kernel error into an exit code and a message (with the extack
 * text and the attribute it names).
 */
#ifndef KWEBCTL_NL_H
#define KWEBCTL_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

/* kwebctl's exit codes (see kwebctl --help). */
enum {
	KC_OK = 0,
	KC_ERROR = 1,		/* the kernel refused, or another failure */
	KC_USAGE = 2,		/* bad command line */
	KC_NOT_LOADED = 3,	/* no kweb family: the module is not loaded */
	KC_PERM = 4,		/* permission denied (CAP_NET_ADMIN) */
	KC_NOT_FOUND = 5,	/* no such listener */
};

struct kc_nl {
	struct mnl_socket *sock;
	uint16_t family;
	uint32_t version;
	uint32_t seq;
	uint32_t log_group;	/* the "log" multicast group's id, or 0 */
	char *buf;		/* one request */
	/* Names request attributes in error messages; may be NULL. */
	const char *(*attr_name)(uint8_t cmd, uint16_t type);
	/* ENOENT is KC_NOT_FOUND with no message: the caller expects it. */
	bool quiet_not_found;
};

/*
 * Returns KC_OK or KC_ERROR. The socket is opened, and the family looked
 * up, at the first kc_nl_talk(), which says KC_NOT_LOADED without it.
 */
int kc_nl_init(struct kc_nl *nl);
void kc_nl_close(struct kc_nl *nl);

/* A request for cmd; add attributes to it with mnl_attr_put_*(). */
struct nlmsghdr *kc_nl_request(struct kc_nl *nl, uint8_t cmd, bool dump);

/* Called with each reply message's attributes at nlmsg payload + genlhdr. */
typedef int (*kc_nl_cb)(const struct nlmsghdr *nlh, void *data);

/*
 * Send nlh and run cb on each reply until the ack or the dump's end.
 * Returns a KC_* code; on failure prints "kwebctl: what: reason".
 */
int kc_nl_talk(struct kc_nl *nl, struct nlmsghdr *nlh, kc_nl_cb cb,
	       void *data, const char *what);

/* The log socket's receive buffer, asked for: the kernel doubles it. */
#define KC_LOG_RCVBUF (4 << 20)

/*
 * Join the kweb family's "log" group, whose messages the caller then
 * reads from mnl_socket_get_fd(nl->sock). Returns a KC_* code.
 */
int kc_nl_subscribe(struct kc_nl *nl);

/* Parse a reply's attributes into tb[0..max]. */
void kc_nl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb,
		 unsigned int max);

#endif /* KWEBCTL_NL_H */
