// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink for kwebctl on libmnl. libmnl parses messages and
 * attributes but leaves extended acks to the caller: the NLMSG_ERROR
 * handler here reads the kernel's message, the offset of the attribute it
 * blames (mapped back to a name through nl->attr_name) and the policy's
 * bounds, so that "invalid value" errors say what the kernel said.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/kweb.h>
#include <linux/netlink.h>

#include "nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* What an error reply said. */
struct kc_err {
	const struct nlmsghdr *req;
	int error;		/* errno, positive; 0 for an ack */
	/* The extack text, if any: a copy, the reply is freed before use. */
	char msg[256];
	uint16_t bad_type;	/* the attribute it blamed, if known */
	bool has_min, has_max, has_maxlen;
	uint64_t min, max, maxlen;
	uint16_t miss_type;
};

static int kc_policy_cb(const struct nlattr *a, void *data)
{
	struct kc_err *e = data;

	switch (mnl_attr_get_type(a)) {
	case NL_POLICY_TYPE_ATTR_MIN_VALUE_U:
		e->has_min = true;
		e->min = mnl_attr_get_u64(a);
		break;
	case NL_POLICY_TYPE_ATTR_MAX_VALUE_U:
		e->has_max = true;
		e->max = mnl_attr_get_u64(a);
		break;
	case NL_POLICY_TYPE_ATTR_MAX_LENGTH:
		e->has_maxlen = true;
		e->maxlen = mnl_attr_get_u32(a);
		break;
	}
	return MNL_CB_OK;
}

/* The request's attribute at byte offset off of the request, if any. */
static uint16_t kc_attr_at(const struct nlmsghdr *req, uint32_t off)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, req, sizeof(struct genlmsghdr))
		if ((const char *)a - (const char *)req == (long)off)
			return mnl_attr_get_type(a);
	return 0;
}

static int kc_extack_cb(const struct nlattr *a, void *data)
{
	struct kc_err *e = data;

	switch (mnl_attr_get_type(a)) {
	case NLMSGERR_ATTR_MSG:
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			snprintf(e->msg, sizeof(e->msg), "%s",
				 mnl_attr_get_str(a));
		break;
	case NLMSGERR_ATTR_OFFS:
		if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			e->bad_type = kc_attr_at(e->req, mnl_attr_get_u32(a));
		break;
	case NLMSGERR_ATTR_POLICY:
		mnl_attr_parse_nested(a, kc_policy_cb, e);
		break;
	case NLMSGERR_ATTR_MISS_TYPE:
		if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			e->miss_type = mnl_attr_get_u32(a);
		break;
	}
	return MNL_CB_OK;
}

static int kc_error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	struct kc_err *e = data;
	unsigned int off;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		e->error = EBADMSG;
		return MNL_CB_ERROR;
	}
	e->error = -err->error;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		/* The TLVs follow the request, or its header when capped. */
		off = sizeof(*err);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += err->msg.nlmsg_len - sizeof(struct nlmsghdr);
		off = MNL_ALIGN(off);
		if (mnl_nlmsg_size(off) <= nlh->nlmsg_len)
			mnl_attr_parse(nlh, off, kc_extack_cb, e);
	}
	return e->error ? MNL_CB_ERROR : MNL_CB_STOP;
}

/* A dump's end carries its status, as an error would. */
static int kc_done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kc_err *e = data;
	int status = 0;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(status))
		memcpy(&status, mnl_nlmsg_get_payload(nlh), sizeof(status));
	if (status < 0) {
		e->error = -status;
		return MNL_CB_ERROR;
	}
	return MNL_CB_STOP;
}

/* Data messages and control messages share one context in mnl_cb_run2(). */
struct kc_talk {
	struct kc_err e;	/* first: the control callbacks' data */
	kc_nl_cb cb;
	void *data;
};

static int kc_data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kc_talk *t = data;

	return t->cb ? t->cb(nlh, t->data) : MNL_CB_OK;
}

static const char *kc_name(struct kc_nl *nl, uint8_t cmd, uint16_t type)
{
	const char *n = nl->attr_name ? nl->attr_name(cmd, type) : NULL;

	return n ? n : "an attribute";
}

static int kc_nl_open(struct kc_nl *nl);

/* Print why the request failed; returns the exit code. */
static int kc_report(struct kc_nl *nl, const struct kc_err *e, uint8_t cmd,
		     const char *what)
{
	fprintf(stderr, "kwebctl: %s: ", what);
	if (e->msg[0])
		fprintf(stderr, "%s", e->msg);
	else
		fprintf(stderr, "%s", strerror(e->error));
	if (e->bad_type)
		fprintf(stderr, " (%s)", kc_name(nl, cmd, e->bad_type));
	if (e->miss_type)
		fprintf(stderr, " (%s is required)",
			kc_name(nl, cmd, e->miss_type));
	if (e->has_min && e->has_max)
		fprintf(stderr, "; valid: %llu..%llu",
			(unsigned long long)e->min,
			(unsigned long long)e->max);
	else if (e->has_min)
		fprintf(stderr, "; at least %llu",
			(unsigned long long)e->min);
	else if (e->has_max)
		fprintf(stderr, "; at most %llu",
			(unsigned long long)e->max);
	if (e->has_maxlen)
		fprintf(stderr, "; at most %llu bytes",
			(unsigned long long)e->maxlen);
	fputc('\n', stderr);
	switch (e->error) {
	case EPERM:
	case EACCES:
		/* With a reason, the kernel refused something else (user). */
		if (!e->msg[0])
			fprintf(stderr, "kwebctl: this needs CAP_NET_ADMIN (run it as root)\n");
		return KC_PERM;
	case ENOENT:
		return KC_NOT_FOUND;
	default:
		return KC_ERROR;
	}
}

static int kc_run(struct kc_nl *nl, struct nlmsghdr *nlh, kc_nl_cb cb,
		  void *data, struct kc_err *e)
{
	static mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_ERROR] = kc_error_cb,
		[NLMSG_DONE] = kc_done_cb,
	};
	struct kc_talk t = { .e = { .req = nlh }, .cb = cb, .data = data };
	unsigned int portid = mnl_socket_get_portid(nl->sock);
	unsigned int seq = nlh->nlmsg_seq;
	size_t size = MNL_SOCKET_BUFFER_SIZE * 4;
	char *rbuf;
	int n, ret = MNL_CB_ERROR;

	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0) {
		e->error = errno;
		return -1;
	}
	/* Replies go elsewhere: kc_attr_at() reads the request. */
	rbuf = malloc(size);
	if (!rbuf) {
		e->error = ENOMEM;
		return -1;
	}
	for (;;) {
		n = mnl_socket_recvfrom(nl->sock, rbuf, size);
		if (n < 0) {
			t.e.error = errno;
			break;
		}
		errno = 0;
		ret = mnl_cb_run2(rbuf, n, seq, portid, kc_data_cb, &t, ctl,
				  NLMSG_MIN_TYPE);
		if (ret <= MNL_CB_STOP)
			break;
	}
	free(rbuf);
	if (ret == MNL_CB_ERROR && !t.e.error)
		t.e.error = errno ? errno : EPROTO;
	*e = t.e;
	return ret == MNL_CB_ERROR ? -1 : 0;
}

int kc_nl_talk(struct kc_nl *nl, struct nlmsghdr *nlh, kc_nl_cb cb,
	       void *data, const char *what)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct kc_err e = { 0 };
	int ret;

	/* Opened only now: usage errors come first, module or not. */
	if (!nl->sock) {
		ret = kc_nl_open(nl);
		if (ret)
			return ret;
	}
	nlh->nlmsg_type = nl->family;

	if (kc_run(nl, nlh, cb, data, &e) < 0) {
		if (e.error == ENOENT && nl->quiet_not_found)
			return KC_NOT_FOUND;
		return kc_report(nl, &e, g->cmd, what);
	}
	return KC_OK;
}

int kc_nl_init(struct kc_nl *nl)
{
	nl->buf = calloc(1, MNL_SOCKET_BUFFER_SIZE);
	if (!nl->buf) {
		fprintf(stderr, "kwebctl: out of memory\n");
		return KC_ERROR;
	}
	nl->seq = time(NULL);
	return KC_OK;
}

/* The family id is filled in when it is sent. */
struct nlmsghdr *kc_nl_request(struct kc_nl *nl, uint8_t cmd, bool dump)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
	nlh->nlmsg_seq = ++nl->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

struct kc_family {
	uint16_t id;
	uint32_t version;
	uint32_t log_group;
};

/* One CTRL_ATTR_MCAST_GROUPS entry: remember the "log" group's id. */
static int kc_group_attr(const struct nlattr *a, void *data)
{
	const struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1] = { 0 };
	struct kc_family *f = data;
	const struct nlattr *b;

	mnl_attr_for_each_nested(b, a)
		if (mnl_attr_get_type(b) <= CTRL_ATTR_MCAST_GRP_MAX)
			tb[mnl_attr_get_type(b)] = b;
	if (tb[CTRL_ATTR_MCAST_GRP_NAME] && tb[CTRL_ATTR_MCAST_GRP_ID] &&
	    mnl_attr_validate(tb[CTRL_ATTR_MCAST_GRP_NAME],
			      MNL_TYPE_NUL_STRING) >= 0 &&
	    mnl_attr_validate(tb[CTRL_ATTR_MCAST_GRP_ID], MNL_TYPE_U32) >= 0 &&
	    !strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]),
		    KWEB_MCGRP_LOG))
		f->log_group = mnl_attr_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
	return MNL_CB_OK;
}

static int kc_family_attr(const struct nlattr *a, void *data)
{
	struct kc_family *f = data;

	if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GROUPS)
		mnl_attr_parse_nested(a, kc_group_attr, f);
	else if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID &&
	    mnl_attr_validate(a, MNL_TYPE_U16) >= 0)
		f->id = mnl_attr_get_u16(a);
	else if (mnl_attr_get_type(a) == CTRL_ATTR_VERSION &&
		 mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
		f->version = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

static int kc_family_cb(const struct nlmsghdr *nlh, void *data)
{
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), kc_family_attr, data);
	return MNL_CB_OK;
}

static int kc_nl_open(struct kc_nl *nl)
{
	char buf[MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct genlmsghdr)) + 64];
	struct kc_family f = { 0 };
	struct genlmsghdr *g;
	struct nlmsghdr *nlh;
	struct kc_err e = { 0 };
	int one = 1;

	nl->sock = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sock || mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		fprintf(stderr, "kwebctl: generic netlink socket: %s\n",
			strerror(errno));
		return KC_ERROR;
	}
	/* Error messages, without a copy of the request. */
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));

	/* Not in nl->buf, which holds the request waiting to be sent. */
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++nl->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, "kweb");
	if (kc_run(nl, nlh, kc_family_cb, &f, &e) < 0) {
		if (e.error == ENOENT) {
			fprintf(stderr, "kwebctl: the kweb module is not loaded\n");
			return KC_NOT_LOADED;
		}
		fprintf(stderr, "kwebctl: looking up the kweb family: %s\n",
			e.msg[0] ? e.msg : strerror(e.error));
		return KC_ERROR;
	}
	if (!f.id) {
		fprintf(stderr, "kwebctl: no id for the kweb family\n");
		return KC_ERROR;
	}
	nl->family = f.id;
	nl->version = f.version;
	nl->log_group = f.log_group;
	return KC_OK;
}

int kc_nl_subscribe(struct kc_nl *nl)
{
	int size = KC_LOG_RCVBUF;
	unsigned int group;
	int ret;

	if (!nl->sock) {
		ret = kc_nl_open(nl);
		if (ret)
			return ret;
	}
	if (!nl->log_group) {
		fprintf(stderr, "kwebctl: log: this kweb has no log group\n");
		return KC_ERROR;
	}
	group = nl->log_group;
	if (mnl_socket_setsockopt(nl->sock, NETLINK_ADD_MEMBERSHIP, &group,
				  sizeof(group)) < 0) {
		fprintf(stderr, "kwebctl: log: joining the log group: %s\n",
			strerror(errno));
		if (errno == EPERM || errno == EACCES) {
			fprintf(stderr, "kwebctl: this needs CAP_NET_ADMIN (run it as root)\n");
			return KC_PERM;
		}
		return KC_ERROR;
	}
	/*
	 * Room for a burst, or for a pause while the file is opened again:
	 * what finds this socket full is lost (log-dropped). Beyond
	 * rmem_max only with CAP_NET_ADMIN, which joining took already.
	 */
	if (setsockopt(mnl_socket_get_fd(nl->sock), SOL_SOCKET,
		       SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(mnl_socket_get_fd(nl->sock), SOL_SOCKET, SO_RCVBUF,
			   &size, sizeof(size));
	return KC_OK;
}

void kc_nl_close(struct kc_nl *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	free(nl->buf);
}

struct kc_parse {
	const struct nlattr **tb;
	unsigned int max;
};

static int kc_parse_cb(const struct nlattr *a, void *data)
{
	struct kc_parse *p = data;
	unsigned int type = mnl_attr_get_type(a);

	/* Attributes of a newer kernel are ignored. */
	if (type <= p->max)
		p->tb[type] = a;
	return MNL_CB_OK;
}

void kc_nl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb,
		 unsigned int max)
{
	struct kc_parse p = { .tb = tb, .max = max };

	memset(tb, 0, (max + 1) * sizeof(*tb));
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), kc_parse_cb, &p);
}
