// SPDX-License-Identifier: GPL-2.0
/*
 * userctl/prom.c, kwebctl's Prometheus text format, on made-up stats
 * replies: the exact text for a fixed input, escaping, every stats
 * counter of the uAPI in exactly one series, counters named *_total, and
 * promtool's verdict ("promtool check metrics") where it is installed.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kunit/test.h>

#include "prom.h"

/* What kc_prom_write() prints, as a string the caller frees. */
static char *prom_text(const struct kc_prom_stats *ns,
		       const struct kc_prom_listener *l, size_t nr)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	kc_prom_write(f, ns, l, nr);
	fclose(f);
	return buf;
}

static void put(struct kc_prom_stats *s, unsigned int attr, uint64_t v)
{
	s->v[attr] = v;
	s->have[attr] = true;
}

/* The u64 attributes of a stats reply: all but pad and listener-id. */
static bool is_counter_attr(unsigned int attr)
{
	return attr > KWEB_A_STATS_PAD && attr <= KWEB_A_STATS_MAX &&
	       attr != KWEB_A_STATS_LISTENER_ID;
}

/* Every attribute, each with a value no other has. */
static void fill_all(struct kc_prom_stats *s, uint64_t base)
{
	unsigned int a;

	for (a = 0; a <= KWEB_A_STATS_MAX; a++)
		if (is_counter_attr(a))
			put(s, a, base + a);
}

/* The same for a listener: the kernel sends no pinned-bytes for one. */
static void fill_listener(struct kc_prom_listener *l, uint64_t base)
{
	fill_all(&l->stats, base);
	l->stats.have[KWEB_A_STATS_PINNED_BYTES] = false;
}

static void prom_exact_test(struct kunit *test)
{
	static const char want[] =
		"# HELP kweb_connections_accepted_total Connections accepted.\n"
		"# TYPE kweb_connections_accepted_total counter\n"
		"kweb_connections_accepted_total 3\n"
		"# HELP kweb_requests_total Requests answered by kweb, by where: in the receive softirq or by the work item.\n"
		"# TYPE kweb_requests_total counter\n"
		"kweb_requests_total{context=\"softirq\"} 2\n"
		"kweb_requests_total{context=\"worker\"} 1\n"
		"# HELP kweb_cache_bytes Bytes of page-cache pages the file caches' entries hold.\n"
		"# TYPE kweb_cache_bytes gauge\n"
		"kweb_cache_bytes 4096\n"
		"# HELP kweb_cache_pinned_bytes Page-cache bytes cache entries still pin, entries on their way out included; module-wide in the initial network namespace, its cache bytes in another.\n"
		"# TYPE kweb_cache_pinned_bytes gauge\n"
		"kweb_cache_pinned_bytes 8192\n"
		"# HELP kweb_handoffs_total Connections handed to the backend, by why.\n"
		"# TYPE kweb_handoffs_total counter\n"
		"kweb_handoffs_total{reason=\"h2\"} 18446744073709551615\n"
		"# HELP kweb_listeners Listeners in this network namespace.\n"
		"# TYPE kweb_listeners gauge\n"
		"kweb_listeners 2\n"
		"# HELP kweb_listener_connections_accepted_total Connections accepted.\n"
		"# TYPE kweb_listener_connections_accepted_total counter\n"
		"kweb_listener_connections_accepted_total{listener=\"1\",port=\"80\"} 2\n"
		"kweb_listener_connections_accepted_total{listener=\"4294967295\",port=\"65535\"} 1\n"
		"# HELP kweb_listener_requests_total Requests answered by kweb, by where: in the receive softirq or by the work item.\n"
		"# TYPE kweb_listener_requests_total counter\n"
		"kweb_listener_requests_total{listener=\"1\",port=\"80\",context=\"softirq\"} 2\n"
		"kweb_listener_requests_total{listener=\"4294967295\",port=\"65535\",context=\"worker\"} 1\n"
		"# HELP kweb_listener_cache_bytes Bytes of page-cache pages the file caches' entries hold.\n"
		"# TYPE kweb_listener_cache_bytes gauge\n"
		"kweb_listener_cache_bytes{listener=\"1\",port=\"80\"} 4096\n"
		"kweb_listener_cache_bytes{listener=\"4294967295\",port=\"65535\"} 0\n";
	struct kc_prom_listener l[2] = {
		{ .id = 1, .port = 80 },
		{ .id = UINT32_MAX, .port = UINT16_MAX },
	};
	struct kc_prom_stats ns = { 0 };
	char *out;

	put(&ns, KWEB_A_STATS_CONNECTIONS_ACCEPTED, 3);
	put(&ns, KWEB_A_STATS_REQUESTS_SOFTIRQ, 2);
	put(&ns, KWEB_A_STATS_REQUESTS_WORKER, 1);
	put(&ns, KWEB_A_STATS_CACHE_BYTES, 4096);
	put(&ns, KWEB_A_STATS_PINNED_BYTES, 8192);
	put(&ns, KWEB_A_STATS_HANDOFF_H2, UINT64_MAX);
	put(&l[0].stats, KWEB_A_STATS_CONNECTIONS_ACCEPTED, 2);
	put(&l[0].stats, KWEB_A_STATS_REQUESTS_SOFTIRQ, 2);
	put(&l[0].stats, KWEB_A_STATS_CACHE_BYTES, 4096);
	put(&l[1].stats, KWEB_A_STATS_CONNECTIONS_ACCEPTED, 1);
	put(&l[1].stats, KWEB_A_STATS_REQUESTS_WORKER, 1);
	put(&l[1].stats, KWEB_A_STATS_CACHE_BYTES, 0);
	out = prom_text(&ns, l, 2);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_STREQ(test, out, want);
	free(out);
}

/* No listeners: no kweb_listener_* family, not even its HELP. */
static void prom_no_listener_test(struct kunit *test)
{
	struct kc_prom_stats ns = { 0 };
	char *out;

	put(&ns, KWEB_A_STATS_CONNECTIONS_OPEN, 0);
	out = prom_text(&ns, NULL, 0);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_STREQ(test, out,
			   "# HELP kweb_connections_open Connections open now.\n"
			   "# TYPE kweb_connections_open gauge\n"
			   "kweb_connections_open 0\n"
			   "# HELP kweb_listeners Listeners in this network namespace.\n"
			   "# TYPE kweb_listeners gauge\n"
			   "kweb_listeners 0\n");
	free(out);
}

/* Label values escape \, " and line feeds; HELP text \ and line feeds. */
static void prom_escape_test(struct kunit *test)
{
	static const struct kc_prom_label labels[] = {
		{ "a", "back\\slash" },
		{ "b", "say \"hi\"\nbye" },
		{ "c", "" },
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	KUNIT_ASSERT_NOT_NULL(test, f);
	kc_prom_head(f, "x_total", "counter", "a \\ b\nc \"d\"");
	kc_prom_sample(f, "x_total", labels, ARRAY_SIZE(labels), 7);
	kc_prom_sample(f, "x_total", NULL, 0, 0);
	fclose(f);
	KUNIT_EXPECT_STREQ(test, buf,
			   "# HELP x_total a \\\\ b\\nc \"d\"\n"
			   "# TYPE x_total counter\n"
			   "x_total{a=\"back\\\\slash\",b=\"say \\\"hi\\\"\\nbye\",c=\"\"} 7\n"
			   "x_total 0\n");
	free(buf);
}

/* How many lines of s end in " value". */
static int count_value(const char *s, uint64_t value)
{
	const char *p;
	int count = 0;
	char end[32];

	snprintf(end, sizeof(end), " %llu\n", (unsigned long long)value);

	for (p = strstr(s, end); p; p = strstr(p + 1, end))
		count++;
	return count;
}

/*
 * Each counter of the uAPI is in exactly one series: a counter added to
 * uapi/kweb.yaml fails here until prom.c's table has it.
 */
static void prom_every_attr_test(struct kunit *test)
{
	struct kc_prom_listener l = { .id = 3, .port = 8080 };
	struct kc_prom_stats ns = { 0 };
	unsigned int a;
	char *out;

	fill_all(&ns, 1000000);
	fill_listener(&l, 2000000);
	out = prom_text(&ns, &l, 1);
	KUNIT_ASSERT_NOT_NULL(test, out);
	for (a = 0; a <= KWEB_A_STATS_MAX; a++) {
		if (!is_counter_attr(a))
			continue;
		KUNIT_EXPECT_EQ_MSG(test, count_value(out, 1000000 + a), 1,
				    "namespace attribute %u", a);
		KUNIT_EXPECT_EQ_MSG(test, count_value(out, 2000000 + a),
				    a == KWEB_A_STATS_PINNED_BYTES ? 0 : 1,
				    "listener attribute %u", a);
	}
	free(out);
}

/* "# TYPE name counter" only for names in _total, gauges never. */
static void prom_names_test(struct kunit *test)
{
	struct kc_prom_listener l = { .id = 1, .port = 80 };
	struct kc_prom_stats ns = { 0 };
	char *out, *line, *save, name[128], type[16];
	int families = 0;

	fill_all(&ns, 1);
	fill_listener(&l, 1);
	out = prom_text(&ns, &l, 1);
	KUNIT_ASSERT_NOT_NULL(test, out);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t len;
		bool total;

		if (sscanf(line, "# TYPE %127s %15s", name, type) != 2)
			continue;
		families++;
		len = strlen(name);
		total = len > 6 && !strcmp(name + len - 6, "_total");
		KUNIT_EXPECT_TRUE_MSG(test, !strncmp(name, "kweb_", 5), "%s",
				      name);
		if (!strcmp(type, "counter"))
			KUNIT_EXPECT_TRUE_MSG(test, total, "%s", name);
		else
			KUNIT_EXPECT_TRUE_MSG(test, !strcmp(type, "gauge") &&
					      !total, "%s %s", name, type);
	}
	/* 22 of the namespace, 20 per listener (no listeners, no pinned). */
	KUNIT_EXPECT_EQ(test, families, 42);
	free(out);
}

/*
 * promtool's parser and linter on everything at once, three listeners:
 * no output, exit 0. Skipped, with a note, where it is not installed.
 */
static void prom_promtool_test(struct kunit *test)
{
	struct kc_prom_listener l[3] = {
		{ .id = 1, .port = 80 },
		{ .id = 2, .port = 8081 },
		{ .id = 10, .port = 443 },
	};
	char path[] = "/tmp/kweb-prom-test-XXXXXX", cmd[128], said[512];
	struct kc_prom_stats ns = { 0 };
	size_t i, n;
	FILE *f, *p;
	int fd, status;

	if (system("command -v promtool >/dev/null 2>&1")) {
		printf("# kwebctl_prom: promtool not installed: check not run\n");
		return;
	}
	fill_all(&ns, 100);
	for (i = 0; i < ARRAY_SIZE(l); i++)
		fill_listener(&l[i], 10 * i);
	fd = mkstemp(path);
	KUNIT_ASSERT_GE(test, fd, 0);
	f = fdopen(fd, "w");
	KUNIT_ASSERT_NOT_NULL(test, f);
	kc_prom_write(f, &ns, l, ARRAY_SIZE(l));
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics <%s 2>&1", path);
	p = popen(cmd, "r");
	KUNIT_ASSERT_NOT_NULL(test, p);
	n = fread(said, 1, sizeof(said) - 1, p);
	said[n] = '\0';
	status = pclose(p);
	unlink(path);
	KUNIT_EXPECT_TRUE_MSG(test, WIFEXITED(status) &&
			      !WEXITSTATUS(status) && !n,
			      "promtool: status %d: %s", status, said);
}

static struct kunit_case kc_prom_cases[] = {
	KUNIT_CASE(prom_exact_test),
	KUNIT_CASE(prom_no_listener_test),
	KUNIT_CASE(prom_escape_test),
	KUNIT_CASE(prom_every_attr_test),
	KUNIT_CASE(prom_names_test),
	KUNIT_CASE(prom_promtool_test),
	{}
};

static struct kunit_suite kc_prom_suite = {
	.name = "kwebctl_prom",
	.test_cases = kc_prom_cases,
};

kunit_test_suite(kc_prom_suite);
