/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kweb internals shared by the socket glue: the server (one port, its
 * docroot and listeners), the connections, and the statistics.
 */
#ifndef KWEB_H
#define KWEB_H

#include <linux/bvec.h>
#include <linux/in6.h>
#include <linux/kref.h>
#include <linux/llist.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/path.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "accesslog.h"
#include "cache.h"
#include "config.h"
#include "http_parse.h"
#include "http_path.h"
#include "http_route.h"
#include "kweb_rcu.h"
#include "site.h"

struct kweb_net;

#define KWEB_NAME "kweb"

/* Response header buffer: the header, and an error body after it. */
#define KWEB_HDR_MAX 2048

/* A request head softirq peeks into its CPU's scratch: most fit. */
#define KWEB_HEAD_SCRATCH 4096

/*
 * A request's path as it is resolved: the normalized path (at most
 * KWEB_PATH_NORM bytes with its NUL), then "index.html" for a directory,
 * then a precompressed file's suffix.
 */
#define KWEB_PATH_NORM (PATH_MAX - sizeof("index.html"))
#define KWEB_PATH_BUF (PATH_MAX + KWEB_ENC_SUFFIX_MAX)
/* Before it, room for a virtual host's "/HOST"; the buffer of both. */
#define KWEB_HOST_ROOM (KWEB_HOST_MAX + 1)
#define KWEB_REQ_BUF (KWEB_HOST_ROOM + KWEB_PATH_BUF)

enum kweb_stat {
	KWEB_STAT_CONN_ACCEPTED,
	KWEB_STAT_CONN_CLOSED,
	KWEB_STAT_REQ_SOFTIRQ,		/* answered in the receive callback */
	KWEB_STAT_REQ_WORKER,		/* answered by the work item */
	KWEB_STAT_REQ_ERROR,		/* of those, 4xx/5xx errors */
	KWEB_STAT_BODY_SPLICED,		/* body bytes handed to TCP as pages */
	KWEB_STAT_BODY_COPIED,		/* body bytes TCP had to copy */
	KWEB_STAT_CACHE_HITS,
	KWEB_STAT_CACHE_MISSES,
	KWEB_STAT_CACHE_EVICTIONS,
	KWEB_STAT_CACHE_INVALIDATIONS,
	/* Handoffs by reason, in enum kweb_route's order from METHOD. */
	KWEB_STAT_HANDOFF_METHOD,
	KWEB_STAT_HANDOFF_QUERY,
	KWEB_STAT_HANDOFF_PREFIX,
	KWEB_STAT_HANDOFF_EXTENSION,
	KWEB_STAT_HANDOFF_UPGRADE,
	KWEB_STAT_HANDOFF_H2,
	KWEB_STAT_HANDOFF_UNPARSED,
	KWEB_STAT_HANDOFF_MISSING,
	KWEB_STAT_HANDOFF_CONN_LIMIT,	/* at max_connections, unread */
	KWEB_STAT_HANDOFF_NO_BACKEND,	/* nothing listening: 502 */
	KWEB_STAT_HANDOFF_QUEUE_FULL,	/* backlog full: 503 */
	KWEB_STAT_HANDOFF_FAILED,	/* anything else: 503 or a reset */
	KWEB_STAT_LOG_RECORDS,		/* access log records published */
	KWEB_STAT_LOG_DROPPED,		/* ... and lost */
	KWEB_STAT_CONN_SOFTIRQ,		/* closed, all else done in softirq */
	KWEB_STAT_HANDOFF_SOFTIRQ,	/* moved to the backend in softirq */
	KWEB_STAT_TLS_CONNS,		/* adopted from kwebtlsd */
	KWEB_STAT_TLS_BYTES,		/* sent through kTLS, so encrypted */
	KWEB_STAT_NR,
};

extern const char *const kweb_stat_names[KWEB_STAT_NR];
extern atomic_long_t kweb_cache_pinned;	/* bytes of pages cache entries pin */

/*
 * Pinned bytes as net may see them, cached its listeners' cache bytes:
 * every namespace's from the initial one, the host's; its own elsewhere.
 */
static inline size_t kweb_pinned_bytes(const struct net *net, size_t cached)
{
	return net_eq(net, &init_net) ?
	       max_t(long, atomic_long_read(&kweb_cache_pinned), 0) : cached;
}

struct kweb_stats {
	u64 v[KWEB_STAT_NR];
};

/*
 * Counted for the listener whose counters own are. A namespace's totals
 * are its listeners' added up when read, plus those of its listeners
 * gone: the data path pays for one counter, and no namespace sees
 * another's traffic.
 */
static inline void kweb_stat_add(struct kweb_stats __percpu *own,
				 enum kweb_stat s, u64 n)
{
	this_cpu_add(own->v[s], n);
}

u64 kweb_stat_read_own(struct kweb_stats __percpu *own, enum kweb_stat s);
/* Under kweb_ctl_mutex: net's totals, its listeners gone included. */
u64 kweb_stat_read(const struct net *net, enum kweb_stat s);
/* Every namespace's, listeners gone included (for the unload message). */
u64 kweb_stat_read_all(enum kweb_stat s);

struct kweb_server;

/* One listening socket: one per address family. */
struct kweb_listener {
	struct socket *sock;
	struct kweb_server *srv;
	struct work_struct accept_work;
	const struct proto_ops *ops;	/* for children's own sockets */
	/* The socket's own callbacks, restored on children we let go. */
	void (*orig_data_ready)(struct sock *sk);
	void (*orig_write_space)(struct sock *sk);
	void (*orig_state_change)(struct sock *sk);
};

/* Where requests kweb does not serve go (the routes are a site's). */
struct kweb_backend {
	__be32 addr4;
	struct in6_addr addr6;
	u16 port;			/* 0: its namespace's backend port */
};

/* How to make a server: what listener-add (or insmod) says. */
struct kweb_server_args {
	const char *docroot;
	struct path root;		/* docroot, by kweb_server_resolve() */
	u16 port;
	struct kweb_backend backend;
	u16 tls_port;			/* kwebtlsd's, or 0: cleartext */
	bool any;			/* every address of both families */
	bool has_addr4, has_addr6;	/* else only these */
	__be32 addr4;
	struct in6_addr addr6;
	const struct kweb_site_args *site;	/* its own settings */
	/* Which input to blame in an extack message; NULL at module load. */
	const struct nlattr *docroot_attr, *port_attr, *addr_attr;
};

/*
 * identity.c: who a server opens files as; see there. cred is read under
 * RCU, replaced under kweb_ctl_mutex.
 */
struct kweb_ident {
	const struct cred *base;	/* the creator's, stripped: copied from */
	const struct cred __rcu *cred;	/* user/group's: files are opened so */
	const struct cred *next;	/* config-set: prepared, not yet in force */
	bool may_setuid, may_setgid;	/* the creator's, in its user namespace */
	/* Its network namespace's owner, where the ids are. */
	struct user_namespace *owner;
};

/* A listener's connection runs at a time: its workqueue's max_active. */
#define KWEB_SERVER_RUNS 32

/*
 * A port served from one docroot: a listener of the netlink API. Servers
 * are in kweb_servers, created and stopped under kweb_ctl_mutex; a
 * stopped one waits on another list until its last connection is gone
 * (kweb_server_destroy()).
 */
struct kweb_server {
	u32 id;
	struct list_head node;		/* in kweb_servers, then dying */
	struct path docroot;
	struct kweb_ident ident;	/* files are opened with its cred */
	u16 port;
	bool any;			/* as in struct kweb_server_args */
	bool has_addr4, has_addr6;
	__be32 addr4;
	struct in6_addr addr6;
	struct kweb_backend backend;	/* .port: WRITE_ONCE(), listener-set */
	/*
	 * HTTPS: every connection goes, unread, to the TLS handshake
	 * daemon on this port (at the backend's addresses); 0: cleartext.
	 */
	u16 tls_port;
	struct kweb_site __rcu *site;	/* its own settings (site.h) */
	struct kweb_cache cache;
	struct net *net;		/* where the listeners are, and its settings */
	/* net's kweb_net: its settings, read per request without net_generic() */
	struct kweb_net *kn;
	/* Its creator's: the pages it reads and pins are charged there. */
	struct mem_cgroup *memcg;
	struct kweb_listener listeners[2];	/* IPv4, IPv6 */
	int nr_listeners;
	struct kweb_stats __percpu *stats;	/* this listener's counters */
	struct kweb_log_batch __percpu *log;	/* accesslog.c */
	struct delayed_work log_flush;

	/*
	 * Its connections' runs, which may wait on its docroot's
	 * filesystem for as long as it likes (a tenant's FUSE daemon
	 * stopped): no other listener's runs queue behind them.
	 */
	struct workqueue_struct *wq;

	spinlock_t conns_lock;		/* conns, nr_conns, dying */
	struct list_head conns;
	unsigned int nr_conns;
	bool dying;			/* stopped: the last conn queues reap */
	struct work_struct reap;	/* frees it, once no conn is left */
};

enum kweb_conn_state {
	KWEB_CONN_READ,		/* waiting for (the rest of) a request head */
	KWEB_CONN_SEND,		/* a response is going out */
	KWEB_CONN_HANDOFF_WAIT,	/* for our responses' ACKs, then HANDOFF */
	KWEB_CONN_HANDOFF,	/* to be moved to the backend's accept queue */
	KWEB_CONN_LINGER,	/* our side shut down; draining until the FIN */
	KWEB_CONN_DONE,		/* to be released */
};

/*
 * Why a connection was closed (the kweb_conn_close tracepoint): set with
 * the state KWEB_CONN_DONE, the first reason found kept.
 */
enum kweb_close_reason {
	KWEB_CLOSE_EOF,		/* the client's FIN, with no response due */
	KWEB_CLOSE_LINGER,	/* the client's FIN after ours: a last response */
	KWEB_CLOSE_TIMEOUT,	/* header, keep-alive, send or linger timeout */
	KWEB_CLOSE_RESET,	/* the client reset the connection */
	KWEB_CLOSE_ERROR,	/* another socket error, or out of memory */
	KWEB_CLOSE_ABORT,	/* the listener is stopping */
};

/*
 * What became of a handoff (the kweb_handoff tracepoint). Its reason is
 * an enum kweb_route, or KWEB_HANDOFF_CONN_LIMIT: a new connection that
 * kweb, at max_connections, has no room for.
 */
enum kweb_handoff_result {
	KWEB_HANDOFF_MOVED,		/* into the backend's accept queue */
	KWEB_HANDOFF_NO_BACKEND,	/* nothing listening: 502 */
	KWEB_HANDOFF_QUEUE_FULL,	/* the backend's backlog is full: 503 */
	KWEB_HANDOFF_FAILED,		/* anything else: 503, or a reset */
};

enum {
	KWEB_HANDOFF_CONN_LIMIT = KWEB_ROUTE_NR,
	KWEB_HANDOFF_TLS,		/* a TLS listener's, to kwebtlsd */
};

/* A file being sent, and what the cache needs to know of it. */
struct kweb_file {
	struct file *filp;
	loff_t size;
	s64 mtime;
	struct timespec64 ctime;
	unsigned int rename_seq;	/* rename_lock, sampled before lookup */
	bool via_symlink;		/* the lookup followed a symlink */
	u16 host_len;			/* of "/HOST" before the path, or 0 */
	const char *content_type;
	u32 mime_gen;			/* its cache's mime_gen before it */
};

/* Page references for a run of a file's bytes: see kweb_file_read_pages(). */
struct kweb_pages {
	struct bio_vec *bv;		/* max of them, nr filled */
	unsigned int nr;
	unsigned int max;
};

/* Pages a file body is sent from at a time, per connection sending one. */
#define KWEB_SEND_BATCH 16

/* Where a response's header is (kweb_response_hdr()). */
enum kweb_hdr_buf {
	KWEB_HDR_SCRATCH,		/* this CPU's softirq scratch, or none */
	KWEB_HDR_KEPT,			/* its unsent rest, kmemdup()ed */
	KWEB_HDR_SPARE,			/* the worker's, KWEB_HDR_MAX bytes */
};

/*
 * The response in flight: a header, then [pos, end) of the body, from a
 * cache entry (which softirq can send) or else from an open file.
 */
struct kweb_response {
	char *hdr;			/* see kweb_response_hdr() */
	enum kweb_hdr_buf hdr_buf;
	unsigned int hdr_len;
	unsigned int hdr_sent;
	struct kweb_centry *entry;
	struct kweb_file file;
	/* A file's next pages, from bv[next]; bv only while sending one. */
	struct kweb_pages batch;
	unsigned int next;
	loff_t pos;
	loff_t end;
	bool keep_alive;
	u16 status;			/* for the access log */
	u64 body_len;
};

/*
 * A connection. Its struct socket, head buffer and response header are
 * allocated only when needed (kweb_conn_sock(), kweb_conn_read() and
 * kweb_response_hdr()), so an idle one costs this structure alone.
 */
struct kweb_conn {
	struct sock *sk;
	struct socket *sock;		/* NULL until it must wait for room */
	struct request_sock *req;	/* kept for the handoff */
	struct kweb_server *srv;
	struct kweb_listener *listener;
	struct list_head node;		/* in srv->conns */

	struct kref ref;		/* owner, plus one per queued work */
	struct work_struct work;
	struct llist_node close_node;	/* ended in softirq, to be closed */
	struct timer_list timer;	/* never after deadline; may be before */
	unsigned long deadline;		/* when the current timeout runs out */
	unsigned long send_deadline;	/* starved: when the send times out */
	bool timed_out;
	bool abort;			/* server stopping */
	bool reset;			/* close with a RST: a stalled response */
	bool closed;			/* closed or handed off: under the lock */
	bool running;			/* softirq is advancing it: under the lock */
	bool idle;			/* no byte of the next request yet */
	bool worked;			/* a work item did more than close */
	bool expired;			/* timer ran out: last read, then close */
	bool sending;			/* inside a send of ours: under the lock */
	bool starved;			/* TCP out of memory: timer retries */
	bool charged;			/* sk in srv->memcg: memcg.c */

	enum kweb_conn_state state;
	u8 close_reason;		/* enum kweb_close_reason, once DONE */
	char *buf;			/* peeked request head, buf_size */
	unsigned int buf_size;
	bool buf_scratch;		/* buf is this CPU's: softirq only */
	unsigned int peeked;		/* bytes of it in buf */
	struct kweb_head_scan scan;	/* how far buf was looked at */
	unsigned int head_unread;	/* SEND: answered head, to consume */
	u64 discard;			/* request body bytes still to drop */
	unsigned int nr_requests;
	struct kweb_response resp;
	struct sock *backend;		/* HANDOFF: its listener, referenced */
	enum kweb_route handoff;	/* HANDOFF(_WAIT): why */
	bool handoff_head;		/* HANDOFF_WAIT: 502/503 without a body */
	u16 handoff_status;		/* ... or this instead of 502, if any */
	struct kweb_log_req log;	/* the current request, for its record */

	/*
	 * HTTPS (tls.c): the socket kwebtlsd gave back, by its file (sock
	 * is its socket); NULL for a cleartext connection. Served by the
	 * work item only. kTLS's hooks that kweb's replaced, and the
	 * plaintext received and not yet consumed.
	 */
	struct file *file;
	void (*tls_data_ready)(struct sock *sk);
	void (*tls_write_space)(struct sock *sk);
	void (*tls_state_change)(struct sock *sk);
	void (*tls_error_report)(struct sock *sk);
	char *tls_in;
	unsigned int tls_len, tls_size;
	bool tls_eof;			/* an alert, or the FIN */
	bool tls_notified;		/* our close_notify is sent */
	bool tls_renego;		/* a renegotiation was refused */
	bool tls_more;			/* kTLS may hold bytes not peeked */
	int tls_err;			/* errno that ended the stream */
};

/* conn is to be closed, for why unless it already was. */
static inline void kweb_conn_done(struct kweb_conn *conn,
				  enum kweb_close_reason why)
{
	if (conn->state != KWEB_CONN_DONE)
		conn->close_reason = why;
	conn->state = KWEB_CONN_DONE;
}

/* proc.c: /proc/net/kweb, in every network namespace. */
int kweb_proc_init(struct net *net);
void kweb_proc_exit(struct net *net);

/*
 * server.c: the servers of every network namespace. kweb_ctl_mutex
 * serializes the control paths (netlink, /proc, netns exit, parameters);
 * the data path never takes it: it reaches its server from the socket.
 */
extern struct mutex kweb_ctl_mutex;
extern struct list_head kweb_servers;
struct netlink_ext_ack;
int kweb_server_resolve(struct kweb_server_args *args,
			struct netlink_ext_ack *extack);
struct kweb_server *kweb_server_create(struct net *net,
				       const struct kweb_server_args *args,
				       struct netlink_ext_ack *extack);
void kweb_server_destroy(struct kweb_server *srv);

/* What a namespace's servers hold (kweb_servers_totals()). */
struct kweb_totals {
	unsigned int conns;
	size_t cache_bytes;
	size_t cache_limit;
};

void kweb_servers_totals(const struct net *net, struct kweb_totals *t);
struct kweb_server *kweb_server_find(const struct net *net, u32 id);
bool kweb_backend_port_clashes(const struct net *net, u16 v);
int kweb_servers_ident_prepare(const struct net *net, u32 user, u32 group,
			       struct netlink_ext_ack *extack);
void kweb_servers_ident_commit(const struct net *net);
void kweb_servers_ident_abort(const struct net *net);
void kweb_servers_apply(const struct net *net, bool retype);
void kweb_servers_net_exit(const struct net *net);
void kweb_servers_exit(void);
u16 kweb_server_backend_port(const struct kweb_server *srv);
int kweb_server_set_backend_port(struct kweb_server *srv, u16 port);
/* Under kweb_ctl_mutex: srv's site, and replacing it (the old after RCU). */
struct kweb_site *kweb_server_site(const struct kweb_server *srv);
void kweb_server_site_replace(struct kweb_server *srv, struct kweb_site *site);

/*
 * A local of the request path that the function it is handed to fills
 * whole before any read (memset() first): no zeroing by the compiler
 * before that (CONFIG_INIT_STACK_ALL_ZERO), a rep stos of a few hundred
 * bytes per request otherwise.
 */
#if __has_attribute(__uninitialized__)
#define __kweb_filled_by_callee __attribute__((__uninitialized__))
#else
#define __kweb_filled_by_callee
#endif

/*
 * srv's namespace's settings, as kweb_config(srv->net) (config.h), in
 * any RCU reader or under kweb_ctl_mutex.
 */
const struct kweb_config *kweb_srv_config(const struct kweb_server *srv);

/* Whether srv's namespace sends requests for missing files to the backend. */
static inline bool kweb_backend_missing(const struct kweb_server *srv)
{
	bool on;

	kweb_rcu_lock();
	on = kweb_srv_config(srv)->backend_missing;
	kweb_rcu_unlock();
	return on;
}

/* srv's namespace's limits, as they are now (config.h); any context. */
static inline struct kweb_limits kweb_limits(const struct kweb_server *srv)
{
	struct kweb_limits l;

	kweb_rcu_lock();
	l = kweb_srv_config(srv)->limits;
	kweb_rcu_unlock();
	return l;
}

/* srv holds max_connections: a new connection is not its to take. */
static inline bool kweb_server_full(const struct kweb_server *srv)
{
	return READ_ONCE(srv->nr_conns) >= kweb_limits(srv).max_connections;
}

/* netlink.c: the kweb generic netlink family (uapi/kweb.yaml). */
extern struct genl_family kweb_nl_family;
int kweb_netlink_init(void);
void kweb_netlink_exit(void);

/* listener.c */
int kweb_listeners_start(struct kweb_server *srv);
void kweb_listeners_stop(struct kweb_server *srv);

/* handoff.c: moving a connection to the backend's accept queue. */
u16 kweb_handoff_prepare(struct kweb_conn *conn, enum kweb_route why);
void kweb_handoff(struct kweb_conn *conn, bool atomic);
bool kweb_handoff_child(struct kweb_listener *l, struct request_sock *req,
			struct sock *child);
bool kweb_handoff_tls(struct kweb_listener *l, struct request_sock *req,
		      struct sock *child);

/*
 * conn.c: kweb_conn_adopt() takes over a child popped from l's accept
 * queue with a connection from kweb_conn_alloc(); any context, never
 * sleeps.
 */
struct kweb_conn *kweb_conn_alloc(gfp_t gfp);
void kweb_conn_free_unused(struct kweb_conn *conn);
void kweb_conn_adopt(struct kweb_listener *l, struct kweb_conn *conn,
		     struct request_sock *req, struct sock *child);
void kweb_conn_adopt_tls(struct kweb_server *srv, struct kweb_conn *conn,
			 struct sock *sk);
void kweb_conn_data_ready(struct sock *sk);
void kweb_child_drop(struct request_sock *req, struct sock *child);
/* Process context: sk holds its netns from now on, unless it is dying. */
bool kweb_sk_hold_net(struct sock *sk);
void kweb_conns_abort(struct kweb_server *srv);
int kweb_conn_init(void);
void kweb_conn_exit(void);
extern struct workqueue_struct *kweb_wq;

/*
 * request.c: turn a parsed request into a response. The worker's
 * kweb_request_handle() may sleep, and returns KWEB_ROUTE_SERVE once it
 * has answered, or why the request is the backend's (then it has not).
 * kweb_request_cached() never sleeps and answers a request that
 * kweb_route_request() left to kweb only from the cache, returning false
 * when it cannot: with *why the reason if its path is the backend's,
 * KWEB_ROUTE_SERVE if only the worker can tell.
 */
enum kweb_route kweb_request_handle(struct kweb_conn *conn,
				    enum kweb_parse_result res,
				    struct kweb_request *req);
bool kweb_request_cached(struct kweb_conn *conn, struct kweb_request *req,
			 enum kweb_route *why);
/* The port conn's listener sends requests to over HTTPS, or 0. */
u16 kweb_request_https_port(struct kweb_conn *conn);
void kweb_response_error(struct kweb_conn *conn, u16 status, bool head,
			 bool keep_alive);
void kweb_response_release(struct kweb_response *resp);
int kweb_response_hdr_keep(struct kweb_response *resp);
char *kweb_request_head_scratch(void);
int kweb_request_init(void);
void kweb_request_exit(void);

/*
 * identity.c: at creation (current is the creator), _init(); afterwards,
 * under kweb_ctl_mutex, a cred for other ids from _prepare() (an ERR_PTR,
 * the reason in extack or, without one, dmesg) goes in force with
 * _replace(). _get() takes a reference on the
 * cred in force, in process context.
 */
int kweb_ident_init(struct kweb_ident *id, struct user_namespace *owner,
		    u32 user, u32 group, struct netlink_ext_ack *extack);
/* May the caller set these ids for a namespace owner owns? Listeners or not. */
int kweb_ident_check(struct user_namespace *owner, u32 user, u32 group,
		     struct netlink_ext_ack *extack);
const struct cred *kweb_ident_prepare(const struct kweb_ident *id, u32 user,
				      u32 group, struct netlink_ext_ack *extack);
void kweb_ident_replace(struct kweb_ident *id, const struct cred *cred);
const struct cred *kweb_ident_get(struct kweb_ident *id);
void kweb_ident_exit(struct kweb_ident *id);

/* file.c */
int kweb_file_open(struct kweb_server *srv, char *path, size_t len,
		   size_t host_len, struct kweb_file *f);
int kweb_file_dir(struct kweb_server *srv, const char *path);
void kweb_file_variants(struct kweb_server *srv, char *path,
			const struct kweb_file *f, struct kweb_variants *v);
void kweb_file_dir_stamp(const struct kweb_file *f, struct kweb_stamp *s);
void kweb_file_close(struct kweb_file *f);
ssize_t kweb_file_read_pages(struct kweb_file *f, loff_t pos, size_t len,
			     struct kweb_pages *pg);
void kweb_pages_release(struct kweb_pages *pg);

/* send.c: non-blocking sends on a locked socket. */
int kweb_send_response(struct kweb_conn *conn);
void kweb_send_fin(struct sock *sk);
int kweb_send_init(void);
void kweb_send_exit(void);

#endif /* KWEB_H */
