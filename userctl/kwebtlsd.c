// SPDX-License-Identifier: GPL-2.0
/*
 * kwebtlsd: accepts the connections a TLS listener of kweb hands to its
 * loopback port, runs their TLS handshakes with OpenSSL, non-blocking,
 * from one epoll loop, installs kTLS in both directions and gives each
 * socket back to kweb (docs/tls.md).
 *
 *   kwebtlsd [-c FILE] [--self-serve]
 *
 * --self-serve answers one request on each socket itself, through kTLS,
 * instead of giving it back: a test of the daemon without kweb.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <linux/tls.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tlsd.h"

#ifndef SOL_TLS
#define SOL_TLS 282
#endif

enum tlsd_kind { TLSD_LISTENER, TLSD_SIGNAL, TLSD_CONN };

struct tlsd_ev {
	enum tlsd_kind kind;
	int fd;
};

enum tlsd_state { TLSD_HANDSHAKE, TLSD_SERVE };

/* A connection, from accept() until kweb has it (or it is closed). */
struct tlsd_conn {
	struct tlsd_ev ev;
	enum tlsd_state state;
	SSL *ssl;
	struct tlsd_hs hs;
	long long deadline;		/* ms, CLOCK_MONOTONIC */
	uint32_t events;		/* what epoll waits for */
	struct tlsd_conn *prev, *next;
	/* --self-serve: the request head so far. */
	char req[2048];
	size_t req_len;
};

static struct {
	const char *path;
	bool self_serve;
	struct tlsd_conf *conf;
	int epfd;
	struct tlsd_ev listeners[TLSD_MAX_LISTEN];
	int nr_listeners;
	struct tlsd_ev sig;
	struct tlsd_conn *conns;	/* oldest first */
	unsigned int nr_pending;
	long long next_rotate;
	bool quit;
	/* Counters, printed on SIGUSR1 and at exit. */
	unsigned long accepted, done, resumed, adopted, failed, timed_out, refused;
} d;

static long long tlsd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int tlsd_listen_one(const char *spec)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	};
	char host[128], *port;
	struct addrinfo *ai;
	int fd, one = 1, err;

	if (snprintf(host, sizeof(host), "%s", spec) >= (int)sizeof(host))
		return -1;
	port = strrchr(host, ':');
	if (!port)
		goto bad;
	*port++ = '\0';
	if (host[0] == '[') {
		memmove(host, host + 1, strlen(host));
		if (!host[0] || host[strlen(host) - 1] != ']')
			goto bad;
		host[strlen(host) - 1] = '\0';
	}
	err = getaddrinfo(host, port, &hints, &ai);
	if (err)
		goto bad;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* kweb hands each family to a listener of that family. */
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 4096)) {
		close(fd);
		goto fail;
	}
	freeaddrinfo(ai);
	return fd;
fail:
	fprintf(stderr, "kwebtlsd: listen %s: %s\n", spec, strerror(errno));
	freeaddrinfo(ai);
	return -1;
bad:
	fprintf(stderr, "kwebtlsd: listen %s: want ADDR:PORT or [ADDR6]:PORT\n",
		spec);
	return -1;
}

static void tlsd_conn_unlink(struct tlsd_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		d.conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
}

/* c without its descriptor: closed, or kweb's (sock-adopt closed it). */
static void tlsd_conn_free(struct tlsd_conn *c)
{
	tlsd_conn_unlink(c);
	if (c->state == TLSD_HANDSHAKE)
		d.nr_pending--;
	SSL_free(c->ssl);
	OPENSSL_cleanse(c->hs.secret, sizeof(c->hs.secret));
	tlsd_conf_put(c->hs.conf);
	free(c);
}

/*
 * Out of epoll before the descriptor goes: close() leaves the epoll item
 * while another reference to the file lives, as one that a failed
 * sock-adopt dropped may: its events would name freed c.
 */
static void tlsd_conn_unwatch(struct tlsd_conn *c)
{
	epoll_ctl(d.epfd, EPOLL_CTL_DEL, c->ev.fd, NULL);
	c->events = 0;
}

/* reset: a RST, so that a refused or failed client leaves no orphan. */
static void tlsd_conn_close(struct tlsd_conn *c, bool reset)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (reset)
		setsockopt(c->ev.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	tlsd_conn_unwatch(c);
	close(c->ev.fd);
	tlsd_conn_free(c);
}

static void tlsd_conn_want(struct tlsd_conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = &c->ev };

	if (c->events == events)
		return;
	c->events = events;
	epoll_ctl(d.epfd, EPOLL_CTL_MOD, c->ev.fd, &ev);
}

static void tlsd_accept(struct tlsd_ev *l)
{
	struct tlsd_conn *c;
	struct epoll_event ev;
	int fd;

	for (;;) {
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				perror("kwebtlsd: accept");
			return;
		}
		d.accepted++;
		c = calloc(1, sizeof(*c));
		if (c)
			c->ssl = SSL_new(d.conf->def);
		/* At the cap, close rather than let the queue hold it. */
		if (!c || !c->ssl || d.nr_pending >= d.conf->max_pending) {
			struct linger lg = { .l_onoff = 1, .l_linger = 0 };

			if (c)
				SSL_free(c->ssl);
			free(c);
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			close(fd);
			d.refused++;
			continue;
		}
		c->ev.kind = TLSD_CONN;
		c->ev.fd = fd;
		c->hs.conf = d.conf;
		d.conf->refs++;
		c->deadline = tlsd_now() + d.conf->handshake_timeout * 1000LL;
		/*
		 * Read-ahead off: OpenSSL reads a record header, then that
		 * record, never past the client's Finished (tlsd_ktls.c).
		 */
		SSL_set_read_ahead(c->ssl, 0);
		SSL_set_app_data(c->ssl, &c->hs);
		tlsd_ktls_watch(c->ssl);
		SSL_set_fd(c->ssl, fd);
		SSL_set_accept_state(c->ssl);
		c->next = d.conns;
		if (d.conns)
			d.conns->prev = c;
		d.conns = c;
		d.nr_pending++;
		c->events = EPOLLIN;
		ev.events = EPOLLIN;
		ev.data.ptr = &c->ev;
		if (epoll_ctl(d.epfd, EPOLL_CTL_ADD, fd, &ev)) {
			tlsd_conn_close(c, true);
			d.failed++;
		}
	}
}

/* An alert record through kTLS TX: warning (1), close_notify (0). */
static void tlsd_close_notify(int fd)
{
	char cbuf[CMSG_SPACE(sizeof(unsigned char))] = { 0 };
	unsigned char alert[2] = { 1, 0 };
	struct iovec iov = { .iov_base = alert, .iov_len = sizeof(alert) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_TLS;
	cm->cmsg_type = TLS_SET_RECORD_TYPE;
	cm->cmsg_len = CMSG_LEN(sizeof(unsigned char));
	*CMSG_DATA(cm) = 21;	/* alert */
	sendmsg(fd, &msg, MSG_DONTWAIT);
}

/* --self-serve: read a request head through kTLS, answer, close. */
static void tlsd_serve(struct tlsd_conn *c)
{
	char cbuf[CMSG_SPACE(sizeof(unsigned char))], body[512], hdr[256];
	struct iovec iov = {
		.iov_base = c->req + c->req_len,
		.iov_len = sizeof(c->req) - 1 - c->req_len,
	};
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	const unsigned char *alpn;
	unsigned int alpn_len;
	const char *sni;
	ssize_t n;
	int blen, hlen;
	char *eol;

	n = recvmsg(c->ev.fd, &msg, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
	/* A record not of application data (23): an alert, close_notify. */
	if (n <= 0 || (cm && cm->cmsg_level == SOL_TLS &&
		       cm->cmsg_type == TLS_GET_RECORD_TYPE &&
		       *CMSG_DATA(cm) != 23)) {
		tlsd_conn_close(c, n < 0);
		return;
	}
	c->req_len += n;
	c->req[c->req_len] = '\0';
	if (!strstr(c->req, "\r\n\r\n")) {
		if (c->req_len == sizeof(c->req) - 1)
			tlsd_conn_close(c, true);
		return;
	}
	eol = strstr(c->req, "\r\n");
	*eol = '\0';
	SSL_get0_alpn_selected(c->ssl, &alpn, &alpn_len);
	sni = SSL_get_servername(c->ssl, TLSEXT_NAMETYPE_host_name);
	blen = snprintf(body, sizeof(body),
			"kwebtlsd %s %s rx=%s alpn=%.*s sni=%s reused=%d request=%s\n",
			SSL_get_version(c->ssl),
			SSL_CIPHER_get_name(SSL_get_current_cipher(c->ssl)),
			tlsd_ktls_rx_by(), (int)alpn_len,
			alpn ? (const char *)alpn : "", sni ? sni : "-",
			SSL_session_reused(c->ssl), c->req);
	hlen = snprintf(hdr, sizeof(hdr),
			"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
			blen);
	/* Plain write(): kTLS TX makes the record. */
	if (write(c->ev.fd, hdr, hlen) != hlen ||
	    write(c->ev.fd, body, blen) != blen) {
		tlsd_conn_close(c, true);
		return;
	}
	tlsd_close_notify(c->ev.fd);
	shutdown(c->ev.fd, SHUT_WR);
	tlsd_conn_close(c, false);
}

static void tlsd_handshake(struct tlsd_conn *c)
{
	int r = SSL_do_handshake(c->ssl);

	tlsd_ktls_step_done(c->ssl);
	if (r != 1) {
		switch (SSL_get_error(c->ssl, r)) {
		case SSL_ERROR_WANT_READ:
			tlsd_conn_want(c, EPOLLIN);
			return;
		case SSL_ERROR_WANT_WRITE:
			tlsd_conn_want(c, EPOLLOUT);
			return;
		default:
			ERR_clear_error();
			d.failed++;
			tlsd_conn_close(c, true);
			return;
		}
	}
	/*
	 * Done, and the server's last flight (TLS 1.3 tickets included)
	 * written: kTLS continues from OpenSSL's sequence numbers.
	 */
	if (tlsd_ktls_install(c->ssl, c->ev.fd, &c->hs)) {
		d.failed++;
		tlsd_conn_close(c, true);
		return;
	}
	OPENSSL_cleanse(c->hs.secret, sizeof(c->hs.secret));
	d.done++;
	/* An abbreviated handshake: the client offered a session we took. */
	if (SSL_session_reused(c->ssl))
		d.resumed++;
	if (!d.self_serve) {
		/* Adopted, the socket and our descriptor are kweb's. */
		tlsd_conn_unwatch(c);
		if (tlsd_adopt(d.conf->listener_id, c->ev.fd)) {
			d.failed++;
			tlsd_conn_close(c, true);
			return;
		}
		d.adopted++;
		tlsd_conn_free(c);
		return;
	}
	d.nr_pending--;
	c->state = TLSD_SERVE;
	c->deadline = tlsd_now() + d.conf->handshake_timeout * 1000LL;
	tlsd_conn_want(c, EPOLLIN);
	/* The request may already be decrypted and waiting. */
	tlsd_serve(c);
}

static void tlsd_expire(void)
{
	long long now = tlsd_now();
	struct tlsd_conn *c, *next;

	for (c = d.conns; c; c = next) {
		next = c->next;
		if (c->deadline <= now) {
			d.timed_out++;
			tlsd_conn_close(c, true);
		}
	}
}

static void tlsd_stats(void)
{
	fprintf(stderr, "kwebtlsd: accepted %lu handshakes %lu resumed %lu adopted %lu failed %lu timed-out %lu refused %lu pending %u\n",
		d.accepted, d.done, d.resumed, d.adopted, d.failed, d.timed_out,
		d.refused, d.nr_pending);
}

/* SIGHUP: new certificates for new handshakes; nothing is dropped. */
static void tlsd_reload(void)
{
	struct tlsd_conf *conf = tlsd_conf_load(d.path);

	if (!conf) {
		fprintf(stderr, "kwebtlsd: reload failed, keeping the old configuration\n");
		return;
	}
	tlsd_conf_put(d.conf);
	d.conf = conf;
	fprintf(stderr, "kwebtlsd: reloaded %s\n", d.path);
}

static void tlsd_signal(void)
{
	struct signalfd_siginfo si;

	while (read(d.sig.fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			tlsd_reload();
		else if (si.ssi_signo == SIGUSR1)
			tlsd_stats();
		else
			d.quit = true;
	}
}

static int tlsd_setup(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;
	int i;

	d.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d.epfd < 0)
		return -1;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/* A client gone mid-write must not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);
	d.sig.kind = TLSD_SIGNAL;
	d.sig.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	ev.data.ptr = &d.sig;
	if (d.sig.fd < 0 || epoll_ctl(d.epfd, EPOLL_CTL_ADD, d.sig.fd, &ev))
		return -1;
	for (i = 0; i < d.conf->nr_listen; i++) {
		struct tlsd_ev *l = &d.listeners[d.nr_listeners];

		l->kind = TLSD_LISTENER;
		l->fd = tlsd_listen_one(d.conf->listen[i]);
		if (l->fd < 0)
			return -1;
		ev.data.ptr = l;
		if (epoll_ctl(d.epfd, EPOLL_CTL_ADD, l->fd, &ev))
			return -1;
		d.nr_listeners++;
	}
	return 0;
}

static void tlsd_loop(void)
{
	struct epoll_event evs[64];
	int i, n;

	while (!d.quit) {
		n = epoll_wait(d.epfd, evs, 64, 250);
		for (i = 0; i < n; i++) {
			struct tlsd_ev *e = evs[i].data.ptr;
			struct tlsd_conn *c;

			switch (e->kind) {
			case TLSD_LISTENER:
				tlsd_accept(e);
				break;
			case TLSD_SIGNAL:
				tlsd_signal();
				break;
			case TLSD_CONN:
				c = (struct tlsd_conn *)e;
				if (c->state == TLSD_HANDSHAKE)
					tlsd_handshake(c);
				else
					tlsd_serve(c);
				break;
			}
		}
		if (tlsd_now() >= d.next_rotate) {
			if (tlsd_tickets_rotate())
				fprintf(stderr, "kwebtlsd: cannot rotate ticket keys\n");
			d.next_rotate = tlsd_now() + d.conf->ticket_rotate * 1000LL;
		}
		tlsd_expire();
	}
}

static void tlsd_usage(FILE *f)
{
	fprintf(f, "usage: kwebtlsd [-c FILE] [--self-serve]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "self-serve", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int o;

	d.path = "/etc/kweb/tls.conf";
	while ((o = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (o) {
		case 'c':
			d.path = optarg;
			break;
		case 's':
			d.self_serve = true;
			break;
		case 'h':
			tlsd_usage(stdout);
			return 0;
		default:
			tlsd_usage(stderr);
			return 2;
		}
	}
	d.conf = tlsd_conf_load(d.path);
	if (!d.conf)
		return 1;
	if (!d.self_serve && !d.conf->listener_id) {
		fprintf(stderr, "kwebtlsd: %s: needs a listener line (kweb's TLS listener id)\n",
			d.path);
		return 1;
	}
	if (tlsd_setup()) {
		perror("kwebtlsd: setup");
		return 1;
	}
	fprintf(stderr, "kwebtlsd: ready\n");
	tlsd_loop();
	tlsd_stats();
	while (d.conns)
		tlsd_conn_close(d.conns, true);
	tlsd_conf_put(d.conf);
	return 0;
}
