// SPDX-License-Identifier: GPL-2.0
/*
 * kTLS on a socket whose handshake is done. OpenSSL installs TX itself
 * (SSL_OP_ENABLE_KTLS), knowing the sequence numbers it used, and RX for
 * TLS 1.2. Debian 12's OpenSSL 3.0 installs no RX for TLS 1.3: the
 * client's key and IV are derived here from its application traffic
 * secret (RFC 8446 7.1 and 7.3), at record sequence 0, which holds only
 * if OpenSSL read no record after the client's Finished (read-ahead is
 * off: it reads a header, then exactly that record).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <linux/tls.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>

#include "tlsd.h"

#ifndef SOL_TLS
#define SOL_TLS 282
#endif

/*
 * The secret comes through OpenSSL's keylog callback, the one way 3.0
 * gives it out. OpenSSL formats each line it logs with a sprintf() per
 * byte: about 57,000 instructions a line, five lines a TLS 1.3
 * handshake. So the callback is on the context only while the client's
 * Finished may be read, where CLIENT_TRAFFIC_SECRET_0 is logged, and
 * off after each step; the daemon is single-threaded, so no other
 * handshake runs meanwhile.
 */
static void tlsd_keylog_cb(const SSL *ssl, const char *line)
{
	static const char tag[] = "CLIENT_TRAFFIC_SECRET_0 ";
	struct tlsd_hs *hs = SSL_get_app_data(ssl);
	const char *hex;
	size_t n = 0;

	if (!hs || strncmp(line, tag, sizeof(tag) - 1))
		return;
	hex = strrchr(line, ' ');
	if (!hex)
		return;
	for (hex++; hex[0] && hex[1] && n < sizeof(hs->secret); hex += 2) {
		int hi = OPENSSL_hexchar2int(hex[0]);
		int lo = OPENSSL_hexchar2int(hex[1]);

		if (hi < 0 || lo < 0)
			return;
		hs->secret[n++] = hi << 4 | lo;
	}
	hs->secret_len = n;
}

/*
 * Called before each state change, with the state being left. From the
 * server's Finished until the client's is read (through TLS 1.3's early
 * data state, and a client certificate's messages), the next message
 * processed may be that Finished.
 */
static void tlsd_info_cb(const SSL *ssl, int where, int ret)
{
	(void)ret;
	if (!(where & SSL_CB_LOOP) || SSL_version(ssl) != TLS1_3_VERSION)
		return;
	switch (SSL_get_state(ssl)) {
	case TLS_ST_SW_FINISHED:
	case TLS_ST_EARLY_DATA:
	case TLS_ST_SR_END_OF_EARLY_DATA:
	case TLS_ST_SR_CERT:
	case TLS_ST_SR_CERT_VRFY:
		SSL_CTX_set_keylog_callback(SSL_get_SSL_CTX(ssl),
					    tlsd_keylog_cb);
		break;
	default:
		break;
	}
}

void tlsd_ktls_watch(SSL *ssl)
{
	SSL_set_info_callback(ssl, tlsd_info_cb);
}

void tlsd_ktls_step_done(SSL *ssl)
{
	SSL_CTX_set_keylog_callback(SSL_get_SSL_CTX(ssl), NULL);
}

/* HKDF-Expand-Label(secret, label, "", len), RFC 8446 7.1. */
static int tlsd_expand_label(const EVP_MD *md, const unsigned char *secret,
			     size_t slen, const char *label,
			     unsigned char *out, size_t len)
{
	unsigned char info[2 + 1 + 6 + 32 + 1];
	size_t l = strlen(label), n = 0;
	int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY, ok;
	EVP_KDF_CTX *kctx;
	EVP_KDF *kdf;

	if (l > 32)
		return -1;
	info[n++] = len >> 8;
	info[n++] = len & 0xff;
	info[n++] = 6 + l;
	memcpy(info + n, "tls13 ", 6);
	n += 6;
	memcpy(info + n, label, l);
	n += l;
	info[n++] = 0;		/* empty context */

	kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	kctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	EVP_KDF_free(kdf);
	if (!kctx)
		return -1;
	{
		OSSL_PARAM params[] = {
			OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
				(char *)EVP_MD_get0_name(md), 0),
			OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
			OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
				(void *)secret, slen),
			OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
				info, n),
			OSSL_PARAM_construct_end(),
		};

		ok = EVP_KDF_derive(kctx, out, len, params) > 0;
	}
	EVP_KDF_CTX_free(kctx);
	return ok ? 0 : -1;
}

/* The kernel's view of the 1.3 suites kTLS takes; key and IV lengths. */
static int tlsd_rx13(SSL *ssl, int fd, const struct tlsd_hs *hs)
{
	const SSL_CIPHER *c = SSL_get_current_cipher(ssl);
	const EVP_MD *md = c ? SSL_CIPHER_get_handshake_digest(c) : NULL;
	unsigned char key[32], iv[12];
	union {
		struct tls12_crypto_info_aes_gcm_128 g128;
		struct tls12_crypto_info_aes_gcm_256 g256;
		struct tls12_crypto_info_chacha20_poly1305 cc;
	} ci;
	size_t klen, cilen;
	int ret = -1;

	if (!md || !hs->secret_len ||
	    hs->secret_len != (size_t)EVP_MD_get_size(md)) {
		fprintf(stderr, "kwebtlsd: no client traffic secret\n");
		return -1;
	}
	memset(&ci, 0, sizeof(ci));
	switch (SSL_CIPHER_get_protocol_id(c)) {
	case 0x1301:
		klen = 16;
		break;
	case 0x1302:
	case 0x1303:
		klen = 32;
		break;
	default:
		fprintf(stderr, "kwebtlsd: kTLS does not take %s\n",
			SSL_CIPHER_get_name(c));
		return -1;
	}
	if (tlsd_expand_label(md, hs->secret, hs->secret_len, "key", key,
			      klen) ||
	    tlsd_expand_label(md, hs->secret, hs->secret_len, "iv", iv,
			      sizeof(iv))) {
		fprintf(stderr, "kwebtlsd: HKDF failed\n");
		goto out;
	}
	/* Record sequence 0: rec_seq stays zero. */
	switch (SSL_CIPHER_get_protocol_id(c)) {
	case 0x1301:
		ci.g128.info.version = TLS_1_3_VERSION;
		ci.g128.info.cipher_type = TLS_CIPHER_AES_GCM_128;
		memcpy(ci.g128.key, key, 16);
		memcpy(ci.g128.salt, iv, 4);
		memcpy(ci.g128.iv, iv + 4, 8);
		cilen = sizeof(ci.g128);
		break;
	case 0x1302:
		ci.g256.info.version = TLS_1_3_VERSION;
		ci.g256.info.cipher_type = TLS_CIPHER_AES_GCM_256;
		memcpy(ci.g256.key, key, 32);
		memcpy(ci.g256.salt, iv, 4);
		memcpy(ci.g256.iv, iv + 4, 8);
		cilen = sizeof(ci.g256);
		break;
	default:
		ci.cc.info.version = TLS_1_3_VERSION;
		ci.cc.info.cipher_type = TLS_CIPHER_CHACHA20_POLY1305;
		memcpy(ci.cc.key, key, 32);
		memcpy(ci.cc.iv, iv, 12);
		cilen = sizeof(ci.cc);
		break;
	}
	if (setsockopt(fd, SOL_TLS, TLS_RX, &ci, cilen)) {
		fprintf(stderr, "kwebtlsd: TLS_RX: %s\n", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(iv, sizeof(iv));
	OPENSSL_cleanse(&ci, sizeof(ci));
	return ret;
}

static const char *tlsd_rx_by = "";

/* Who installed the last RX: "openssl" or "kwebtlsd" (for tests). */
const char *tlsd_ktls_rx_by(void)
{
	return tlsd_rx_by;
}

int tlsd_ktls_install(SSL *ssl, int fd, const struct tlsd_hs *hs)
{
	if (!BIO_get_ktls_send(SSL_get_wbio(ssl))) {
		fprintf(stderr, "kwebtlsd: OpenSSL did not install kTLS TX (is tls.ko loaded?)\n");
		return -1;
	}
	/* A record OpenSSL read past the Finished would be lost to kTLS. */
	if (SSL_has_pending(ssl)) {
		fprintf(stderr, "kwebtlsd: OpenSSL holds bytes past the handshake\n");
		return -1;
	}
	if (BIO_get_ktls_recv(SSL_get_rbio(ssl))) {
		tlsd_rx_by = "openssl";
		return 0;
	}
	if (SSL_version(ssl) != TLS1_3_VERSION) {
		fprintf(stderr, "kwebtlsd: OpenSSL did not install kTLS RX for %s\n",
			SSL_get_version(ssl));
		return -1;
	}
	tlsd_rx_by = "kwebtlsd";
	return tlsd_rx13(ssl, fd, hs);
}
