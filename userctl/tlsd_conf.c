// SPDX-License-Identifier: GPL-2.0
/*
 * kwebtlsd's configuration: the file (docs/tls.md), an SSL_CTX per
 * certificate (the first the default, the others picked by SNI), ALPN
 * and the session ticket keys.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "tlsd.h"

/* What kTLS does in software on 6.1 and 6.12, and nothing else. */
#define TLSD_CIPHERS_12 "ECDHE+AESGCM:ECDHE+CHACHA20"
#define TLSD_SUITES_13 \
	"TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

static void tlsd_ssl_err(const char *what, const char *file)
{
	unsigned long e = ERR_get_error();
	char buf[256];

	ERR_error_string_n(e, buf, sizeof(buf));
	fprintf(stderr, "kwebtlsd: %s %s: %s\n", what, file, buf);
	ERR_clear_error();
}

/*
 * Ticket keys: the current one encrypts, the previous one still
 * decrypts (and asks for a new ticket), so a ticket lives between one
 * and two rotation periods. Shared by every SSL_CTX and kept across
 * reloads, so a reload does not cost resumptions.
 */
struct tlsd_ticket_key {
	unsigned char name[16];
	unsigned char aes[32];
	unsigned char hmac[32];
	bool set;
};

static struct tlsd_ticket_key tlsd_keys[2];	/* current, previous */

int tlsd_tickets_rotate(void)
{
	struct tlsd_ticket_key k = { .set = true };

	if (RAND_bytes(k.name, sizeof(k.name)) != 1 ||
	    RAND_priv_bytes(k.aes, sizeof(k.aes)) != 1 ||
	    RAND_priv_bytes(k.hmac, sizeof(k.hmac)) != 1)
		return -1;
	OPENSSL_cleanse(&tlsd_keys[1], sizeof(tlsd_keys[1]));
	tlsd_keys[1] = tlsd_keys[0];
	tlsd_keys[0] = k;
	OPENSSL_cleanse(&k, sizeof(k));
	return 0;
}

static int tlsd_ticket_mac(EVP_MAC_CTX *hctx, const struct tlsd_ticket_key *k)
{
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY,
						  (void *)k->hmac,
						  sizeof(k->hmac)),
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						 "SHA256", 0),
		OSSL_PARAM_construct_end(),
	};

	return EVP_MAC_CTX_set_params(hctx, params);
}

static int tlsd_ticket_cb(SSL *ssl, unsigned char name[16],
			  unsigned char *iv, EVP_CIPHER_CTX *cctx,
			  EVP_MAC_CTX *hctx, int enc)
{
	const struct tlsd_ticket_key *k;
	int i;

	(void)ssl;
	if (enc) {
		k = &tlsd_keys[0];
		if (!k->set || RAND_bytes(iv, 16) != 1)
			return -1;
		memcpy(name, k->name, sizeof(k->name));
		if (!EVP_EncryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, k->aes,
					iv) || !tlsd_ticket_mac(hctx, k))
			return -1;
		return 1;
	}
	for (i = 0; i < 2; i++) {
		k = &tlsd_keys[i];
		if (k->set && !memcmp(name, k->name, sizeof(k->name)))
			break;
	}
	if (i == 2)
		return 0;	/* unknown or expired: a full handshake */
	if (!EVP_DecryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, k->aes, iv) ||
	    !tlsd_ticket_mac(hctx, k))
		return -1;
	/* The previous key: valid, but renew the ticket. */
	return i == 0 ? 1 : 2;
}

/* HTTP/1.1 only: an h2 client that also offers it falls back, as nginx's. */
static int tlsd_alpn_cb(SSL *ssl, const unsigned char **out,
			unsigned char *outlen, const unsigned char *in,
			unsigned int inlen, void *arg)
{
	static const unsigned char h11[] = "\x08http/1.1";

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto((unsigned char **)out, outlen, h11,
				  sizeof(h11) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	return SSL_TLSEXT_ERR_OK;
}

/* SNI: the vhost's certificate, or the default's. */
static int tlsd_sni_cb(SSL *ssl, int *alert, void *arg)
{
	const struct tlsd_hs *hs = SSL_get_app_data(ssl);
	const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	int i;

	(void)alert;
	(void)arg;
	if (!name || !hs)
		return SSL_TLSEXT_ERR_OK;
	for (i = 0; i < hs->conf->nr_vhosts; i++) {
		if (!strcasecmp(name, hs->conf->vhosts[i].name)) {
			SSL_set_SSL_CTX(ssl, hs->conf->vhosts[i].ctx);
			break;
		}
	}
	return SSL_TLSEXT_ERR_OK;
}

static SSL_CTX *tlsd_ctx_new(const char *cert, const char *key)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx) {
		tlsd_ssl_err("cannot make a context for", cert);
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/*
	 * OpenSSL installs kTLS TX itself, with the sequence numbers it
	 * used (and RX for TLS 1.2). No renegotiation: kTLS cannot rekey.
	 */
	SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS | SSL_OP_NO_RENEGOTIATION |
			    SSL_OP_CIPHER_SERVER_PREFERENCE |
			    SSL_OP_NO_COMPRESSION);
	/* Stateless tickets only: nothing to share between processes. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (!SSL_CTX_set_cipher_list(ctx, TLSD_CIPHERS_12) ||
	    !SSL_CTX_set_ciphersuites(ctx, TLSD_SUITES_13)) {
		tlsd_ssl_err("cannot set the ciphers for", cert);
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		tlsd_ssl_err("cannot load the certificate chain", cert);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		tlsd_ssl_err("cannot load the key", key);
		goto fail;
	}
	SSL_CTX_set_alpn_select_cb(ctx, tlsd_alpn_cb, NULL);
	SSL_CTX_set_tlsext_servername_callback(ctx, tlsd_sni_cb);
	/* SNI switches ctx: the tickets' are read from either. */
	SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, tlsd_ticket_cb);
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

void tlsd_conf_put(struct tlsd_conf *conf)
{
	int i;

	if (!conf || --conf->refs)
		return;
	for (i = 0; i < conf->nr_listen; i++)
		free(conf->listen[i]);
	for (i = 0; i < conf->nr_vhosts; i++) {
		free(conf->vhosts[i].name);
		SSL_CTX_free(conf->vhosts[i].ctx);
	}
	free(conf->vhosts);
	SSL_CTX_free(conf->def);
	free(conf);
}

static int tlsd_uint(const char *path, int line, const char *v,
		     unsigned int min, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = v ? strtoul(v, &end, 10) : 0;
	if (!v || errno || *end || n < min || n > max) {
		fprintf(stderr, "kwebtlsd: %s:%d: want a number from %u to %u\n",
			path, line, min, max);
		return -1;
	}
	*out = n;
	return 0;
}

/* One directive; -1 with the reason on stderr. */
static int tlsd_conf_line(struct tlsd_conf *c, const char *path, int line,
			  char **w, int nw)
{
	struct tlsd_vhost *v;
	unsigned int id;
	SSL_CTX *ctx;

	if (!strcmp(w[0], "listen") && nw == 2) {
		if (c->nr_listen == TLSD_MAX_LISTEN) {
			fprintf(stderr, "kwebtlsd: %s:%d: at most %d listen lines\n",
				path, line, TLSD_MAX_LISTEN);
			return -1;
		}
		c->listen[c->nr_listen] = strdup(w[1]);
		return c->listen[c->nr_listen++] ? 0 : -1;
	}
	if (!strcmp(w[0], "listener") && nw == 2) {
		if (tlsd_uint(path, line, w[1], 1, UINT32_MAX, &id))
			return -1;
		c->listener_id = id;
		return 0;
	}
	if (!strcmp(w[0], "max_pending") && nw == 2)
		return tlsd_uint(path, line, w[1], 1, 1 << 20, &c->max_pending);
	if (!strcmp(w[0], "handshake_timeout") && nw == 2)
		return tlsd_uint(path, line, w[1], 1, 3600,
				 &c->handshake_timeout);
	if (!strcmp(w[0], "ticket_rotate") && nw == 2)
		return tlsd_uint(path, line, w[1], 60, 7 * 86400,
				 &c->ticket_rotate);
	if (!strcmp(w[0], "cert") && nw == 3) {
		if (c->def) {
			fprintf(stderr, "kwebtlsd: %s:%d: one cert line; vhost for the others\n",
				path, line);
			return -1;
		}
		c->def = tlsd_ctx_new(w[1], w[2]);
		return c->def ? 0 : -1;
	}
	if (!strcmp(w[0], "vhost") && nw == 4) {
		ctx = tlsd_ctx_new(w[2], w[3]);
		if (!ctx)
			return -1;
		v = realloc(c->vhosts, (c->nr_vhosts + 1) * sizeof(*v));
		if (!v) {
			SSL_CTX_free(ctx);
			return -1;
		}
		c->vhosts = v;
		v[c->nr_vhosts].ctx = ctx;
		v[c->nr_vhosts].name = strdup(w[1]);
		if (!v[c->nr_vhosts++].name)
			return -1;
		return 0;
	}
	fprintf(stderr, "kwebtlsd: %s:%d: unknown directive or wrong number of words: %s\n",
		path, line, w[0]);
	return -1;
}

struct tlsd_conf *tlsd_conf_load(const char *path)
{
	struct tlsd_conf *c = calloc(1, sizeof(*c));
	char buf[4096], *w[8], *p;
	int line = 0, nw;
	FILE *f;

	if (!c)
		return NULL;
	c->refs = 1;
	c->max_pending = 512;
	c->handshake_timeout = 10;
	c->ticket_rotate = 3600;
	f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "kwebtlsd: %s: %s\n", path, strerror(errno));
		goto fail;
	}
	while (fgets(buf, sizeof(buf), f)) {
		line++;
		p = strchr(buf, '#');
		if (p)
			*p = '\0';
		nw = 0;
		for (p = strtok(buf, " \t\r\n"); p && nw < 8;
		     p = strtok(NULL, " \t\r\n"))
			w[nw++] = p;
		if (nw && tlsd_conf_line(c, path, line, w, nw)) {
			fclose(f);
			goto fail;
		}
	}
	fclose(f);
	if (!c->def || !c->nr_listen) {
		fprintf(stderr, "kwebtlsd: %s: needs a cert and a listen line\n",
			path);
		goto fail;
	}
	return c;
fail:
	tlsd_conf_put(c);
	return NULL;
}
