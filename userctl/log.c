// SPDX-License-Identifier: GPL-2.0
/*
 * kwebctl log: subscribe to the kweb family's "log" group and print each
 * record as it arrives, in nginx's "combined" format:
 *
 *   $remote_addr - - [$time_local] "$request" $status $body_bytes_sent
 *   "$http_referer" "$http_user_agent"
 *
 * A field the request did not have is "-", as in nginx. A request the
 * backend answered has "-" for status and bytes: the backend logs it
 * itself. With --format json, one object per line with every field of the
 * record (null for an absent Referer or User-Agent), including who
 * answered.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/genetlink.h>
#include <linux/kweb.h>

#include "json.h"
#include "log.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct kc_log {
	bool json;
	unsigned long count;	/* stop after this many; 0: never */
	unsigned long seen;
};

struct kc_record {
	uint64_t time, bytes, duration;
	uint32_t listener;
	uint16_t port, status;
	bool has_status;
	uint8_t answered;
	char addr[INET6_ADDRSTRLEN];
	const char *method, *target, *protocol;
	const char *referer, *user_agent;	/* NULL: absent */
};

static const char *const kc_answerers[] = {
	[KWEB_ANSWERER_SOFTIRQ] = "softirq",
	[KWEB_ANSWERER_WORKER] = "worker",
	[KWEB_ANSWERER_BACKEND] = "backend",
};

/* As nginx escapes variables in its log: \xHH for '"', '\\' and controls. */
static void kc_clf_str(const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f)
			printf("\\x%02X", c);
		else
			putchar(c);
	}
}

static const char *kc_str(const struct nlattr *a)
{
	if (!a || mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
		return "";
	return mnl_attr_get_str(a);
}

static void kc_record_read(const struct nlattr *nest, struct kc_record *r)
{
	const struct nlattr *tb[KWEB_A_RECORD_MAX + 1] = { 0 };
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest)
		if (mnl_attr_get_type(a) <= KWEB_A_RECORD_MAX)
			tb[mnl_attr_get_type(a)] = a;
	memset(r, 0, sizeof(*r));
#define KC_U(t, bits) (tb[t] && mnl_attr_validate(tb[t], MNL_TYPE_U##bits) >= 0 ? \
		       mnl_attr_get_u##bits(tb[t]) : 0)
	r->time = KC_U(KWEB_A_RECORD_TIME, 64);
	r->bytes = KC_U(KWEB_A_RECORD_BYTES, 64);
	r->duration = KC_U(KWEB_A_RECORD_DURATION, 64);
	r->listener = KC_U(KWEB_A_RECORD_LISTENER_ID, 32);
	r->port = KC_U(KWEB_A_RECORD_PORT, 16);
	r->status = KC_U(KWEB_A_RECORD_STATUS, 16);
	r->has_status = tb[KWEB_A_RECORD_STATUS];
	r->answered = KC_U(KWEB_A_RECORD_ANSWERED, 8);
#undef KC_U
	snprintf(r->addr, sizeof(r->addr), "-");
	a = tb[KWEB_A_RECORD_ADDR4];
	if (a && mnl_attr_get_payload_len(a) == 4)
		inet_ntop(AF_INET, mnl_attr_get_payload(a), r->addr,
			  sizeof(r->addr));
	a = tb[KWEB_A_RECORD_ADDR6];
	if (a && mnl_attr_get_payload_len(a) == 16)
		inet_ntop(AF_INET6, mnl_attr_get_payload(a), r->addr,
			  sizeof(r->addr));
	r->method = kc_str(tb[KWEB_A_RECORD_METHOD]);
	r->target = kc_str(tb[KWEB_A_RECORD_TARGET]);
	r->protocol = kc_str(tb[KWEB_A_RECORD_PROTOCOL]);
	r->referer = tb[KWEB_A_RECORD_REFERER] ?
		     kc_str(tb[KWEB_A_RECORD_REFERER]) : NULL;
	r->user_agent = tb[KWEB_A_RECORD_USER_AGENT] ?
			kc_str(tb[KWEB_A_RECORD_USER_AGENT]) : NULL;
}

/* A quoted request field of the combined format: "-" when absent. */
static void kc_clf_field(const char *s)
{
	putchar('"');
	if (s)
		kc_clf_str(s);
	else
		putchar('-');
	putchar('"');
}

static void kc_record_combined(const struct kc_record *r)
{
	time_t t = r->time / 1000000000;
	struct tm tm;
	char when[64];

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%d/%b/%Y:%H:%M:%S %z", &tm);
	printf("%s - - [%s] \"", r->addr, when);
	if (*r->method) {
		kc_clf_str(r->method);
		putchar(' ');
		kc_clf_str(r->target);
		if (*r->protocol) {
			putchar(' ');
			kc_clf_str(r->protocol);
		}
	} else {
		putchar('-');
	}
	if (r->has_status)
		printf("\" %u %" PRIu64 " ", r->status, r->bytes);
	else
		printf("\" - - ");
	kc_clf_field(r->referer);
	putchar(' ');
	kc_clf_field(r->user_agent);
	putchar('\n');
}

static void kc_record_json(const struct kc_record *r)
{
	time_t t = r->time / 1000000000;
	struct tm tm;
	char when[64];

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S%z", &tm);
	printf("{\"time\": \"%s\", \"time_ns\": %" PRIu64 ", \"listener\": %u, \"client\": ",
	       when, r->time, r->listener);
	kc_json_str(r->addr);
	printf(", \"port\": %u, \"method\": ", r->port);
	kc_json_str(r->method);
	printf(", \"target\": ");
	kc_json_str(r->target);
	printf(", \"protocol\": ");
	kc_json_str(r->protocol);
	printf(", \"referer\": ");
	if (r->referer)
		kc_json_str(r->referer);
	else
		printf("null");
	printf(", \"user_agent\": ");
	if (r->user_agent)
		kc_json_str(r->user_agent);
	else
		printf("null");
	if (r->has_status)
		printf(", \"status\": %u", r->status);
	else
		printf(", \"status\": null");
	printf(", \"bytes\": %" PRIu64 ", \"duration_ns\": %" PRIu64 ", \"answered\": \"%s\"}\n",
	       r->bytes, r->duration,
	       r->answered < ARRAY_SIZE(kc_answerers) ?
	       kc_answerers[r->answered] : "unknown");
}

static int kc_log_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct kc_log *l = data;
	const struct nlattr *a;
	struct kc_record r;

	if (g->cmd != KWEB_CMD_LOG)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*g)) {
		if (mnl_attr_get_type(a) != KWEB_A_LOG_RECORD)
			continue;
		kc_record_read(a, &r);
		if (l->json)
			kc_record_json(&r);
		else
			kc_record_combined(&r);
		if (l->count && ++l->seen >= l->count)
			break;
	}
	/* Lines reach a pipe as they come, not when a buffer fills. */
	fflush(stdout);
	return l->count && l->seen >= l->count ? MNL_CB_STOP : MNL_CB_OK;
}

int kc_cmd_log(struct kc_nl *nl, int argc, char **argv, bool json)
{
	struct kc_log l = { .json = json };
	char *end;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			i++;
			if (!strcmp(argv[i], "json")) {
				l.json = true;
			} else if (!strcmp(argv[i], "combined")) {
				l.json = false;
			} else {
				fprintf(stderr, "kwebctl: log: --format combined or json\n");
				return KC_USAGE;
			}
		} else if (!strcmp(argv[i], "--count") && i + 1 < argc) {
			i++;
			l.count = strtoul(argv[i], &end, 10);
			if (!*argv[i] || *end || !l.count) {
				fprintf(stderr, "kwebctl: log: --count takes a number of records, at least 1\n");
				return KC_USAGE;
			}
		} else {
			fprintf(stderr, "kwebctl: log: unknown \"%s\" (see kwebctl log --help)\n",
				argv[i]);
			return KC_USAGE;
		}
	}
	return kc_nl_listen(nl, kc_log_cb, &l);
}
