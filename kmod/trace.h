/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kweb's tracepoints, system "kweb": a request done, a handoff, the file
 * cache's fills, evictions and invalidations, and a connection's close.
 * Disabled, each is a static branch at its call site: everything an
 * event records is gathered in its TP_fast_assign(), only when it is
 * enabled. docs/tracing.md lists the fields, with examples. kmod/trace.c
 * makes them (CREATE_TRACE_POINTS).
 *
 * Addresses are kept as trace/events/tcp.h keeps them: the socket's local
 * (saddr, kweb's) and peer (daddr, the client's) address and port, each a
 * struct sockaddr_in or sockaddr_in6, printed with %pISpc.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kweb

#if !defined(_KWEB_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KWEB_TRACE_H

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/tracepoint.h>
#include <net/inet_sock.h>
#include <net/sock.h>

#include "cache.h"
#include "compat.h"
#include "kweb.h"

/* Read once, unlike the rest of this header. */
#ifndef _KWEB_TRACE_HELPERS
#define _KWEB_TRACE_HELPERS

/* The longest method, and request target or cache key, an event keeps. */
#define KWEB_TRACE_METHOD_MAX 32
#define KWEB_TRACE_PATH_MAX 256

/*
 * sk's addresses and ports into two sizeof(struct sockaddr_in6) arrays,
 * as TP_STORE_ADDR_PORTS() of <trace/events/net_probe_common.h> does,
 * the bytes that no address fills zeroed.
 */
static inline void kweb_trace_addrs(u8 *saddr, u8 *daddr,
				    const struct sock *sk)
{
	const struct inet_sock *inet = inet_sk(sk);

	memset(saddr, 0, sizeof(struct sockaddr_in6));
	memset(daddr, 0, sizeof(struct sockaddr_in6));
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		struct sockaddr_in6 *v6 = (void *)saddr;

		v6->sin6_family = AF_INET6;
		v6->sin6_port = inet->inet_sport;
		v6->sin6_addr = sk->sk_v6_rcv_saddr;
		v6 = (void *)daddr;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = inet->inet_dport;
		v6->sin6_addr = sk->sk_v6_daddr;
		return;
	}
#endif
	{
		struct sockaddr_in *v4 = (void *)saddr;

		v4->sin_family = AF_INET;
		v4->sin_port = inet->inet_sport;
		v4->sin_addr.s_addr = inet->inet_saddr;
		v4 = (void *)daddr;
		v4->sin_family = AF_INET;
		v4->sin_port = inet->inet_dport;
		v4->sin_addr.s_addr = inet->inet_daddr;
	}
}

/* The request's method and target, if kweb_log_begin() kept them. */
static inline const char *kweb_trace_method(const struct kweb_log_req *lr)
{
	return lr->strings && lr->method ? lr->method : "";
}

static inline u32 kweb_trace_method_len(const struct kweb_log_req *lr)
{
	return lr->strings && lr->method ?
	       min_t(u32, lr->method_len, KWEB_TRACE_METHOD_MAX) : 0;
}

static inline const char *kweb_trace_target(const struct kweb_log_req *lr)
{
	return lr->strings && lr->target ? lr->target : "";
}

static inline u32 kweb_trace_target_len(const struct kweb_log_req *lr)
{
	return lr->strings && lr->target ?
	       min_t(u32, lr->target_len, KWEB_TRACE_PATH_MAX) : 0;
}

/* The listener whose cache c is. */
static inline const struct kweb_server *
kweb_trace_cache_srv(const struct kweb_cache *c)
{
	return container_of(c, struct kweb_server, cache);
}

#endif /* _KWEB_TRACE_HELPERS */

TRACE_DEFINE_ENUM(KWEB_ANSWERER_SOFTIRQ);
TRACE_DEFINE_ENUM(KWEB_ANSWERER_WORKER);
TRACE_DEFINE_ENUM(KWEB_ANSWERER_BACKEND);

#define show_kweb_answerer(v)					\
	__print_symbolic(v,					\
		{ KWEB_ANSWERER_SOFTIRQ,	"softirq" },	\
		{ KWEB_ANSWERER_WORKER,		"worker" },	\
		{ KWEB_ANSWERER_BACKEND,	"backend" })

TRACE_DEFINE_ENUM(KWEB_ROUTE_METHOD);
TRACE_DEFINE_ENUM(KWEB_ROUTE_QUERY);
TRACE_DEFINE_ENUM(KWEB_ROUTE_PREFIX);
TRACE_DEFINE_ENUM(KWEB_ROUTE_EXTENSION);
TRACE_DEFINE_ENUM(KWEB_ROUTE_UPGRADE);
TRACE_DEFINE_ENUM(KWEB_ROUTE_H2);
TRACE_DEFINE_ENUM(KWEB_ROUTE_UNPARSED);
TRACE_DEFINE_ENUM(KWEB_ROUTE_MISSING);
TRACE_DEFINE_ENUM(KWEB_HANDOFF_CONN_LIMIT);
TRACE_DEFINE_ENUM(KWEB_HANDOFF_TLS);

#define show_kweb_handoff_reason(v)				\
	__print_symbolic(v,					\
		{ KWEB_ROUTE_METHOD,		"method" },	\
		{ KWEB_ROUTE_QUERY,		"query" },	\
		{ KWEB_ROUTE_PREFIX,		"prefix" },	\
		{ KWEB_ROUTE_EXTENSION,		"extension" },	\
		{ KWEB_ROUTE_UPGRADE,		"upgrade" },	\
		{ KWEB_ROUTE_H2,		"h2" },		\
		{ KWEB_ROUTE_UNPARSED,		"unparsed" },	\
		{ KWEB_ROUTE_MISSING,		"missing" },	\
		{ KWEB_HANDOFF_CONN_LIMIT,	"conn_limit" },	\
		{ KWEB_HANDOFF_TLS,		"tls" })

TRACE_DEFINE_ENUM(KWEB_HANDOFF_MOVED);
TRACE_DEFINE_ENUM(KWEB_HANDOFF_NO_BACKEND);
TRACE_DEFINE_ENUM(KWEB_HANDOFF_QUEUE_FULL);
TRACE_DEFINE_ENUM(KWEB_HANDOFF_FAILED);

#define show_kweb_handoff_result(v)				\
	__print_symbolic(v,					\
		{ KWEB_HANDOFF_MOVED,		"moved" },	\
		{ KWEB_HANDOFF_NO_BACKEND,	"no_backend" },	\
		{ KWEB_HANDOFF_QUEUE_FULL,	"queue_full" },	\
		{ KWEB_HANDOFF_FAILED,		"failed" })

TRACE_DEFINE_ENUM(KWEB_CLOSE_EOF);
TRACE_DEFINE_ENUM(KWEB_CLOSE_LINGER);
TRACE_DEFINE_ENUM(KWEB_CLOSE_TIMEOUT);
TRACE_DEFINE_ENUM(KWEB_CLOSE_RESET);
TRACE_DEFINE_ENUM(KWEB_CLOSE_ERROR);
TRACE_DEFINE_ENUM(KWEB_CLOSE_ABORT);

#define show_kweb_close_reason(v)				\
	__print_symbolic(v,					\
		{ KWEB_CLOSE_EOF,		"eof" },	\
		{ KWEB_CLOSE_LINGER,		"linger" },	\
		{ KWEB_CLOSE_TIMEOUT,		"timeout" },	\
		{ KWEB_CLOSE_RESET,		"reset" },	\
		{ KWEB_CLOSE_ERROR,		"error" },	\
		{ KWEB_CLOSE_ABORT,		"abort" })

TRACE_DEFINE_ENUM(KWEB_ENC_BR);
TRACE_DEFINE_ENUM(KWEB_ENC_GZIP);
TRACE_DEFINE_ENUM(KWEB_ENC_IDENTITY);

#define show_kweb_encoding(v)					\
	__print_symbolic(v,					\
		{ KWEB_ENC_BR,			"br" },		\
		{ KWEB_ENC_GZIP,		"gzip" },	\
		{ KWEB_ENC_IDENTITY,		"identity" })

TRACE_DEFINE_ENUM(KWEB_CACHE_STALE);
TRACE_DEFINE_ENUM(KWEB_CACHE_REPLACED);
TRACE_DEFINE_ENUM(KWEB_CACHE_FLUSH);

#define show_kweb_cache_drop(v)					\
	__print_symbolic(v,					\
		{ KWEB_CACHE_STALE,		"stale" },	\
		{ KWEB_CACHE_REPLACED,		"replaced" },	\
		{ KWEB_CACHE_FLUSH,		"flush" })

/*
 * A request is done: its response sent (or cut short: bytes says how much
 * of the body went out), or the connection handed to the backend (status
 * 0, unless the handoff failed: 444). Once per request kweb_log_begin()
 * began, whether or not anyone reads the access log.
 */
TRACE_EVENT(kweb_request_done,

	TP_PROTO(const struct kweb_conn *conn, u16 status, u64 bytes),

	TP_ARGS(conn, status, bytes),

	TP_STRUCT__entry(
		__field(unsigned int, netns_ino)
		__field(u32, listener)
		__array(u8, saddr, sizeof(struct sockaddr_in6))
		__array(u8, daddr, sizeof(struct sockaddr_in6))
		__field(u16, status)
		__field(u8, answered)
		__field(u64, bytes)
		__field(u64, duration_ns)
		__string_len(method, kweb_trace_method(&conn->log),
			     kweb_trace_method_len(&conn->log))
		__string_len(target, kweb_trace_target(&conn->log),
			     kweb_trace_target_len(&conn->log))
	),

	TP_fast_assign(
		__entry->netns_ino = conn->srv->net->ns.inum;
		__entry->listener = conn->srv->id;
		kweb_trace_addrs(__entry->saddr, __entry->daddr, conn->sk);
		__entry->status = status;
		__entry->answered = conn->log.who;
		__entry->bytes = bytes;
		__entry->duration_ns = ktime_to_ns(ktime_sub(ktime_get(),
							     conn->log.start));
		kweb_assign_str_len(method, kweb_trace_method(&conn->log),
				    kweb_trace_method_len(&conn->log));
		kweb_assign_str_len(target, kweb_trace_target(&conn->log),
				    kweb_trace_target_len(&conn->log));
	),

	TP_printk("netns_ino=%u listener=%u src=%pISpc dest=%pISpc method=%s target=%s status=%u bytes=%llu answered=%s duration_ns=%llu",
		  __entry->netns_ino, __entry->listener,
		  __entry->saddr, __entry->daddr,
		  __get_str(method), __get_str(target),
		  __entry->status, __entry->bytes,
		  show_kweb_answerer(__entry->answered),
		  __entry->duration_ns)
);

/*
 * A handoff's outcome: moved to the backend, or refused with the status
 * kweb answers instead (0 when it answers nothing: the connection is
 * reset). sk is the connection's socket.
 */
TRACE_EVENT(kweb_handoff,

	TP_PROTO(const struct kweb_server *srv, const struct sock *sk,
		 int reason, int result, u16 status),

	TP_ARGS(srv, sk, reason, result, status),

	TP_STRUCT__entry(
		__field(unsigned int, netns_ino)
		__field(u32, listener)
		__array(u8, saddr, sizeof(struct sockaddr_in6))
		__array(u8, daddr, sizeof(struct sockaddr_in6))
		__field(u8, reason)
		__field(u8, result)
		__field(u16, status)
	),

	TP_fast_assign(
		__entry->netns_ino = srv->net->ns.inum;
		__entry->listener = srv->id;
		kweb_trace_addrs(__entry->saddr, __entry->daddr, sk);
		__entry->reason = reason;
		__entry->result = result;
		__entry->status = status;
	),

	TP_printk("netns_ino=%u listener=%u src=%pISpc dest=%pISpc reason=%s result=%s status=%u",
		  __entry->netns_ino, __entry->listener,
		  __entry->saddr, __entry->daddr,
		  show_kweb_handoff_reason(__entry->reason),
		  show_kweb_handoff_result(__entry->result),
		  __entry->status)
);

/*
 * A cache entry: its listener's, its key (the normalized request path,
 * "/HOST" first with virtual hosts) and coding, the file's size and the
 * bytes of page cache it pins.
 */
DECLARE_EVENT_CLASS(kweb_cache_class,

	TP_PROTO(const struct kweb_cache *c, const struct kweb_centry *e),

	TP_ARGS(c, e),

	TP_STRUCT__entry(
		__field(unsigned int, netns_ino)
		__field(u32, listener)
		__field(u8, enc)
		__field(u64, size)
		__field(u64, pinned)
		__string_len(path, e->key,
			     min_t(u32, e->key_len, KWEB_TRACE_PATH_MAX))
	),

	TP_fast_assign(
		__entry->netns_ino = kweb_trace_cache_srv(c)->net->ns.inum;
		__entry->listener = kweb_trace_cache_srv(c)->id;
		__entry->enc = e->enc;
		__entry->size = e->size;
		__entry->pinned = (u64)e->nr_pages << PAGE_SHIFT;
		kweb_assign_str_len(path, e->key,
				    min_t(u32, e->key_len,
					  KWEB_TRACE_PATH_MAX));
	),

	TP_printk("netns_ino=%u listener=%u path=%s enc=%s size=%llu pinned=%llu",
		  __entry->netns_ino, __entry->listener, __get_str(path),
		  show_kweb_encoding(__entry->enc),
		  __entry->size, __entry->pinned)
);

#define DEFINE_KWEB_CACHE_EVENT(name)					\
	DEFINE_EVENT(kweb_cache_class, name,				\
		TP_PROTO(const struct kweb_cache *c,			\
			 const struct kweb_centry *e),			\
		TP_ARGS(c, e))

/* An entry went into the cache (filled from the file on a miss). */
DEFINE_KWEB_CACHE_EVENT(kweb_cache_fill);
/* An entry made room for another (CLOCK over insertion order). */
DEFINE_KWEB_CACHE_EVENT(kweb_cache_evict);

/*
 * An entry was dropped: stale (its file changed, found at a lookup),
 * replaced by a newer fill of the same key, or flushed (kwebctl cache
 * flush, a settings change, the listener's stop).
 */
TRACE_EVENT(kweb_cache_invalidate,

	TP_PROTO(const struct kweb_cache *c, const struct kweb_centry *e,
		 int reason),

	TP_ARGS(c, e, reason),

	TP_STRUCT__entry(
		__field(unsigned int, netns_ino)
		__field(u32, listener)
		__field(u8, enc)
		__field(u8, reason)
		__field(u64, size)
		__field(u64, pinned)
		__string_len(path, e->key,
			     min_t(u32, e->key_len, KWEB_TRACE_PATH_MAX))
	),

	TP_fast_assign(
		__entry->netns_ino = kweb_trace_cache_srv(c)->net->ns.inum;
		__entry->listener = kweb_trace_cache_srv(c)->id;
		__entry->enc = e->enc;
		__entry->reason = reason;
		__entry->size = e->size;
		__entry->pinned = (u64)e->nr_pages << PAGE_SHIFT;
		kweb_assign_str_len(path, e->key,
				    min_t(u32, e->key_len,
					  KWEB_TRACE_PATH_MAX));
	),

	TP_printk("netns_ino=%u listener=%u path=%s enc=%s size=%llu pinned=%llu reason=%s",
		  __entry->netns_ino, __entry->listener, __get_str(path),
		  show_kweb_encoding(__entry->enc),
		  __entry->size, __entry->pinned,
		  show_kweb_cache_drop(__entry->reason))
);

/*
 * kweb closed a connection (one handed off ends in kweb_handoff instead)
 * for reason, after requests responses were complete on it.
 */
TRACE_EVENT(kweb_conn_close,

	TP_PROTO(const struct kweb_conn *conn),

	TP_ARGS(conn),

	TP_STRUCT__entry(
		__field(unsigned int, netns_ino)
		__field(u32, listener)
		__array(u8, saddr, sizeof(struct sockaddr_in6))
		__array(u8, daddr, sizeof(struct sockaddr_in6))
		__field(u8, reason)
		__field(u32, requests)
	),

	TP_fast_assign(
		__entry->netns_ino = conn->srv->net->ns.inum;
		__entry->listener = conn->srv->id;
		kweb_trace_addrs(__entry->saddr, __entry->daddr, conn->sk);
		__entry->reason = conn->close_reason;
		__entry->requests = conn->nr_requests;
	),

	TP_printk("netns_ino=%u listener=%u src=%pISpc dest=%pISpc reason=%s requests=%u",
		  __entry->netns_ino, __entry->listener,
		  __entry->saddr, __entry->daddr,
		  show_kweb_close_reason(__entry->reason),
		  __entry->requests)
);

#endif /* _KWEB_TRACE_H */

/* Outside the guard: <trace/define_trace.h> reads this header again. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
