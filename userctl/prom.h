/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kweb's counters in Prometheus's text exposition format (0.0.4), for
 * "kwebctl stats --format prometheus" and node_exporter's textfile
 * collector (docs/metrics.md). Pure: the caller reads the stats replies;
 * this only writes text, so tests/pure checks it without a kernel.
 */
#ifndef KWEBCTL_PROM_H
#define KWEBCTL_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/kweb.h>

/* One stats-get reply: each u64 by its KWEB_A_STATS_* type, if sent. */
struct kc_prom_stats {
	uint64_t v[KWEB_A_STATS_MAX + 1];
	bool have[KWEB_A_STATS_MAX + 1];
};

/* One listener's reply, and what its samples are labelled with. */
struct kc_prom_listener {
	uint32_t id;
	uint16_t port;
	struct kc_prom_stats stats;
};

struct kc_prom_label {
	const char *name;
	const char *value;	/* escaped as the format says */
};

/* A family's "# HELP" and "# TYPE" lines; type "counter" or "gauge". */
void kc_prom_head(FILE *f, const char *name, const char *type,
		  const char *help);

/* One sample line: name{labels} value. */
void kc_prom_sample(FILE *f, const char *name,
		    const struct kc_prom_label *labels, size_t nr_labels,
		    uint64_t value);

/*
 * Everything: the namespace's figures ns as kweb_* families, then those
 * of the nr listeners l as kweb_listener_* families, labelled listener
 * and port. A family is written only if some reply has one of its
 * attributes, so an older kernel's output still passes promtool.
 */
void kc_prom_write(FILE *f, const struct kc_prom_stats *ns,
		   const struct kc_prom_listener *l, size_t nr);

#endif /* KWEBCTL_PROM_H */
