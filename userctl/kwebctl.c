// SPDX-License-Identifier: GPL-2.0
/*
 * kwebctl: control kweb over its generic netlink family (uapi/kweb.yaml),
 * iproute2-style: kwebctl [OPTIONS] OBJECT [COMMAND [ARGS]].
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kweb.h>

#include "ctl.h"
#include "json.h"
#include "log.h"
#include "nl.h"
#include "prom.h"

static bool json;

const char *kc_where = "";

const struct kc_key kc_config[] = {
	{ "header-timeout", KWEB_A_CONFIG_HEADER_TIMEOUT, KC_U32, true },
	{ "keepalive-timeout", KWEB_A_CONFIG_KEEPALIVE_TIMEOUT, KC_U32, true },
	{ "send-timeout", KWEB_A_CONFIG_SEND_TIMEOUT, KC_U32, true },
	{ "max-connections", KWEB_A_CONFIG_MAX_CONNECTIONS, KC_U32, true },
	{ "max-requests", KWEB_A_CONFIG_MAX_REQUESTS, KC_U32, true },
	{ "max-header-size", KWEB_A_CONFIG_MAX_HEADER_SIZE, KC_U32, false },
	{ "cache-size", KWEB_A_CONFIG_CACHE_SIZE, KC_U32, true },
	{ "cache-max-file", KWEB_A_CONFIG_CACHE_MAX_FILE, KC_U32, true },
	{ "backend-port", KWEB_A_CONFIG_BACKEND_PORT, KC_U16, true },
	{ "backend-missing", KWEB_A_CONFIG_BACKEND_MISSING, KC_U8, true },
	{ "dynamic-prefixes", KWEB_A_CONFIG_DYNAMIC_PREFIXES, KC_STR, true },
	{ "dynamic-extensions", KWEB_A_CONFIG_DYNAMIC_EXTENSIONS, KC_STR, true },
	{ "mime-types", KWEB_A_CONFIG_MIME_TYPES, KC_STR, true },
	{ "user", KWEB_A_CONFIG_USER, KC_UID, true },
	{ "group", KWEB_A_CONFIG_GROUP, KC_GID, true },
	{ "precompressed", KWEB_A_CONFIG_PRECOMPRESSED, KC_U8, true },
};

const size_t kc_nr_config = ARRAY_SIZE(kc_config);

/* Counters, in the uAPI's order (also /proc/net/kweb's names, with '_'). */
static const char *const kc_stats[] = {
	[KWEB_A_STATS_CONNECTIONS_ACCEPTED] = "connections-accepted",
	[KWEB_A_STATS_CONNECTIONS_CLOSED] = "connections-closed",
	[KWEB_A_STATS_REQUESTS_SOFTIRQ] = "requests-softirq",
	[KWEB_A_STATS_REQUESTS_WORKER] = "requests-worker",
	[KWEB_A_STATS_RESPONSES_ERROR] = "responses-error",
	[KWEB_A_STATS_BODY_BYTES_SPLICED] = "body-bytes-spliced",
	[KWEB_A_STATS_BODY_BYTES_COPIED] = "body-bytes-copied",
	[KWEB_A_STATS_CACHE_HITS] = "cache-hits",
	[KWEB_A_STATS_CACHE_MISSES] = "cache-misses",
	[KWEB_A_STATS_CACHE_EVICTIONS] = "cache-evictions",
	[KWEB_A_STATS_CACHE_INVALIDATIONS] = "cache-invalidations",
	[KWEB_A_STATS_HANDOFF_METHOD] = "handoff-method",
	[KWEB_A_STATS_HANDOFF_QUERY] = "handoff-query",
	[KWEB_A_STATS_HANDOFF_PREFIX] = "handoff-prefix",
	[KWEB_A_STATS_HANDOFF_EXTENSION] = "handoff-extension",
	[KWEB_A_STATS_HANDOFF_UPGRADE] = "handoff-upgrade",
	[KWEB_A_STATS_HANDOFF_H2] = "handoff-h2",
	[KWEB_A_STATS_HANDOFF_UNPARSED] = "handoff-unparsed",
	[KWEB_A_STATS_HANDOFF_MISSING] = "handoff-missing",
	[KWEB_A_STATS_HANDOFF_CONNECTION_LIMIT] = "handoff-connection-limit",
	[KWEB_A_STATS_HANDOFF_FAILED_NO_BACKEND] = "handoff-failed-no-backend",
	[KWEB_A_STATS_HANDOFF_FAILED_QUEUE_FULL] = "handoff-failed-queue-full",
	[KWEB_A_STATS_HANDOFF_FAILED] = "handoff-failed",
	[KWEB_A_STATS_CONNECTIONS_OPEN] = "connections-open",
	[KWEB_A_STATS_CACHE_BYTES] = "cache-bytes",
	[KWEB_A_STATS_CACHE_LIMIT] = "cache-limit",
	[KWEB_A_STATS_PINNED_BYTES] = "pinned-bytes",
	[KWEB_A_STATS_LOG_RECORDS] = "log-records",
	[KWEB_A_STATS_LOG_DROPPED] = "log-dropped",
	[KWEB_A_STATS_CONNECTIONS_SOFTIRQ] = "connections-softirq",
	[KWEB_A_STATS_HANDOFFS_SOFTIRQ] = "handoffs-softirq",
	[KWEB_A_STATS_TLS_CONNECTIONS] = "tls-connections",
	[KWEB_A_STATS_TLS_BYTES] = "tls-bytes",
};

static const char *const kc_listener_attrs[] = {
	[KWEB_A_LISTENER_ID] = "id",
	[KWEB_A_LISTENER_PORT] = "port",
	[KWEB_A_LISTENER_DOCROOT] = "docroot",
	[KWEB_A_LISTENER_BACKEND_ADDR4] = "backend (IPv4)",
	[KWEB_A_LISTENER_BACKEND_ADDR6] = "backend (IPv6)",
	[KWEB_A_LISTENER_BACKEND_PORT] = "backend-port",
	[KWEB_A_LISTENER_ADDR4] = "address (IPv4)",
	[KWEB_A_LISTENER_ADDR6] = "address (IPv6)",
	[KWEB_A_LISTENER_TLS_PORT] = "tls-port",
	[KWEB_A_LISTENER_FD] = "fd",
};

const struct kc_lkey kc_listener_keys[] = {
	{ "backend-port", KWEB_A_LISTENER_BACKEND_PORT, KC_U16,
	  KWEB_SETTING_BACKEND_PORT, "default" },
	{ "precompressed", KWEB_A_LISTENER_PRECOMPRESSED, KC_U8,
	  KWEB_SETTING_PRECOMPRESSED, "default" },
	{ "dynamic-prefixes", KWEB_A_LISTENER_DYNAMIC_PREFIXES, KC_STR,
	  KWEB_SETTING_DYNAMIC_PREFIXES, "default" },
	{ "dynamic-extensions", KWEB_A_LISTENER_DYNAMIC_EXTENSIONS, KC_STR,
	  KWEB_SETTING_DYNAMIC_EXTENSIONS, "default" },
	{ "mime-types", KWEB_A_LISTENER_MIME_TYPES, KC_STR,
	  KWEB_SETTING_MIME_TYPES, "default" },
	{ "cache-control", KWEB_A_LISTENER_CACHE_CONTROL, KC_STR, 0, "" },
	{ "expires", KWEB_A_LISTENER_EXPIRES, KC_U8, 0, "no" },
	{ "error-pages", KWEB_A_LISTENER_ERROR_PAGES, KC_STR, 0, "" },
	{ "vhosts", KWEB_A_LISTENER_VHOSTS, KC_U8, 0, "no" },
	{ "vhost-default", KWEB_A_LISTENER_VHOST_DEFAULT, KC_STR, 0, "default" },
	{ "hsts", KWEB_A_LISTENER_HSTS, KC_U32, 0, "0" },
	{ "hsts-subdomains", KWEB_A_LISTENER_HSTS_SUBDOMAINS, KC_U8, 0, "no" },
	{ "https-redirect", KWEB_A_LISTENER_HTTPS_REDIRECT, KC_U16, 0, "0" },
	{ "backend-user", KWEB_A_LISTENER_BACKEND_USER, KC_UID_NONE, 0,
	  "none" },
};

const size_t kc_nr_listener_keys = ARRAY_SIZE(kc_listener_keys);

const struct kc_key *kc_config_key(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kc_config); i++)
		if (!strcmp(kc_config[i].name, name))
			return &kc_config[i];
	return NULL;
}

const struct kc_lkey *kc_listener_key(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kc_listener_keys); i++)
		if (!strcmp(kc_listener_keys[i].name, name))
			return &kc_listener_keys[i];
	return NULL;
}

/* Names the attribute an error blames, by the command it was sent with. */
static const char *kc_attr_name(uint8_t cmd, uint16_t type)
{
	size_t i;

	switch (cmd) {
	case KWEB_CMD_CONFIG_GET:
	case KWEB_CMD_CONFIG_SET:
		for (i = 0; i < ARRAY_SIZE(kc_config); i++)
			if (kc_config[i].type == type)
				return kc_config[i].name;
		return type == KWEB_A_CONFIG_LISTENER_ID ? "listener" : NULL;
	case KWEB_CMD_LISTENER_GET:
	case KWEB_CMD_LISTENER_ADD:
	case KWEB_CMD_LISTENER_DEL:
	case KWEB_CMD_LISTENER_SET:
		for (i = 0; i < ARRAY_SIZE(kc_listener_keys); i++)
			if (kc_listener_keys[i].type == type)
				return kc_listener_keys[i].name;
		if (type == KWEB_A_LISTENER_INHERIT)
			return "default";
		return type < ARRAY_SIZE(kc_listener_attrs) ?
		       kc_listener_attrs[type] : NULL;
	case KWEB_CMD_CACHE_FLUSH:
		return type == KWEB_A_CACHE_PATH ? "path" : NULL;
	case KWEB_CMD_STATS_GET:
		return type == KWEB_A_STATS_LISTENER_ID ? "listener" : NULL;
	}
	return NULL;
}

/* A u64 name/value pair, as "name value" or a JSON member. */
static void kc_put_u64(const char *name, uint64_t v, bool *first)
{
	if (json) {
		printf("%s\"%s\": %" PRIu64, *first ? "" : ", ", name, v);
		*first = false;
	} else {
		printf("%s %" PRIu64 "\n", name, v);
	}
}

static int kc_usage(FILE *f, const char *topic)
{
	if (!topic || !strcmp(topic, "main"))
		fprintf(f,
			"Usage: kwebctl [-j|--json] OBJECT [COMMAND [ARGS]]\n"
			"       kwebctl OBJECT --help\n"
			"       kwebctl -b|--batch FILE\n"
			"\n"
			"  status                   is kweb loaded; its listeners and totals\n"
			"  stats [listener ID]      counters (this namespace's, or one listener's)\n"
			"  stats --format prometheus\n"
			"                           the same for Prometheus (node_exporter)\n"
			"  listener list|show|add|set|del\n"
			"                           the listeners of this network namespace\n"
			"  config get|set           this network namespace's settings\n"
			"  cache flush [PATH]       drop cached files (all, or one request path)\n"
			"  log [--format combined|json] [--count N] [--output FILE]\n"
			"                           print the access log as requests end\n"
			"  apply [--prune] [--dry-run] FILE\n"
			"                           make listeners and settings what FILE says\n"
			"\n"
			"-b FILE runs FILE's commands (- for standard input), a kwebctl\n"
			"command line each without \"kwebctl\": config set, listener add,\n"
			"set and del. All are checked first; if the kernel refuses one,\n"
			"those done are undone; deletions are done last. # comments,\n"
			"quotes and backslashes as in sh; errors say FILE:LINE.\n"
			"\n"
			"Exit status: 0 ok, 1 the kernel refused (its reason is printed),\n"
			"2 usage, 3 kweb module not loaded, 4 permission denied (needs\n"
			"CAP_NET_ADMIN over the network namespace), 5 no such listener.\n");
	else if (!strcmp(topic, "status"))
		fprintf(f,
			"Usage: kwebctl status\n"
			"Says whether the kweb module is loaded (exit 3 if not), and\n"
			"its listeners, connections and requests in this namespace.\n");
	else if (!strcmp(topic, "stats"))
		fprintf(f,
			"Usage: kwebctl [-j] stats [listener ID]\n"
			"       kwebctl stats --format prometheus\n"
			"Counters since the module was loaded, one \"name value\" per line\n"
			"(names as in /proc/net/kweb with '-'), or a JSON object with -j:\n"
			"this network namespace's (pinned-bytes is module-wide in the\n"
			"initial namespace, its cache-bytes elsewhere); or, with\n"
			"a listener, only that listener's.\n"
			"--format (-f) text, json (as -j) or prometheus: Prometheus's text\n"
			"format, for node_exporter's textfile collector: the namespace's\n"
			"figures as kweb_*, each listener's as kweb_listener_* labelled\n"
			"listener=\"ID\" and port=\"PORT\"; counters end in _total\n"
			"(docs/metrics.md). Nothing is printed unless all was read.\n");
	else if (!strcmp(topic, "listener"))
		fprintf(f,
			"Usage: kwebctl [-j] listener list\n"
			"       kwebctl listener add port PORT docroot DIR [address ADDR]...\n"
			"                            [backend ADDR]... [backend-port PORT]\n"
			"                            [tls-port PORT]\n"
			"                            [KEY VALUE]...\n"
			"       kwebctl [-j] listener show ID\n"
			"       kwebctl listener set ID KEY VALUE [KEY VALUE]...\n"
			"       kwebctl listener del ID\n"
			"A listener serves DIR on PORT of this network namespace, IPv4 and\n"
			"IPv6 on every address, or only on each address given. backend\n"
			"sets where its IPv4 or IPv6 clients' other requests go (default:\n"
			"the module parameters).\n"
			"KEY, a listener's own settings (add or set):\n"
			"  backend-port, precompressed (yes|no), dynamic-prefixes,\n"
			"  dynamic-extensions, mime-types: as config's keys of the same\n"
			"  names, for this listener alone; \"default\" follows config's\n"
			"  again.\n"
			"  cache-control: rules \"MATCH=VALUE;...\", MATCH a path prefix\n"
			"  (/assets/) or an extension (.css), VALUE sent as Cache-Control\n"
			"  on 200, 206 and 304 (an extension rule wins, else the longest\n"
			"  prefix); \"\" for none.\n"
			"  expires (yes|no): also send Expires, now plus the rule's max-age.\n"
			"  error-pages: \"CODES=PATH;...\", e.g. \"404=/404.html;500,503=/50x.html\":\n"
			"  docroot files answered with those errors; \"\" for none.\n"
			"  vhosts (yes|no): serve each Host from DIR/HOST/; a host without\n"
			"  a directory (or none) from DIR/ of vhost-default (\"default\").\n"
			"  hsts SECONDS: a TLS listener's Strict-Transport-Security max-age\n"
			"  (0: none); hsts-subdomains (yes|no): with includeSubDomains.\n"
			"  https-redirect PORT: 301 every request to https on PORT but\n"
			"  /.well-known/acme-challenge/ (0: none).\n"
			"  backend-user USER: a name or number whose listeners on the\n"
			"  backend port may be handed connections too, besides root and\n"
			"  the listener's creator (none: no other).\n"
			"add prints the new listener; show prints one listener's settings,\n"
			"with those following config's listed as inherit; all or none of\n"
			"set's keys are applied; del closes the listener's connections.\n");
	else if (!strcmp(topic, "config"))
		fprintf(f,
			"Usage: kwebctl [-j] config get [listener ID]\n"
			"       kwebctl config set KEY VALUE [KEY VALUE]...\n"
			"KEY: header-timeout, keepalive-timeout, send-timeout (seconds),\n"
			"max-connections, max-requests, cache-size (MiB), cache-max-file\n"
			"(KiB), backend-port, backend-missing (yes|no),\n"
			"dynamic-prefixes, dynamic-extensions (comma-separated; \"\" for\n"
			"none), mime-types (\".md=text/markdown,.log=text/plain\": they\n"
			"win over the built-in types; setting them empties the caches),\n"
			"user, group (a name or a number: the identity files are opened\n"
			"as, with no capabilities; default nobody, nogroup: 65534),\n"
			"precompressed (yes|no: NAME.br or NAME.gz for NAME).\n"
			"max-header-size is shown, fixed at load. All or none of the keys\n"
			"given are applied. With a listener, get shows the values it runs\n"
			"with: its own (kwebctl listener set) or else these.\n");
	else if (!strcmp(topic, "cache"))
		fprintf(f,
			"Usage: kwebctl cache flush [PATH]\n"
			"Drops the cached files of this namespace's listeners, or the one\n"
			"for request path PATH (e.g. /index.html), and prints how many.\n"
			"Their page-cache pages are let go once responses using them end.\n");
	else if (!strcmp(topic, "log"))
		fprintf(f,
			"Usage: kwebctl log [--format combined|json] [--count N]\n"
			"                   [--output FILE]\n"
			"Prints a line per request of this namespace's listeners as it\n"
			"ends (records come in batches, within 100 ms), until interrupted\n"
			"or N records. combined (the default) is nginx's format, with\n"
			"Referer and User-Agent (up to 512 bytes each); requests the\n"
			"backend answered have \"-\" for status and bytes (it logs\n"
			"them). json (or -j) has every field, including who answered:\n"
			"softirq, worker or backend. Needs CAP_NET_ADMIN: the records hold\n"
			"clients' addresses.\n"
			"--output appends to FILE (made 0640; its directory must exist),\n"
			"each batch in one write, and opens it again by name on SIGHUP or\n"
			"SIGUSR1 (log rotation: no record is lost). Records the kernel\n"
			"could not deliver (log-dropped) are reported on standard error.\n"
			"SIGTERM or SIGINT: the records sent by then are written, exit 0.\n");
	else if (!strcmp(topic, "apply"))
		fprintf(f,
			"Usage: kwebctl apply [--prune] [--dry-run] FILE\n"
			"Makes this namespace's listeners and the module's settings what\n"
			"FILE (- for standard input; e.g. /etc/kweb/kweb.conf) says. Its\n"
			"lines are kwebctl command lines without \"kwebctl\" (as -b):\n"
			"\"config set KEY VALUE...\" and \"listener add port PORT docroot\n"
			"DIR ...\", a listener per port. Compared with what runs: config\n"
			"keys that differ are set; a listener whose port does not run is\n"
			"added; one that runs gets its line's keys (listener set), those\n"
			"not given their defaults; one whose docroot, address or given\n"
			"backend differ is deleted and added again (its connections are\n"
			"closed). Listeners on ports FILE does not name are kept, or\n"
			"deleted with --prune. All or nothing: every line is checked\n"
			"first, and if the kernel refuses a change, those made are undone.\n"
			"Each change is printed as a command line, after FILE:LINE;\n"
			"--dry-run prints them and changes nothing. Applying the same\n"
			"FILE again changes nothing.\n");
	else
		return kc_usage(f, "main");
	return f == stderr ? KC_USAGE : KC_OK;
}

static bool kc_is_help(const char *s)
{
	return !strcmp(s, "--help") || !strcmp(s, "-h") || !strcmp(s, "help");
}

int kc_parse_uint(const char *s, unsigned long max, unsigned long *v,
		  const char *what)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	if (!*s || *end || errno || *s == '-' || *v > max) {
		kc_err("%s: \"%s\" is not a number of 0..%lu\n", what, s,
		       max);
		return KC_USAGE;
	}
	return KC_OK;
}

/*
 * A user or group by name or number. The kernel has no passwd database:
 * names are resolved here, in the caller's, and numbers sent.
 */
static int kc_parse_id(const char *s, bool user, unsigned long *v)
{
	const char *what = user ? "user" : "group";
	struct passwd *pw;
	struct group *gr;

	if (*s >= '0' && *s <= '9')
		return kc_parse_uint(s, UINT32_MAX, v, what);
	if (user) {
		pw = getpwnam(s);
		if (pw)
			*v = pw->pw_uid;
	} else {
		gr = getgrnam(s);
		if (gr)
			*v = gr->gr_gid;
	}
	if (user ? !pw : !gr) {
		kc_err("%s: no %s \"%s\"\n", what, what, s);
		return KC_USAGE;
	}
	return KC_OK;
}

/* ---- stats ---- */

struct kc_stats_ctx {
	bool first;
};

static int kc_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KWEB_A_STATS_MAX + 1];
	struct kc_stats_ctx *c = data;
	unsigned int i;

	kc_nl_parse(nlh, tb, KWEB_A_STATS_MAX);
	for (i = 0; i < ARRAY_SIZE(kc_stats); i++) {
		char name[64];
		size_t j;

		if (!kc_stats[i] || !tb[i] ||
		    mnl_attr_validate(tb[i], MNL_TYPE_U64) < 0)
			continue;
		/* '-' in JSON keys is awkward for jq; '_' as in /proc. */
		snprintf(name, sizeof(name), "%s", kc_stats[i]);
		for (j = 0; json && name[j]; j++)
			if (name[j] == '-')
				name[j] = '_';
		kc_put_u64(name, mnl_attr_get_u64(tb[i]), &c->first);
	}
	return MNL_CB_OK;
}

/* ---- stats --format prometheus ---- */

/* Every u64 of a stats reply, by type, for kc_prom_write(). */
static int kc_prom_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KWEB_A_STATS_MAX + 1];
	struct kc_prom_stats *s = data;
	unsigned int i;

	kc_nl_parse(nlh, tb, KWEB_A_STATS_MAX);
	for (i = 0; i <= KWEB_A_STATS_MAX; i++) {
		if (!tb[i] || mnl_attr_validate(tb[i], MNL_TYPE_U64) < 0)
			continue;
		s->v[i] = mnl_attr_get_u64(tb[i]);
		s->have[i] = true;
	}
	return MNL_CB_OK;
}

struct kc_prom_list {
	struct kc_prom_listener *l;
	size_t nr, size;
	bool nomem;
};

/* A listener dump message: its id and port, for the labels. */
static int kc_prom_listener_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KWEB_A_LISTENER_MAX + 1];
	struct kc_prom_list *pl = data;
	struct kc_prom_listener *l;

	kc_nl_parse(nlh, tb, KWEB_A_LISTENER_MAX);
	if (!tb[KWEB_A_LISTENER_ID] || !tb[KWEB_A_LISTENER_PORT])
		return MNL_CB_OK;
	if (pl->nr == pl->size) {
		l = realloc(pl->l, (pl->size * 2 + 4) * sizeof(*l));
		if (!l) {
			pl->nomem = true;
			return MNL_CB_ERROR;
		}
		pl->l = l;
		pl->size = pl->size * 2 + 4;
	}
	l = &pl->l[pl->nr++];
	memset(l, 0, sizeof(*l));
	l->id = mnl_attr_get_u32(tb[KWEB_A_LISTENER_ID]);
	l->port = mnl_attr_get_u16(tb[KWEB_A_LISTENER_PORT]);
	return MNL_CB_OK;
}

/*
 * Each listener's counters, then the namespace's: read last, its totals
 * are never below the sum of the listeners'. A listener deleted between
 * the dump and its request is left out, as if the dump had come later.
 */
static int kc_prom_read(struct kc_nl *nl, struct kc_prom_list *pl,
			struct kc_prom_stats *ns)
{
	struct nlmsghdr *nlh;
	size_t i, kept = 0;
	int ret;

	nlh = kc_nl_request(nl, KWEB_CMD_LISTENER_GET, true);
	ret = kc_nl_talk(nl, nlh, kc_prom_listener_cb, pl, "stats");
	if (pl->nomem) {
		kc_err("stats: out of memory\n");
		return KC_ERROR;
	}
	if (ret)
		return ret;
	nl->quiet_not_found = true;
	for (i = 0; i < pl->nr; i++) {
		nlh = kc_nl_request(nl, KWEB_CMD_STATS_GET, false);
		mnl_attr_put_u32(nlh, KWEB_A_STATS_LISTENER_ID, pl->l[i].id);
		ret = kc_nl_talk(nl, nlh, kc_prom_stats_cb, &pl->l[i].stats,
				 "stats");
		if (ret == KC_NOT_FOUND)
			continue;
		if (ret)
			break;
		pl->l[kept++] = pl->l[i];
	}
	nl->quiet_not_found = false;
	pl->nr = kept;
	if (ret && ret != KC_NOT_FOUND)
		return ret;
	nlh = kc_nl_request(nl, KWEB_CMD_STATS_GET, false);
	return kc_nl_talk(nl, nlh, kc_prom_stats_cb, ns, "stats");
}

/*
 * All is read before anything is written, so a failure leaves no partial
 * output; a failed write (a full disk under the textfile collector's
 * directory) fails the command, so "kwebctl ... > f.$$ && mv" keeps the
 * last good file.
 */
static int kc_stats_prom(struct kc_nl *nl)
{
	struct kc_prom_list pl = { 0 };
	struct kc_prom_stats ns = { 0 };
	int ret;

	ret = kc_prom_read(nl, &pl, &ns);
	if (!ret) {
		kc_prom_write(stdout, &ns, pl.l, pl.nr);
		if (fflush(stdout) || ferror(stdout)) {
			kc_err("stats: writing: %s\n", strerror(errno));
			ret = KC_ERROR;
		}
	}
	free(pl.l);
	return ret;
}

/* "--format NAME" or "-f NAME" of stats: text, json or prometheus. */
static int kc_stats_format(const char *name, bool *prom)
{
	*prom = !strcmp(name, "prometheus");
	if (*prom || !strcmp(name, "text") || !strcmp(name, "json")) {
		/* Given after -j, it wins: the last word is the one meant. */
		json = !strcmp(name, "json");
		return KC_OK;
	}
	kc_err("stats: --format text, json or prometheus\n");
	return KC_USAGE;
}

static int kc_cmd_stats(struct kc_nl *nl, int argc, char **argv)
{
	struct kc_stats_ctx c = { .first = true };
	char *args[2];
	struct nlmsghdr *nlh;
	bool prom = false;
	int i, nargs = 0, ret;
	unsigned long id;

	if (argc && kc_is_help(argv[0]))
		return kc_usage(stdout, "stats");
	/* The format anywhere, as -j: "stats listener 1 -f json" too. */
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--format") || !strcmp(argv[i], "-f")) {
			if (++i == argc)
				return kc_usage(stderr, "stats");
			ret = kc_stats_format(argv[i], &prom);
			if (ret)
				return ret;
		} else if (nargs < 2) {
			args[nargs++] = argv[i];
		} else {
			return kc_usage(stderr, "stats");
		}
	}
	if (nargs && (nargs != 2 || strcmp(args[0], "listener")))
		return kc_usage(stderr, "stats");
	if (prom && nargs) {
		kc_err("stats: --format prometheus has every listener; no listener ID\n");
		return KC_USAGE;
	}
	if (prom)
		return kc_stats_prom(nl);
	nlh = kc_nl_request(nl, KWEB_CMD_STATS_GET, false);
	if (nargs) {
		ret = kc_parse_uint(args[1], UINT32_MAX, &id, "listener");
		if (ret)
			return ret;
		mnl_attr_put_u32(nlh, KWEB_A_STATS_LISTENER_ID, id);
	}
	if (json)
		printf("{");
	ret = kc_nl_talk(nl, nlh, kc_stats_cb, &c, "stats");
	if (json)
		printf("}\n");
	return ret;
}

/* A request too long for the buffer: only a batch file's line can be. */
static int kc_too_long(const char *what)
{
	kc_err("%s: the command is too long\n", what);
	return KC_USAGE;
}

/* Room in nlh for an attribute of len bytes. */
static bool kc_room(const struct nlmsghdr *nlh, size_t len)
{
	return nlh->nlmsg_len + MNL_ATTR_HDRLEN + MNL_ALIGN(len) <=
	       (size_t)MNL_SOCKET_BUFFER_SIZE;
}

int kc_put_value(struct nlmsghdr *nlh, uint16_t type, enum kc_kind kind,
		 const char *name, const char *val)
{
	unsigned long v;
	int ret;

	if (kind != KC_STR && !kc_room(nlh, sizeof(uint32_t)))
		return kc_too_long(name);
	switch (kind) {
	case KC_U8:
		if (!strcmp(val, "yes") || !strcmp(val, "1")) {
			v = 1;
		} else if (!strcmp(val, "no") || !strcmp(val, "0")) {
			v = 0;
		} else {
			kc_err("%s: yes or no\n", name);
			return KC_USAGE;
		}
		mnl_attr_put_u8(nlh, type, v);
		break;
	case KC_U16:
		ret = kc_parse_uint(val, UINT16_MAX, &v, name);
		if (ret)
			return ret;
		mnl_attr_put_u16(nlh, type, v);
		break;
	case KC_U32:
		ret = kc_parse_uint(val, UINT32_MAX, &v, name);
		if (ret)
			return ret;
		mnl_attr_put_u32(nlh, type, v);
		break;
	case KC_UID_NONE:
		if (!strcmp(val, "none")) {
			mnl_attr_put_u32(nlh, type, KWEB_BACKEND_USER_NONE);
			break;
		}
		/* fall through */
	case KC_UID:
	case KC_GID:
		ret = kc_parse_id(val, kind != KC_GID, &v);
		if (ret)
			return ret;
		mnl_attr_put_u32(nlh, type, v);
		break;
	case KC_STR:
		if (!mnl_attr_put_strz_check(nlh, MNL_SOCKET_BUFFER_SIZE, type,
					     val)) {
			kc_err("%s: too long\n", name);
			return KC_USAGE;
		}
		break;
	}
	return KC_OK;
}

/* ---- listener ---- */

struct kc_listener {
	uint32_t id, conns;
	uint16_t port, backend_port;
	char docroot[PATH_MAX + 1];
	char addrs[2][INET6_ADDRSTRLEN + 2];	/* listen, or "*" */
	char backends[2][INET6_ADDRSTRLEN + 2];
	int nr_addrs;
};

static void kc_addr(const struct nlattr *a, int family, char *out)
{
	size_t len = family == AF_INET ? 4 : 16;

	if (mnl_attr_get_payload_len(a) != len ||
	    !inet_ntop(family, mnl_attr_get_payload(a), out,
		       INET6_ADDRSTRLEN))
		snprintf(out, INET6_ADDRSTRLEN, "?");
}

static void kc_listener_read(const struct nlmsghdr *nlh, struct kc_listener *l)
{
	const struct nlattr *tb[KWEB_A_LISTENER_MAX + 1];

	memset(l, 0, sizeof(*l));
	kc_nl_parse(nlh, tb, KWEB_A_LISTENER_MAX);
	if (tb[KWEB_A_LISTENER_ID])
		l->id = mnl_attr_get_u32(tb[KWEB_A_LISTENER_ID]);
	if (tb[KWEB_A_LISTENER_PORT])
		l->port = mnl_attr_get_u16(tb[KWEB_A_LISTENER_PORT]);
	if (tb[KWEB_A_LISTENER_BACKEND_PORT])
		l->backend_port =
			mnl_attr_get_u16(tb[KWEB_A_LISTENER_BACKEND_PORT]);
	if (tb[KWEB_A_LISTENER_CONNECTIONS_OPEN])
		l->conns = mnl_attr_get_u32(tb[KWEB_A_LISTENER_CONNECTIONS_OPEN]);
	if (tb[KWEB_A_LISTENER_DOCROOT] &&
	    mnl_attr_validate(tb[KWEB_A_LISTENER_DOCROOT],
			      MNL_TYPE_NUL_STRING) >= 0)
		snprintf(l->docroot, sizeof(l->docroot), "%s",
			 mnl_attr_get_str(tb[KWEB_A_LISTENER_DOCROOT]));
	if (tb[KWEB_A_LISTENER_ADDR4])
		kc_addr(tb[KWEB_A_LISTENER_ADDR4], AF_INET,
			l->addrs[l->nr_addrs++]);
	if (tb[KWEB_A_LISTENER_ADDR6])
		kc_addr(tb[KWEB_A_LISTENER_ADDR6], AF_INET6,
			l->addrs[l->nr_addrs++]);
	if (!l->nr_addrs)
		snprintf(l->addrs[l->nr_addrs++], sizeof(l->addrs[0]), "*");
	snprintf(l->backends[0], sizeof(l->backends[0]), "-");
	snprintf(l->backends[1], sizeof(l->backends[1]), "-");
	if (tb[KWEB_A_LISTENER_BACKEND_ADDR4])
		kc_addr(tb[KWEB_A_LISTENER_BACKEND_ADDR4], AF_INET,
			l->backends[0]);
	if (tb[KWEB_A_LISTENER_BACKEND_ADDR6])
		kc_addr(tb[KWEB_A_LISTENER_BACKEND_ADDR6], AF_INET6,
			l->backends[1]);
}

struct kc_list_ctx {
	int n;
};

static int kc_listener_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kc_list_ctx *c = data;
	struct kc_listener l;
	int i;

	kc_listener_read(nlh, &l);
	if (json) {
		printf("%s{\"id\": %u, \"port\": %u, \"addresses\": [",
		       c->n ? ", " : "", l.id, l.port);
		for (i = 0; i < l.nr_addrs; i++) {
			printf("%s", i ? ", " : "");
			kc_json_str(l.addrs[i]);
		}
		printf("], \"docroot\": ");
		kc_json_str(l.docroot);
		printf(", \"backend_ipv4\": ");
		kc_json_str(l.backends[0]);
		printf(", \"backend_ipv6\": ");
		kc_json_str(l.backends[1]);
		printf(", \"backend_port\": %u, \"connections_open\": %u}",
		       l.backend_port, l.conns);
	} else {
		if (!c->n)
			printf("%-4s %-6s %-24s %-6s %-12s %s\n", "ID", "PORT",
			       "ADDRESS", "CONNS", "BACKEND", "DOCROOT");
		printf("%-4u %-6u %-24s %-6u %-12u %s\n", l.id, l.port,
		       l.nr_addrs == 2 ? "(two)" : l.addrs[0], l.conns,
		       l.backend_port, l.docroot);
		if (l.nr_addrs == 2)
			printf("     addresses %s %s\n", l.addrs[0], l.addrs[1]);
	}
	c->n++;
	return MNL_CB_OK;
}

static int kc_listener_list(struct kc_nl *nl)
{
	struct kc_list_ctx c = { 0 };
	struct nlmsghdr *nlh = kc_nl_request(nl, KWEB_CMD_LISTENER_GET, true);
	int ret;

	if (json)
		printf("[");
	ret = kc_nl_talk(nl, nlh, kc_listener_cb, &c, "listener list");
	if (json)
		printf("]\n");
	return ret;
}

/* "address ADDR" or "backend ADDR": the attribute for its family. */
static int kc_put_addr(struct nlmsghdr *nlh, const char *s, uint16_t type4,
		       uint16_t type6, const char *what)
{
	unsigned char a[16];

	if (!kc_room(nlh, sizeof(a)))
		return kc_too_long(what);
	if (inet_pton(AF_INET, s, a) == 1) {
		mnl_attr_put(nlh, type4, 4, a);
		return KC_OK;
	}
	if (inet_pton(AF_INET6, s, a) == 1) {
		mnl_attr_put(nlh, type6, 16, a);
		return KC_OK;
	}
	kc_err("%s: \"%s\" is not an IPv4 or IPv6 address\n", what, s);
	return KC_USAGE;
}

int kc_listener_add_build(struct nlmsghdr *nlh, int argc, char **argv)
{
	bool port = false, docroot = false;
	unsigned long v;
	int i, ret;

	for (i = 0; i < argc; i += 2) {
		const char *key = argv[i], *val = i + 1 < argc ? argv[i + 1] :
						  NULL;

		if (!val) {
			kc_err("listener add: %s needs a value\n", key);
			return KC_USAGE;
		}
		/* "backend-port default" is the key's, below. */
		if (!strcmp(key, "port") || (!strcmp(key, "backend-port") &&
					     strcmp(val, "default"))) {
			ret = kc_parse_uint(val, UINT16_MAX, &v, key);
			if (ret)
				return ret;
			if (!mnl_attr_put_u16_check(nlh, MNL_SOCKET_BUFFER_SIZE,
						    key[0] == 'p' ?
						    KWEB_A_LISTENER_PORT :
						    KWEB_A_LISTENER_BACKEND_PORT,
						    v))
				return kc_too_long("listener add");
			port |= key[0] == 'p';
		} else if (!strcmp(key, "tls-port")) {
			/* HTTPS through kwebtlsd on this port (docs/tls.md). */
			ret = kc_parse_uint(val, UINT16_MAX, &v, key);
			if (ret)
				return ret;
			if (!mnl_attr_put_u16_check(nlh, MNL_SOCKET_BUFFER_SIZE,
						    KWEB_A_LISTENER_TLS_PORT,
						    v))
				return kc_too_long("listener add");
		} else if (!strcmp(key, "docroot")) {
			if (!mnl_attr_put_strz_check(nlh, MNL_SOCKET_BUFFER_SIZE,
						     KWEB_A_LISTENER_DOCROOT,
						     val))
				return kc_too_long("listener add");
			docroot = true;
		} else if (!strcmp(key, "address")) {
			ret = kc_put_addr(nlh, val, KWEB_A_LISTENER_ADDR4,
					  KWEB_A_LISTENER_ADDR6, key);
			if (ret)
				return ret;
		} else if (!strcmp(key, "backend")) {
			ret = kc_put_addr(nlh, val,
					  KWEB_A_LISTENER_BACKEND_ADDR4,
					  KWEB_A_LISTENER_BACKEND_ADDR6, key);
			if (ret)
				return ret;
		} else {
			const struct kc_lkey *k = kc_listener_key(key);

			if (!k) {
				kc_err("listener add: unknown \"%s\"\n", key);
				return KC_USAGE;
			}
			/* A new listener follows config's unless told. */
			if (k->inherit && !strcmp(val, "default"))
				continue;
			ret = kc_put_value(nlh, k->type, k->kind, k->name, val);
			if (ret)
				return ret;
		}
	}
	if (!port || !docroot) {
		kc_err("listener add: port and docroot are required\n");
		return KC_USAGE;
	}
	return KC_OK;
}

static int kc_listener_add(struct kc_nl *nl, int argc, char **argv)
{
	struct nlmsghdr *nlh = kc_nl_request(nl, KWEB_CMD_LISTENER_ADD, false);
	struct kc_list_ctx c = { 0 };
	int ret;

	ret = kc_listener_add_build(nlh, argc, argv);
	if (ret)
		return ret;
	if (json)
		printf("[");
	ret = kc_nl_talk(nl, nlh, kc_listener_cb, &c, "listener add");
	if (json)
		printf("]\n");
	return ret;
}

/* "listener show ID": "name value" lines, or a JSON object. */
static int kc_listener_show_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KWEB_A_LISTENER_MAX + 1];
	uint32_t inherit = 0;
	struct kc_listener l;
	bool first = true;
	size_t i;
	int j;

	(void)data;
	kc_listener_read(nlh, &l);
	kc_nl_parse(nlh, tb, KWEB_A_LISTENER_MAX);
	if (tb[KWEB_A_LISTENER_INHERIT])
		inherit = mnl_attr_get_u32(tb[KWEB_A_LISTENER_INHERIT]);
	if (json) {
		printf("{\"id\": %u, \"port\": %u, \"addresses\": [", l.id,
		       l.port);
		for (j = 0; j < l.nr_addrs; j++) {
			printf("%s", j ? ", " : "");
			kc_json_str(l.addrs[j]);
		}
		printf("], \"docroot\": ");
		kc_json_str(l.docroot);
		printf(", \"backend_ipv4\": ");
		kc_json_str(l.backends[0]);
		printf(", \"backend_ipv6\": ");
		kc_json_str(l.backends[1]);
		printf(", \"connections_open\": %u", l.conns);
		first = false;
	} else {
		printf("id %u\nport %u\naddress", l.id, l.port);
		for (j = 0; j < l.nr_addrs; j++)
			printf(" %s", l.addrs[j]);
		printf("\ndocroot %s\nbackend %s %s\nconnections-open %u\n",
		       l.docroot, l.backends[0], l.backends[1], l.conns);
	}
	for (i = 0; i < ARRAY_SIZE(kc_listener_keys); i++) {
		const struct kc_lkey *k = &kc_listener_keys[i];
		const struct nlattr *a = tb[k->type];
		char name[32];

		if (!a)
			continue;
		snprintf(name, sizeof(name), "%s", k->name);
		for (j = 0; json && name[j]; j++)
			if (name[j] == '-')
				name[j] = '_';
		if (k->kind == KC_U8) {
			if (json)
				printf(", \"%s\": %s", name,
				       mnl_attr_get_u8(a) ? "true" : "false");
			else
				printf("%s %s\n", name,
				       mnl_attr_get_u8(a) ? "yes" : "no");
		} else if (k->kind == KC_U16) {
			kc_put_u64(name, mnl_attr_get_u16(a), &first);
		} else if (k->kind == KC_U32) {
			kc_put_u64(name, mnl_attr_get_u32(a), &first);
		} else if (k->kind == KC_UID_NONE) {
			if (mnl_attr_get_u32(a) != KWEB_BACKEND_USER_NONE)
				kc_put_u64(name, mnl_attr_get_u32(a), &first);
			else if (json)
				printf(", \"%s\": null", name);
			else
				printf("%s none\n", name);
		} else if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0) {
			if (json) {
				printf(", \"%s\": ", name);
				kc_json_str(mnl_attr_get_str(a));
			} else {
				printf("%s %s\n", name, mnl_attr_get_str(a));
			}
		}
	}
	/* Which of those follow config's values. */
	printf(json ? ", \"inherit\": [" : "inherit");
	first = true;
	for (i = 0; i < ARRAY_SIZE(kc_listener_keys); i++) {
		if (!(inherit & kc_listener_keys[i].inherit))
			continue;
		if (json) {
			printf("%s", first ? "" : ", ");
			kc_json_str(kc_listener_keys[i].name);
		} else {
			printf(" %s", kc_listener_keys[i].name);
		}
		first = false;
	}
	printf(json ? "]}\n" : "\n");
	return MNL_CB_OK;
}

int kc_listener_set_build(struct nlmsghdr *nlh, unsigned long id, int argc,
			  char **argv)
{
	uint32_t inherit = 0;
	int i, ret;

	if (!argc || argc % 2) {
		kc_err("listener set: give ID, then KEY VALUE pairs\n");
		return KC_USAGE;
	}
	mnl_attr_put_u32(nlh, KWEB_A_LISTENER_ID, id);
	for (i = 0; i < argc; i += 2) {
		const struct kc_lkey *key = kc_listener_key(argv[i]);

		if (!key) {
			kc_err("listener set: unknown key \"%s\" (see kwebctl listener --help)\n",
			       argv[i]);
			return KC_USAGE;
		}
		if (key->inherit && !strcmp(argv[i + 1], "default")) {
			inherit |= key->inherit;
			continue;
		}
		ret = kc_put_value(nlh, key->type, key->kind, key->name,
				   argv[i + 1]);
		if (ret)
			return ret;
	}
	if (inherit &&
	    !mnl_attr_put_u32_check(nlh, MNL_SOCKET_BUFFER_SIZE,
				    KWEB_A_LISTENER_INHERIT, inherit))
		return kc_too_long("listener set");
	return KC_OK;
}

static int kc_listener_set(struct kc_nl *nl, unsigned long id, int argc,
			   char **argv)
{
	struct nlmsghdr *nlh = kc_nl_request(nl, KWEB_CMD_LISTENER_SET, false);
	int ret;

	ret = kc_listener_set_build(nlh, id, argc, argv);
	if (ret)
		return ret;
	return kc_nl_talk(nl, nlh, NULL, NULL, "listener set");
}

static int kc_cmd_listener(struct kc_nl *nl, int argc, char **argv)
{
	struct nlmsghdr *nlh;
	unsigned long id;
	int ret;

	if (argc == 2 && !strcmp(argv[0], "show")) {
		ret = kc_parse_uint(argv[1], UINT32_MAX, &id, "listener id");
		if (ret)
			return ret;
		nlh = kc_nl_request(nl, KWEB_CMD_LISTENER_GET, false);
		mnl_attr_put_u32(nlh, KWEB_A_LISTENER_ID, id);
		return kc_nl_talk(nl, nlh, kc_listener_show_cb, NULL,
				  "listener show");
	}
	if (argc >= 2 && !strcmp(argv[0], "set")) {
		ret = kc_parse_uint(argv[1], UINT32_MAX, &id, "listener id");
		if (ret)
			return ret;
		return kc_listener_set(nl, id, argc - 2, argv + 2);
	}
	if (!argc || !strcmp(argv[0], "list") || !strcmp(argv[0], "show")) {
		if (argc > 1)
			return kc_usage(stderr, "listener");
		return kc_listener_list(nl);
	}
	if (kc_is_help(argv[0]))
		return kc_usage(stdout, "listener");
	if (!strcmp(argv[0], "add"))
		return kc_listener_add(nl, argc - 1, argv + 1);
	if ((!strcmp(argv[0], "del") || !strcmp(argv[0], "delete")) &&
	    argc == 2) {
		ret = kc_parse_uint(argv[1], UINT32_MAX, &id, "listener id");
		if (ret)
			return ret;
		nlh = kc_nl_request(nl, KWEB_CMD_LISTENER_DEL, false);
		mnl_attr_put_u32(nlh, KWEB_A_LISTENER_ID, id);
		return kc_nl_talk(nl, nlh, NULL, NULL, "listener del");
	}
	return kc_usage(stderr, "listener");
}

/* ---- config ---- */

static int kc_config_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KWEB_A_CONFIG_MAX + 1];
	bool first = true;
	size_t i;

	(void)data;
	kc_nl_parse(nlh, tb, KWEB_A_CONFIG_MAX);
	if (json)
		printf("{");
	for (i = 0; i < ARRAY_SIZE(kc_config); i++) {
		const struct kc_key *k = &kc_config[i];
		const struct nlattr *a = tb[k->type];
		char name[64];
		size_t j;

		if (!a)
			continue;
		snprintf(name, sizeof(name), "%s", k->name);
		for (j = 0; json && name[j]; j++)
			if (name[j] == '-')
				name[j] = '_';
		switch (k->kind) {
		case KC_U8:
			if (json)
				printf("%s\"%s\": %s", first ? "" : ", ", name,
				       mnl_attr_get_u8(a) ? "true" : "false");
			else
				printf("%s %s\n", name,
				       mnl_attr_get_u8(a) ? "yes" : "no");
			first = false;
			break;
		case KC_U16:
			kc_put_u64(name, mnl_attr_get_u16(a), &first);
			break;
		case KC_U32:
		case KC_UID:
		case KC_GID:
		case KC_UID_NONE:
			kc_put_u64(name, mnl_attr_get_u32(a), &first);
			break;
		case KC_STR:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
				break;
			if (json) {
				printf("%s\"%s\": ", first ? "" : ", ", name);
				kc_json_str(mnl_attr_get_str(a));
			} else {
				printf("%s %s\n", name, mnl_attr_get_str(a));
			}
			first = false;
			break;
		}
	}
	if (json)
		printf("}\n");
	return MNL_CB_OK;
}

int kc_config_set_build(struct nlmsghdr *nlh, int argc, char **argv)
{
	int i, ret;

	if (!argc || argc % 2) {
		kc_err("config set: give KEY VALUE pairs\n");
		return KC_USAGE;
	}
	for (i = 0; i < argc; i += 2) {
		const struct kc_key *key = kc_config_key(argv[i]);

		if (!key || !key->settable) {
			kc_err("config set: %s \"%s\" (see kwebctl config --help)\n",
			       key ? "cannot change" : "unknown key", argv[i]);
			return KC_USAGE;
		}
		ret = kc_put_value(nlh, key->type, key->kind, key->name,
				   argv[i + 1]);
		if (ret)
			return ret;
	}
	return KC_OK;
}

static int kc_config_set(struct kc_nl *nl, int argc, char **argv)
{
	struct nlmsghdr *nlh = kc_nl_request(nl, KWEB_CMD_CONFIG_SET, false);
	int ret;

	ret = kc_config_set_build(nlh, argc, argv);
	if (ret)
		return ret;
	return kc_nl_talk(nl, nlh, NULL, NULL, "config set");
}

static int kc_cmd_config(struct kc_nl *nl, int argc, char **argv)
{
	struct nlmsghdr *nlh;
	unsigned long id = 0;
	int ret;

	if (!argc || !strcmp(argv[0], "get") || !strcmp(argv[0], "show")) {
		/* With a listener: the values it runs with, its own included. */
		if (argc == 3 && !strcmp(argv[1], "listener")) {
			ret = kc_parse_uint(argv[2], UINT32_MAX, &id,
					    "listener id");
			if (ret)
				return ret;
		} else if (argc > 1) {
			return kc_usage(stderr, "config");
		}
		nlh = kc_nl_request(nl, KWEB_CMD_CONFIG_GET, false);
		if (id)
			mnl_attr_put_u32(nlh, KWEB_A_CONFIG_LISTENER_ID, id);
		return kc_nl_talk(nl, nlh, kc_config_cb, NULL, "config get");
	}
	if (kc_is_help(argv[0]))
		return kc_usage(stdout, "config");
	if (!strcmp(argv[0], "set"))
		return kc_config_set(nl, argc - 1, argv + 1);
	return kc_usage(stderr, "config");
}

/* ---- cache ---- */

static int kc_flush_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KWEB_A_CACHE_MAX + 1];
	uint32_t n = 0;

	(void)data;
	kc_nl_parse(nlh, tb, KWEB_A_CACHE_MAX);
	if (tb[KWEB_A_CACHE_ENTRIES])
		n = mnl_attr_get_u32(tb[KWEB_A_CACHE_ENTRIES]);
	if (json)
		printf("{\"entries\": %u}\n", n);
	else
		printf("flushed %u entr%s\n", n, n == 1 ? "y" : "ies");
	return MNL_CB_OK;
}

static int kc_cmd_cache(struct kc_nl *nl, int argc, char **argv)
{
	struct nlmsghdr *nlh;

	if (argc && kc_is_help(argv[0]))
		return kc_usage(stdout, "cache");
	if (!argc || strcmp(argv[0], "flush") || argc > 2)
		return kc_usage(stderr, "cache");
	nlh = kc_nl_request(nl, KWEB_CMD_CACHE_FLUSH, false);
	if (argc == 2 &&
	    !mnl_attr_put_strz_check(nlh, MNL_SOCKET_BUFFER_SIZE,
				     KWEB_A_CACHE_PATH, argv[1])) {
		kc_err("cache flush: path too long\n");
		return KC_USAGE;
	}
	return kc_nl_talk(nl, nlh, kc_flush_cb, NULL, "cache flush");
}

/* ---- status ---- */

struct kc_status {
	int listeners;
	uint64_t conns, softirq, worker, handoffs;
};

static int kc_status_listener_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kc_status *s = data;

	(void)nlh;
	s->listeners++;
	return MNL_CB_OK;
}

static int kc_status_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KWEB_A_STATS_MAX + 1];
	struct kc_status *s = data;
	int i;

#define KC_GET(a) (tb[a] ? mnl_attr_get_u64(tb[a]) : 0)
	kc_nl_parse(nlh, tb, KWEB_A_STATS_MAX);
	s->conns = KC_GET(KWEB_A_STATS_CONNECTIONS_OPEN);
	s->softirq = KC_GET(KWEB_A_STATS_REQUESTS_SOFTIRQ);
	s->worker = KC_GET(KWEB_A_STATS_REQUESTS_WORKER);
	for (i = KWEB_A_STATS_HANDOFF_METHOD;
	     i <= KWEB_A_STATS_HANDOFF_CONNECTION_LIMIT; i++)
		s->handoffs += KC_GET(i);
#undef KC_GET
	return MNL_CB_OK;
}

static int kc_cmd_status(struct kc_nl *nl, int argc, char **argv)
{
	struct kc_status s = { 0 };
	struct nlmsghdr *nlh;
	int ret;

	if (argc && kc_is_help(argv[0]))
		return kc_usage(stdout, "status");
	if (argc)
		return kc_usage(stderr, "status");
	nlh = kc_nl_request(nl, KWEB_CMD_LISTENER_GET, true);
	ret = kc_nl_talk(nl, nlh, kc_status_listener_cb, &s, "status");
	if (ret)
		return ret;
	nlh = kc_nl_request(nl, KWEB_CMD_STATS_GET, false);
	ret = kc_nl_talk(nl, nlh, kc_status_stats_cb, &s, "status");
	if (ret)
		return ret;
	if (json) {
		printf("{\"loaded\": true, \"version\": %u, \"listeners\": %d, \"connections_open\": %" PRIu64 ", \"requests\": %" PRIu64 ", \"handoffs\": %" PRIu64 "}\n",
		       nl->version, s.listeners, s.conns, s.softirq + s.worker,
		       s.handoffs);
		return KC_OK;
	}
	printf("kweb: loaded (netlink family version %u)\n", nl->version);
	printf("listeners: %d\n", s.listeners);
	printf("connections open: %" PRIu64 "\n", s.conns);
	printf("requests answered: %" PRIu64 " (%" PRIu64 " in softirq)\n",
	       s.softirq + s.worker, s.softirq);
	printf("connections handed to the backend: %" PRIu64 "\n",
	       s.handoffs);
	return KC_OK;
}

static int kc_cmd_log_json(struct kc_nl *nl, int argc, char **argv)
{
	if (argc && kc_is_help(argv[0]))
		return kc_usage(stdout, "log");
	return kc_cmd_log(nl, argc, argv, json);
}

/* "apply [--prune] [--dry-run] FILE" */
static int kc_cmd_apply(struct kc_nl *nl, int argc, char **argv)
{
	bool prune = false, dry_run = false;
	const char *file = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--prune"))
			prune = true;
		else if (!strcmp(argv[i], "--dry-run"))
			dry_run = true;
		else if (!file && (argv[i][0] != '-' || !argv[i][1]))
			file = argv[i];
		else
			return kc_usage(stderr, "apply");
	}
	if (!file)
		return kc_usage(stderr, "apply");
	return kc_apply(nl, file, prune, dry_run);
}

static const struct {
	const char *name;
	int (*fn)(struct kc_nl *nl, int argc, char **argv);
} kc_objects[] = {
	{ "status", kc_cmd_status },
	{ "stats", kc_cmd_stats },
	{ "listener", kc_cmd_listener },
	{ "config", kc_cmd_config },
	{ "cache", kc_cmd_cache },
	{ "log", kc_cmd_log_json },
	{ "apply", kc_cmd_apply },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "batch", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	const char *batch = NULL;
	size_t n_objects = ARRAY_SIZE(kc_objects);
	struct kc_nl nl = { .attr_name = kc_attr_name };
	size_t i, len, found = 0;
	int c, ret, matches = 0;

	/* Options before OBJECT only: "config set dynamic-prefixes -x" is data. */
	while ((c = getopt_long(argc, argv, "+jhb:", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'b':
			batch = optarg;
			break;
		case 'h':
			return kc_usage(stdout, "main");
		default:
			return kc_usage(stderr, "main");
		}
	}
	argc -= optind;
	argv += optind;
	if (batch) {
		/* The file holds the commands: nothing may follow. */
		if (argc)
			return kc_usage(stderr, "main");
		ret = kc_nl_init(&nl);
		if (!ret)
			ret = kc_batch(&nl, batch);
		kc_nl_close(&nl);
		return ret;
	}
	if (!argc)
		return kc_usage(stderr, "main");
	/* --json also after the object, as "stats --json". */
	for (c = 1; c < argc; c++)
		if (!strcmp(argv[c], "--json") || !strcmp(argv[c], "-j")) {
			json = true;
			memmove(&argv[c], &argv[c + 1],
				(argc - c - 1) * sizeof(*argv));
			argc--;
			break;
		}
	/* The object by name, or by an unambiguous prefix ("li"), as ip(8). */
	len = strlen(argv[0]);
	for (i = 0; i < n_objects; i++) {
		if (!strcmp(argv[0], kc_objects[i].name)) {
			found = i;
			matches = 1;
			break;
		}
		if (len && !strncmp(argv[0], kc_objects[i].name, len)) {
			found = i;
			matches++;
		}
	}
	if (matches != 1) {
		kc_err("%s object \"%s\"\n",
		       matches ? "ambiguous" : "unknown", argv[0]);
		return kc_usage(stderr, "main");
	}
	if (argc > 1 && kc_is_help(argv[1]))
		return kc_usage(stdout, kc_objects[found].name);
	ret = kc_nl_init(&nl);
	if (!ret)
		ret = kc_objects[found].fn(&nl, argc - 1, argv + 1);
	kc_nl_close(&nl);
	return ret;
}
