// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text format of kweb's counters. Each stats attribute is
 * one series of a family: counters, which only grow while the module is
 * loaded, are named *_total; gauges are levels. Attributes that are one
 * quantity split by a reason or a path (handoffs, requests, body bytes)
 * are one family with a label, so that sum() over it means something.
 * Names follow Prometheus's guide: snake_case, base units (bytes), the
 * unit before _total.
 */
#include <inttypes.h>

#include "prom.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The most series one family has: handoffs by their nine reasons. */
#define KC_PROM_SERIES_MAX 9

struct kc_prom_series {
	uint16_t attr;		/* KWEB_A_STATS_*; 0 ends the list */
	const char *value;	/* of the family's label; NULL without one */
};

struct kc_prom_metric {
	const char *name;	/* after "kweb_" or "kweb_listener_" */
	bool counter;
	const char *help;
	const char *label;	/* the label that tells series apart, or NULL */
	struct kc_prom_series series[KC_PROM_SERIES_MAX];
};

/* Every u64 of the stats attribute set, each once (tests/pure checks). */
static const struct kc_prom_metric kc_prom_metrics[] = {
	{ "connections_accepted_total", true, "Connections accepted.", NULL,
	  { { KWEB_A_STATS_CONNECTIONS_ACCEPTED, NULL } } },
	{ "connections_closed_total", true,
	  "Connections kweb closed (not those handed to the backend).", NULL,
	  { { KWEB_A_STATS_CONNECTIONS_CLOSED, NULL } } },
	{ "connections_softirq_total", true,
	  "Connections closed whose accept, requests and responses all ran in softirq.",
	  NULL, { { KWEB_A_STATS_CONNECTIONS_SOFTIRQ, NULL } } },
	{ "connections_open", false, "Connections open now.", NULL,
	  { { KWEB_A_STATS_CONNECTIONS_OPEN, NULL } } },
	{ "requests_total", true,
	  "Requests answered by kweb, by where: in the receive softirq or by the work item.",
	  "context",
	  { { KWEB_A_STATS_REQUESTS_SOFTIRQ, "softirq" },
	    { KWEB_A_STATS_REQUESTS_WORKER, "worker" } } },
	{ "error_responses_total", true,
	  "Requests answered with a 4xx or 5xx status.", NULL,
	  { { KWEB_A_STATS_RESPONSES_ERROR, NULL } } },
	{ "body_bytes_total", true,
	  "Response body bytes handed to TCP: as page-cache pages (spliced) or copied.",
	  "mode",
	  { { KWEB_A_STATS_BODY_BYTES_SPLICED, "spliced" },
	    { KWEB_A_STATS_BODY_BYTES_COPIED, "copied" } } },
	{ "cache_hits_total", true, "File cache lookups that found a valid entry.",
	  NULL, { { KWEB_A_STATS_CACHE_HITS, NULL } } },
	{ "cache_misses_total", true,
	  "File cache lookups that did not: the file was opened.", NULL,
	  { { KWEB_A_STATS_CACHE_MISSES, NULL } } },
	{ "cache_evictions_total", true,
	  "File cache entries evicted to make room.", NULL,
	  { { KWEB_A_STATS_CACHE_EVICTIONS, NULL } } },
	{ "cache_invalidations_total", true,
	  "File cache entries dropped because their file changed.", NULL,
	  { { KWEB_A_STATS_CACHE_INVALIDATIONS, NULL } } },
	{ "cache_bytes", false,
	  "Bytes of page-cache pages the file caches' entries hold.", NULL,
	  { { KWEB_A_STATS_CACHE_BYTES, NULL } } },
	{ "cache_limit_bytes", false, "The file caches' size limit (cache-size).",
	  NULL, { { KWEB_A_STATS_CACHE_LIMIT, NULL } } },
	{ "cache_pinned_bytes", false,
	  "Page-cache bytes cache entries still pin, entries on their way out included; module-wide in the initial network namespace, its cache bytes in another.",
	  NULL, { { KWEB_A_STATS_PINNED_BYTES, NULL } } },
	{ "handoffs_total", true,
	  "Connections handed to the backend, by why.", "reason",
	  { { KWEB_A_STATS_HANDOFF_METHOD, "method" },
	    { KWEB_A_STATS_HANDOFF_QUERY, "query" },
	    { KWEB_A_STATS_HANDOFF_PREFIX, "prefix" },
	    { KWEB_A_STATS_HANDOFF_EXTENSION, "extension" },
	    { KWEB_A_STATS_HANDOFF_UPGRADE, "upgrade" },
	    { KWEB_A_STATS_HANDOFF_H2, "h2" },
	    { KWEB_A_STATS_HANDOFF_UNPARSED, "unparsed" },
	    { KWEB_A_STATS_HANDOFF_MISSING, "missing" },
	    { KWEB_A_STATS_HANDOFF_CONNECTION_LIMIT, "connection_limit" } } },
	{ "handoffs_softirq_total", true,
	  "Of the handoffs, those made from softirq, with no work item.", NULL,
	  { { KWEB_A_STATS_HANDOFFS_SOFTIRQ, NULL } } },
	{ "handoff_failures_total", true,
	  "Handoffs that failed: no_backend answered 502, queue_full 503, other 503 or a reset.",
	  "reason",
	  { { KWEB_A_STATS_HANDOFF_FAILED_NO_BACKEND, "no_backend" },
	    { KWEB_A_STATS_HANDOFF_FAILED_QUEUE_FULL, "queue_full" },
	    { KWEB_A_STATS_HANDOFF_FAILED, "other" } } },
	{ "log_records_total", true, "Access log records published.", NULL,
	  { { KWEB_A_STATS_LOG_RECORDS, NULL } } },
	{ "log_records_dropped_total", true,
	  "Access log records lost: no memory, or a reader's socket was full.",
	  NULL, { { KWEB_A_STATS_LOG_DROPPED, NULL } } },
	{ "tls_connections_total", true,
	  "HTTPS connections kwebtlsd gave back with kTLS installed.", NULL,
	  { { KWEB_A_STATS_TLS_CONNECTIONS, NULL } } },
	{ "tls_bytes_total", true,
	  "Bytes sent through kTLS, which encrypts them into new buffers.",
	  NULL, { { KWEB_A_STATS_TLS_BYTES, NULL } } },
};

/*
 * HELP text and label values: a backslash and a line feed are escaped,
 * and in a label value (quoted) a '"' too.
 */
static void kc_prom_put_escaped(FILE *f, const char *s, bool quoted)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '"' && quoted)
			fputs("\\\"", f);
		else
			fputc(*s, f);
	}
}

void kc_prom_head(FILE *f, const char *name, const char *type,
		  const char *help)
{
	fprintf(f, "# HELP %s ", name);
	kc_prom_put_escaped(f, help, false);
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

void kc_prom_sample(FILE *f, const char *name,
		    const struct kc_prom_label *labels, size_t nr_labels,
		    uint64_t value)
{
	size_t i;

	fputs(name, f);
	for (i = 0; i < nr_labels; i++) {
		fprintf(f, "%s%s=\"", i ? "," : "{", labels[i].name);
		kc_prom_put_escaped(f, labels[i].value, true);
		fputc('"', f);
	}
	fprintf(f, "%s %" PRIu64 "\n", nr_labels ? "}" : "", value);
}

/*
 * The series of m that reply s has, under name: labelled with l's id and
 * port if l is given. The family's HELP and TYPE go before its first
 * sample, once (*head).
 */
static void kc_prom_series_of(FILE *f, const struct kc_prom_metric *m,
			      const char *name, const struct kc_prom_stats *s,
			      const struct kc_prom_listener *l, bool *head)
{
	struct kc_prom_label labels[3];
	char id[16], port[8];
	size_t i, n = 0;

	if (l) {
		snprintf(id, sizeof(id), "%" PRIu32, l->id);
		snprintf(port, sizeof(port), "%u", (unsigned int)l->port);
		labels[n++] = (struct kc_prom_label){ "listener", id };
		labels[n++] = (struct kc_prom_label){ "port", port };
	}
	for (i = 0; i < KC_PROM_SERIES_MAX && m->series[i].attr; i++) {
		const struct kc_prom_series *se = &m->series[i];

		if (se->attr > KWEB_A_STATS_MAX || !s->have[se->attr])
			continue;
		if (!*head) {
			kc_prom_head(f, name, m->counter ? "counter" : "gauge",
				     m->help);
			*head = true;
		}
		if (m->label)
			labels[n] = (struct kc_prom_label){ m->label,
							    se->value };
		kc_prom_sample(f, name, labels, n + !!m->label,
			       s->v[se->attr]);
	}
}

void kc_prom_write(FILE *f, const struct kc_prom_stats *ns,
		   const struct kc_prom_listener *l, size_t nr)
{
	const struct kc_prom_metric *m;
	char name[64];
	size_t i, j;
	bool head;

	for (i = 0; i < ARRAY_SIZE(kc_prom_metrics); i++) {
		m = &kc_prom_metrics[i];
		snprintf(name, sizeof(name), "kweb_%s", m->name);
		head = false;
		kc_prom_series_of(f, m, name, ns, NULL, &head);
	}
	kc_prom_head(f, "kweb_listeners", "gauge",
		     "Listeners in this network namespace.");
	kc_prom_sample(f, "kweb_listeners", NULL, 0, nr);
	/* Family by family: the format wants each one's samples together. */
	for (i = 0; i < ARRAY_SIZE(kc_prom_metrics); i++) {
		m = &kc_prom_metrics[i];
		snprintf(name, sizeof(name), "kweb_listener_%s", m->name);
		head = false;
		for (j = 0; j < nr; j++)
			kc_prom_series_of(f, m, name, &l[j].stats, &l[j],
					  &head);
	}
}
