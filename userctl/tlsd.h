/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwebtlsd: the TLS handshake daemon of kweb (docs/tls.md). Its files,
 * one job each:
 *   kwebtlsd.c     the event loop: accept, handshakes, timeouts, signals
 *   tlsd_conf.c    the configuration, certificates (SNI), ALPN, tickets
 *   tlsd_ktls.c    kTLS in both directions once the handshake is done
 *   tlsd_adopt.c   the socket back to kweb (its sock-adopt command)
 */
#ifndef KWEB_TLSD_H
#define KWEB_TLSD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <openssl/ssl.h>

#define TLSD_MAX_LISTEN 4

struct tlsd_vhost {
	char *name;
	SSL_CTX *ctx;
};

/*
 * A configuration as loaded: replaced whole on SIGHUP. Handshakes under
 * way keep the one they started with (refs), since its SNI callback
 * looks the vhosts up in it.
 */
struct tlsd_conf {
	int refs;
	char *listen[TLSD_MAX_LISTEN];
	int nr_listen;
	uint32_t listener_id;		/* kweb's, sockets go back to it */
	unsigned int max_pending;
	unsigned int handshake_timeout;	/* seconds */
	unsigned int ticket_rotate;	/* seconds */
	SSL_CTX *def;			/* the first cert: no SNI, or no match */
	struct tlsd_vhost *vhosts;
	int nr_vhosts;
};

/* What a handshake knows of itself, for the callbacks (SSL app data). */
struct tlsd_hs {
	struct tlsd_conf *conf;
	/* TLS 1.3: CLIENT_TRAFFIC_SECRET_0, from the keylog callback. */
	unsigned char secret[EVP_MAX_MD_SIZE];
	size_t secret_len;
};

/* tlsd_conf.c */
struct tlsd_conf *tlsd_conf_load(const char *path);
void tlsd_conf_put(struct tlsd_conf *conf);
/* Session ticket keys: new current one, the previous still decrypts. */
int tlsd_tickets_rotate(void);

/*
 * tlsd_ktls.c. watch: on a new handshake, to learn the client's secret;
 * step_done: after each SSL_do_handshake(). install: 0, or -1 with the
 * reason on stderr.
 */
void tlsd_ktls_watch(SSL *ssl);
void tlsd_ktls_step_done(SSL *ssl);
int tlsd_ktls_install(SSL *ssl, int fd, const struct tlsd_hs *hs);
const char *tlsd_ktls_rx_by(void);

/* tlsd_adopt.c: 0, or -1 with the reason on stderr. */
int tlsd_adopt(uint32_t listener, int fd);

#endif /* KWEB_TLSD_H */
