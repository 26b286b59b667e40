/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The access log: a record per request, published in batches on the kweb
 * family's "log" multicast group of the listener's network namespace.
 */
#ifndef KWEB_ACCESSLOG_H
#define KWEB_ACCESSLOG_H

#include <linux/in6.h>
#include <linux/ktime.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <uapi/linux/kweb.h>

struct kweb_conn;
struct kweb_request;
struct kweb_server;

/* What a connection keeps of its current request for the record. */
struct kweb_log_req {
	ktime_t start;			/* its first byte */
	const char *method;		/* in conn->buf, until the next request */
	const char *target;
	const char *referer;		/* NULL: the request had none */
	const char *user_agent;
	u16 method_len;
	u16 target_len;
	u16 referer_len;
	u16 user_agent_len;
	u8 major, minor;
	u8 who;				/* enum kweb_answerer */
	bool pending;			/* begun: kweb_log_end() is due */
	bool active;			/* a record is due when it ends */
	bool strings;			/* method and target were kept */
	/* The client: after a handoff the socket is no longer kweb's. */
	bool ipv6;
	__be16 port;
	__be32 addr4;
	struct in6_addr addr6;
};

/* A CPU's batch for one server: a message being filled. */
struct kweb_log_batch {
	spinlock_t lock;
	struct sk_buff *skb;
	void *hdr;
	unsigned int n;
};

int kweb_log_server_init(struct kweb_server *srv);
void kweb_log_server_exit(struct kweb_server *srv);

/* Once the family is registered; before it is unregistered. */
void kweb_log_enable(void);
void kweb_log_disable(void);

/*
 * req has been answered (or handed over, or refused with 502/503) by who;
 * its record goes out at kweb_log_end(), and the kweb_request_done
 * tracepoint fires there. Costs a bit test when no one subscribes and
 * the tracepoint is off. Any context.
 */
void kweb_log_begin(struct kweb_conn *conn, const struct kweb_request *req,
		    enum kweb_answerer who);
/*
 * The response is done: status 0 when the backend answers. Once per
 * kweb_log_begin(); nothing otherwise. Any context.
 */
void kweb_log_end(struct kweb_conn *conn, u16 status, u64 bytes);

/*
 * The head the record's strings point into moved from old (len bytes) to
 * new, or is gone (new NULL): the strings follow, or are dropped.
 */
void kweb_log_rebase(struct kweb_log_req *lr, const char *old, size_t len,
		     const char *new);

#endif /* KWEB_ACCESSLOG_H */
