// SPDX-License-Identifier: GPL-2.0
/*
 * The access log. Each server has a batch per CPU: a KWEB_CMD_LOG message
 * that records are appended to as requests end, in softirq or the worker.
 * A batch goes out, as one multicast message, when the next record might
 * not fit, or after KWEB_LOG_DELAY from its first record (a delayed work).
 * So the data path never sends per request, and with no subscriber in the
 * namespace it only tests a bit (genl_has_listeners()). Memory is taken
 * with GFP_ATOMIC; records that find none, or whose multicast did not
 * reach every subscriber (a full socket), are counted as dropped. Nothing
 * ever waits.
 *
 * The "log" group needs CAP_NET_ADMIN (GENL_MCAST_CAP_NET_ADMIN, which
 * Debian's 6.1 and 6.12 both have): records hold clients' addresses.
 */
#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <net/genetlink.h>

#include "accesslog.h"
#include "kweb.h"
#include "nl_gen.h"
#include "trace.h"

#define KWEB_LOG_DELAY (HZ / 10)
#define KWEB_LOG_METHOD_MAX 32

/* A record without its strings, at most (either address counted). */
#define KWEB_LOG_RECORD_FIXED						\
	(nla_total_size(0) + 3 * nla_total_size_64bit(sizeof(u64)) +	\
	 2 * nla_total_size(sizeof(u32)) + nla_total_size(16) +		\
	 2 * nla_total_size(sizeof(u16)) + nla_total_size(sizeof(u8)) +	\
	 nla_total_size(sizeof("HTTP/1.1")))

/* Senders test it under RCU, so that disabling waits for them. */
static bool kweb_log_on;

void kweb_log_enable(void)
{
	WRITE_ONCE(kweb_log_on, true);
}

void kweb_log_disable(void)
{
	WRITE_ONCE(kweb_log_on, false);
	synchronize_rcu();
}

static bool kweb_log_wanted(struct kweb_server *srv)
{
	return READ_ONCE(kweb_log_on) &&
	       genl_has_listeners(&kweb_nl_family, srv->net, KWEB_NLGRP_LOG);
}

/* Publish a batch of n records; consumes skb. Any context. */
static void kweb_log_send(struct kweb_server *srv, struct sk_buff *skb,
			  void *hdr, unsigned int n)
{
	int err = -ESRCH;

	genlmsg_end(skb, hdr);
	rcu_read_lock();
	if (READ_ONCE(kweb_log_on))
		err = genlmsg_multicast_netns(&kweb_nl_family, srv->net, skb,
					      0, KWEB_NLGRP_LOG, GFP_ATOMIC);
	else
		nlmsg_free(skb);
	rcu_read_unlock();
	if (!err)
		kweb_stat_add(srv->stats, KWEB_STAT_LOG_RECORDS, n);
	else if (err != -ESRCH)	/* -ESRCH: the last subscriber left */
		kweb_stat_add(srv->stats, KWEB_STAT_LOG_DROPPED, n);
}

/* Take b's batch out, under b->lock. */
static struct sk_buff *kweb_log_detach(struct kweb_log_batch *b, void **hdr,
				       unsigned int *n)
{
	struct sk_buff *skb = b->skb;

	*hdr = b->hdr;
	*n = b->n;
	b->skb = NULL;
	b->n = 0;
	return skb;
}

static void kweb_log_flush(struct kweb_server *srv)
{
	struct kweb_log_batch *b;
	struct sk_buff *skb;
	unsigned int n;
	void *hdr;
	int cpu;

	for_each_possible_cpu(cpu) {
		b = per_cpu_ptr(srv->log, cpu);
		spin_lock_bh(&b->lock);
		skb = kweb_log_detach(b, &hdr, &n);
		spin_unlock_bh(&b->lock);
		if (skb)
			kweb_log_send(srv, skb, hdr, n);
	}
}

static void kweb_log_flush_work(struct work_struct *work)
{
	kweb_log_flush(container_of(to_delayed_work(work), struct kweb_server,
				    log_flush));
}

int kweb_log_server_init(struct kweb_server *srv)
{
	int cpu;

	srv->log = alloc_percpu_gfp(struct kweb_log_batch, GFP_KERNEL_ACCOUNT);
	if (!srv->log)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		spin_lock_init(&per_cpu_ptr(srv->log, cpu)->lock);
	INIT_DELAYED_WORK(&srv->log_flush, kweb_log_flush_work);
	return 0;
}

/* Once no connection of srv is left: what is batched still goes out. */
void kweb_log_server_exit(struct kweb_server *srv)
{
	cancel_delayed_work_sync(&srv->log_flush);
	kweb_log_flush(srv);
	free_percpu(srv->log);
	srv->log = NULL;
}

void kweb_log_begin(struct kweb_conn *conn, const struct kweb_request *req,
		    enum kweb_answerer who)
{
	struct kweb_log_req *lr = &conn->log;

	lr->pending = true;
	lr->who = who;
	lr->active = kweb_log_wanted(conn->srv);
	/* The tracepoint wants these too: they live in conn->buf. */
	lr->strings = lr->active || trace_kweb_request_done_enabled();
	if (!lr->strings)
		return;
	lr->method = req->method_str.p;
	lr->method_len = min_t(u32, req->method_str.len, KWEB_LOG_METHOD_MAX);
	lr->target = req->target.p;
	lr->target_len = min_t(u32, req->target.len, KWEB_LOG_TARGET_MAX);
	if (!lr->active)
		return;
	lr->referer = req->referer.p;
	lr->referer_len = min_t(u32, req->referer.len, KWEB_LOG_FIELD_MAX);
	lr->user_agent = req->user_agent.p;
	lr->user_agent_len = min_t(u32, req->user_agent.len,
				   KWEB_LOG_FIELD_MAX);
	lr->major = req->major;
	lr->minor = req->minor;
	lr->port = conn->sk->sk_dport;
	lr->ipv6 = conn->sk->sk_family == AF_INET6;
	if (lr->ipv6)
		lr->addr6 = conn->sk->sk_v6_daddr;
	else
		lr->addr4 = conn->sk->sk_daddr;
}

void kweb_log_rebase(struct kweb_log_req *lr, const char *old, size_t len,
		     const char *new)
{
	const char **s[] = { &lr->method, &lr->target, &lr->referer,
			     &lr->user_agent };
	u16 *n[] = { &lr->method_len, &lr->target_len, &lr->referer_len,
		     &lr->user_agent_len };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(s); i++) {
		if (!*s[i] || *s[i] < old || *s[i] > old + len)
			continue;
		if (new) {
			*s[i] = new + (*s[i] - old);
		} else {
			*s[i] = NULL;
			*n[i] = 0;
		}
	}
}

static int kweb_log_put_str(struct sk_buff *skb, int type, const char *s,
			    u16 len)
{
	struct nlattr *a = nla_reserve(skb, type, len + 1);

	if (!a)
		return -EMSGSIZE;
	memcpy(nla_data(a), s, len);
	((char *)nla_data(a))[len] = '\0';
	return 0;
}

/* What lr's record takes in a message, at most. */
static unsigned int kweb_log_record_size(const struct kweb_log_req *lr)
{
	unsigned int n = KWEB_LOG_RECORD_FIXED;

	n += nla_total_size(lr->method_len + 1);
	n += nla_total_size(lr->target_len + 1);
	if (lr->referer)
		n += nla_total_size(lr->referer_len + 1);
	if (lr->user_agent)
		n += nla_total_size(lr->user_agent_len + 1);
	return n;
}

/* One record; the batch has room for kweb_log_record_size(). */
static int kweb_log_put(struct sk_buff *skb, struct kweb_conn *conn,
			u16 status, u64 bytes)
{
	const struct kweb_log_req *lr = &conn->log;
	char proto[sizeof("HTTP/1.1")] = "";
	struct nlattr *rec;

	if (lr->major)
		snprintf(proto, sizeof(proto), "HTTP/%u.%u", lr->major % 10,
			 lr->minor % 10);
	rec = nla_nest_start(skb, KWEB_A_LOG_RECORD);
	if (!rec)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, KWEB_A_RECORD_TIME, ktime_get_real_ns(),
			      KWEB_A_RECORD_PAD) ||
	    nla_put_u32(skb, KWEB_A_RECORD_LISTENER_ID, conn->srv->id) ||
	    nla_put_u16(skb, KWEB_A_RECORD_PORT, ntohs(lr->port)) ||
	    kweb_log_put_str(skb, KWEB_A_RECORD_METHOD, lr->method,
			     lr->method_len) ||
	    kweb_log_put_str(skb, KWEB_A_RECORD_TARGET, lr->target,
			     lr->target_len) ||
	    nla_put_string(skb, KWEB_A_RECORD_PROTOCOL, proto) ||
	    (status && nla_put_u16(skb, KWEB_A_RECORD_STATUS, status)) ||
	    nla_put_u64_64bit(skb, KWEB_A_RECORD_BYTES, bytes,
			      KWEB_A_RECORD_PAD) ||
	    nla_put_u64_64bit(skb, KWEB_A_RECORD_DURATION,
			      ktime_to_ns(ktime_sub(ktime_get(), lr->start)),
			      KWEB_A_RECORD_PAD) ||
	    nla_put_u8(skb, KWEB_A_RECORD_ANSWERED, lr->who))
		goto cancel;
	if (lr->referer &&
	    kweb_log_put_str(skb, KWEB_A_RECORD_REFERER, lr->referer,
			     lr->referer_len))
		goto cancel;
	if (lr->user_agent &&
	    kweb_log_put_str(skb, KWEB_A_RECORD_USER_AGENT, lr->user_agent,
			     lr->user_agent_len))
		goto cancel;
	if (lr->ipv6 ? nla_put_in6_addr(skb, KWEB_A_RECORD_ADDR6, &lr->addr6) :
	    nla_put_in_addr(skb, KWEB_A_RECORD_ADDR4, lr->addr4))
		goto cancel;
	nla_nest_end(skb, rec);
	return 0;
cancel:
	nla_nest_cancel(skb, rec);
	return -EMSGSIZE;
}

void kweb_log_end(struct kweb_conn *conn, u16 status, u64 bytes)
{
	struct kweb_server *srv = conn->srv;
	struct sk_buff *full = NULL;
	struct kweb_log_batch *b;
	unsigned int n = 0, need;
	bool first = false;
	void *hdr = NULL;

	if (!conn->log.pending)
		return;
	conn->log.pending = false;
	trace_kweb_request_done(conn, status, bytes);
	if (!conn->log.active)
		return;
	conn->log.active = false;
	need = kweb_log_record_size(&conn->log);

	local_bh_disable();
	b = this_cpu_ptr(srv->log);
	spin_lock(&b->lock);
	/* The batch goes out when this record would not fit in it. */
	if (b->skb && skb_tailroom(b->skb) < need)
		full = kweb_log_detach(b, &hdr, &n);
	if (!b->skb) {
		b->skb = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
		if (b->skb)
			b->hdr = genlmsg_put(b->skb, 0, 0, &kweb_nl_family, 0,
					     KWEB_CMD_LOG);
		if (b->skb && !b->hdr) {
			nlmsg_free(b->skb);
			b->skb = NULL;
		}
	}
	if (!b->skb || kweb_log_put(b->skb, conn, status, bytes))
		kweb_stat_add(srv->stats, KWEB_STAT_LOG_DROPPED, 1);
	else
		first = !b->n++;
	spin_unlock(&b->lock);
	if (full)
		kweb_log_send(srv, full, hdr, n);
	local_bh_enable();
	if (first)
		queue_delayed_work(kweb_wq, &srv->log_flush, KWEB_LOG_DELAY);
}
