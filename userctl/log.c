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
 *
 * With --output FILE, for a service: each batch of records (one message
 * of the kernel's) goes to FILE in one write(2), FILE opened O_APPEND;
 * on SIGHUP or SIGUSR1, FILE is opened again by its name, between two
 * batches: what the kernel sends meanwhile waits in the socket, so a
 * rotation (rename, then the signal) loses no record and splits no line.
 * SIGTERM and SIGINT end it there too, once the records sent or batched
 * by then are written.
 * Records lost before they reach us, counted in the kernel's log-dropped,
 * are reported on stderr (the journal) as that counter grows.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <linux/genetlink.h>
#include <linux/kweb.h>

#include "json.h"
#include "log.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Seconds between two reads of log-dropped. */
#define KC_LOG_CHECK 10
/*
 * Told to stop, what the kernel has sent or batched still comes: until
 * nothing has for longer than a batch waits (100 ms), for 2 s at most.
 */
#define KC_LOG_DRAIN_MS 250
#define KC_LOG_DRAIN_MAX 2

struct kc_log {
	bool json;
	unsigned long count;	/* stop after this many; 0: never */
	unsigned long seen;
	/* --output FILE */
	const char *path;
	int fd;			/* -1: stdout */
	FILE *mem_out;		/* the batch being formatted */
	char *mem;
	size_t mem_len;
	unsigned long batch;	/* records in it */
	unsigned long lost;	/* not written since the last good write */
	/* Records lost before they reached us. */
	struct kc_nl stats;
	bool dropped_base_set;
	uint64_t dropped_base, dropped_told;
	unsigned long overruns;	/* ENOBUFS: this socket's buffer was full */
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
static void kc_clf_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02X", c);
		else
			putc(c, f);
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
static void kc_clf_field(FILE *f, const char *s)
{
	putc('"', f);
	if (s)
		kc_clf_str(f, s);
	else
		putc('-', f);
	putc('"', f);
}

static void kc_record_combined(FILE *f, const struct kc_record *r)
{
	time_t t = r->time / 1000000000;
	struct tm tm;
	char when[64];

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%d/%b/%Y:%H:%M:%S %z", &tm);
	fprintf(f, "%s - - [%s] \"", r->addr, when);
	if (*r->method) {
		kc_clf_str(f, r->method);
		putc(' ', f);
		kc_clf_str(f, r->target);
		if (*r->protocol) {
			putc(' ', f);
			kc_clf_str(f, r->protocol);
		}
	} else {
		putc('-', f);
	}
	if (r->has_status)
		fprintf(f, "\" %u %" PRIu64 " ", r->status, r->bytes);
	else
		fprintf(f, "\" - - ");
	kc_clf_field(f, r->referer);
	putc(' ', f);
	kc_clf_field(f, r->user_agent);
	putc('\n', f);
}

static void kc_record_json(FILE *f, const struct kc_record *r)
{
	time_t t = r->time / 1000000000;
	struct tm tm;
	char when[64];

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S%z", &tm);
	fprintf(f, "{\"time\": \"%s\", \"time_ns\": %" PRIu64 ", \"listener\": %u, \"client\": ",
		when, r->time, r->listener);
	kc_json_fstr(f, r->addr);
	fprintf(f, ", \"port\": %u, \"method\": ", r->port);
	kc_json_fstr(f, r->method);
	fprintf(f, ", \"target\": ");
	kc_json_fstr(f, r->target);
	fprintf(f, ", \"protocol\": ");
	kc_json_fstr(f, r->protocol);
	fprintf(f, ", \"referer\": ");
	if (r->referer)
		kc_json_fstr(f, r->referer);
	else
		fprintf(f, "null");
	fprintf(f, ", \"user_agent\": ");
	if (r->user_agent)
		kc_json_fstr(f, r->user_agent);
	else
		fprintf(f, "null");
	if (r->has_status)
		fprintf(f, ", \"status\": %u", r->status);
	else
		fprintf(f, ", \"status\": null");
	fprintf(f, ", \"bytes\": %" PRIu64 ", \"duration_ns\": %" PRIu64 ", \"answered\": \"%s\"}\n",
		r->bytes, r->duration,
		r->answered < ARRAY_SIZE(kc_answerers) ?
		kc_answerers[r->answered] : "unknown");
}

/*
 * Where a batch's lines go: stdout, or with --output a memory stream that
 * kc_log_flush() writes to the file in one write(2) (O_APPEND), so that a
 * batch is never split between the file before and after a rotation.
 */
static FILE *kc_log_out(struct kc_log *l)
{
	if (l->fd < 0)
		return stdout;
	if (!l->mem_out) {
		l->mem_out = open_memstream(&l->mem, &l->mem_len);
		if (!l->mem_out) {
			fprintf(stderr, "kwebctl: log: out of memory\n");
			exit(KC_ERROR);
		}
	}
	return l->mem_out;
}

static int kc_log_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct kc_log *l = data;
	const struct nlattr *a;
	struct kc_record r;
	FILE *f;

	if (g->cmd != KWEB_CMD_LOG)
		return MNL_CB_OK;
	f = kc_log_out(l);
	mnl_attr_for_each(a, nlh, sizeof(*g)) {
		if (mnl_attr_get_type(a) != KWEB_A_LOG_RECORD)
			continue;
		kc_record_read(a, &r);
		if (l->json)
			kc_record_json(f, &r);
		else
			kc_record_combined(f, &r);
		l->batch++;
		if (l->count && ++l->seen >= l->count)
			break;
	}
	return l->count && l->seen >= l->count ? MNL_CB_STOP : MNL_CB_OK;
}

/* The batch's lines out: to the file, or (a pipe too) at once to stdout. */
static void kc_log_flush(struct kc_log *l)
{
	size_t off = 0;
	ssize_t n = 0;

	if (l->fd < 0) {
		fflush(stdout);
		l->batch = 0;
		return;
	}
	if (!l->mem_out)
		return;
	if (fclose(l->mem_out)) {
		fprintf(stderr, "kwebctl: log: out of memory\n");
		exit(KC_ERROR);
	}
	l->mem_out = NULL;
	while (off < l->mem_len) {
		n = write(l->fd, l->mem + off, l->mem_len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += n;
	}
	if (off < l->mem_len) {
		/* Told once until a write succeeds again (a full disk). */
		if (!l->lost)
			fprintf(stderr, "kwebctl: log: writing %s: %s\n",
				l->path, n < 0 ? strerror(errno) : "short write");
		l->lost += l->batch;
	} else if (l->lost) {
		fprintf(stderr, "kwebctl: log: writing %s again; %lu records were lost\n",
			l->path, l->lost);
		l->lost = 0;
	}
	free(l->mem);
	l->mem = NULL;
	l->mem_len = 0;
	l->batch = 0;
}

static int kc_log_open(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
		    O_NOCTTY, 0640);
}

/* After a rotation: the file by its name again, a new one if need be. */
static void kc_log_reopen(struct kc_log *l)
{
	int fd = kc_log_open(l->path);

	if (fd < 0) {
		fprintf(stderr, "kwebctl: log: opening %s again: %s; still writing to the file open before\n",
			l->path, strerror(errno));
		return;
	}
	close(l->fd);
	l->fd = fd;
}

static int kc_dropped_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KWEB_A_STATS_MAX + 1];

	kc_nl_parse(nlh, tb, KWEB_A_STATS_MAX);
	if (tb[KWEB_A_STATS_LOG_DROPPED] &&
	    mnl_attr_validate(tb[KWEB_A_STATS_LOG_DROPPED], MNL_TYPE_U64) >= 0)
		*(uint64_t *)data =
			mnl_attr_get_u64(tb[KWEB_A_STATS_LOG_DROPPED]);
	return MNL_CB_OK;
}

/*
 * The namespace's log-dropped counter: records that did not reach every
 * subscriber. Read on a socket of its own: the log's carries records,
 * which a reply's reader would take for its own.
 */
static void kc_log_dropped(struct kc_log *l)
{
	struct nlmsghdr *nlh;
	uint64_t v = 0;

	if (!l->stats.buf)
		return;
	nlh = kc_nl_request(&l->stats, KWEB_CMD_STATS_GET, false);
	if (kc_nl_talk(&l->stats, nlh, kc_dropped_cb, &v, "log: stats")) {
		/* Said once; the log goes on without. */
		kc_nl_close(&l->stats);
		memset(&l->stats, 0, sizeof(l->stats));
		return;
	}
	if (!l->dropped_base_set) {
		l->dropped_base = v;
		l->dropped_told = v;
		l->dropped_base_set = true;
	} else if (v > l->dropped_told) {
		fprintf(stderr, "kwebctl: log: the kernel dropped %" PRIu64 " records since this log started (log-dropped)\n",
			v - l->dropped_base);
		l->dropped_told = v;
	}
}

/*
 * The signals kwebctl log acts on come through a signalfd, polled with
 * the socket: blocked, they wait for the loop to take them between two
 * batches. SIGHUP and SIGUSR1 only with --output; else they end kwebctl
 * as before.
 */
static int kc_log_signals(bool rotate)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (rotate) {
		sigaddset(&set, SIGHUP);
		sigaddset(&set, SIGUSR1);
	}
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* The signals waiting: false once one says to stop. */
static bool kc_log_signal(struct kc_log *l, int sfd)
{
	struct signalfd_siginfo si;
	bool rotate = false, stop = false;

	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			stop = true;
		else
			rotate = true;
	}
	if (rotate)
		kc_log_reopen(l);
	return !stop;
}

static double kc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int kc_log_loop(struct kc_nl *nl, struct kc_log *l, int sfd)
{
	size_t size = MNL_SOCKET_BUFFER_SIZE * 4;
	struct pollfd pfd[2] = {
		{ .fd = mnl_socket_get_fd(nl->sock), .events = POLLIN },
		{ .fd = sfd, .events = POLLIN },
	};
	double next = kc_now() + KC_LOG_CHECK, stop_by = 0;
	int n, ret = KC_OK;
	char *buf;

	buf = malloc(size);
	if (!buf)
		return KC_ERROR;
	for (;;) {
		if (kc_now() >= next) {
			kc_log_dropped(l);
			next = kc_now() + KC_LOG_CHECK;
		}
		if (stop_by && kc_now() >= stop_by)
			break;
		n = poll(pfd, 2, stop_by ? KC_LOG_DRAIN_MS : KC_LOG_CHECK * 1000);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "kwebctl: log: %s\n", strerror(errno));
			ret = KC_ERROR;
			break;
		}
		/* Stopping, and nothing came for longer than a batch waits. */
		if (!n && stop_by)
			break;
		/* Signals first: a rotation before the records that follow. */
		if (n > 0 && pfd[1].revents && !kc_log_signal(l, sfd)) {
			/* A second time: at once. */
			if (stop_by)
				break;
			stop_by = kc_now() + KC_LOG_DRAIN_MAX;
		}
		if (n <= 0 || !pfd[0].revents)
			continue;
		n = mnl_socket_recvfrom(nl->sock, buf, size);
		if (n < 0 && errno == ENOBUFS) {
			/* Our socket overflowed: say so, go on. */
			l->overruns++;
			fprintf(stderr, "kwebctl: log: records lost (receive buffer full, %lu times)\n",
				l->overruns);
			kc_log_dropped(l);
			continue;
		}
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			fprintf(stderr, "kwebctl: log: %s\n", strerror(errno));
			ret = KC_ERROR;
			break;
		}
		/* Multicast: no sequence number or port to match. */
		n = mnl_cb_run(buf, n, 0, 0, kc_log_cb, l);
		kc_log_flush(l);
		if (n <= MNL_CB_STOP) {
			ret = n < 0 ? KC_ERROR : KC_OK;
			break;
		}
	}
	kc_log_flush(l);
	free(buf);
	return ret;
}

int kc_cmd_log(struct kc_nl *nl, int argc, char **argv, bool json)
{
	struct kc_log l = { .json = json, .fd = -1 };
	int i, ret, sfd = -1;
	char *end;

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
		} else if (!strcmp(argv[i], "--output") && i + 1 < argc &&
			   *argv[i + 1]) {
			l.path = argv[++i];
		} else {
			fprintf(stderr, "kwebctl: log: unknown \"%s\" (see kwebctl log --help)\n",
				argv[i]);
			return KC_USAGE;
		}
	}
	/* First: a rotation's signal while starting must not end us. */
	sfd = kc_log_signals(l.path != NULL);
	if (sfd < 0) {
		fprintf(stderr, "kwebctl: log: signalfd: %s\n", strerror(errno));
		return KC_ERROR;
	}
	/* Not made: a missing directory is the unit's mistake to see. */
	if (l.path) {
		l.fd = kc_log_open(l.path);
		if (l.fd < 0) {
			fprintf(stderr, "kwebctl: log: %s: %s\n", l.path,
				strerror(errno));
			close(sfd);
			return KC_ERROR;
		}
	}
	ret = kc_nl_subscribe(nl);
	if (!ret && kc_nl_init(&l.stats))
		memset(&l.stats, 0, sizeof(l.stats));
	if (!ret) {
		/* Where log-dropped stood when the records began to come. */
		kc_log_dropped(&l);
		ret = kc_log_loop(nl, &l, sfd);
		kc_log_dropped(&l);
	}
	close(sfd);
	if (l.stats.buf)
		kc_nl_close(&l.stats);
	if (l.fd >= 0 && close(l.fd) && !ret) {
		fprintf(stderr, "kwebctl: log: %s: %s\n", l.path,
			strerror(errno));
		ret = KC_ERROR;
	}
	return ret;
}
