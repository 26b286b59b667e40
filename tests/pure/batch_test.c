// SPDX-License-Identifier: GPL-2.0
/*
 * userctl/batch.c, the files of kwebctl -b and kwebctl apply: words as sh
 * splits them (quotes, backslashes, comments), lines joined by a trailing
 * backslash, the line each command starts on, the errors, and kc_quote()'s
 * words reading back the same.
 */
#include <kunit/test.h>

#include "batch.h"

struct split_case {
	const char *in;
	int ret;		/* KC_SPLIT_* */
	const char *words;	/* joined with '|'; NULL: none expected */
};

static const struct split_case split_cases[] = {
	{ "config set keepalive-timeout 30", KC_SPLIT_OK,
	  "config|set|keepalive-timeout|30" },
	{ "  a\tb  ", KC_SPLIT_OK, "a|b" },
	{ "", KC_SPLIT_OK, "" },
	{ "   ", KC_SPLIT_OK, "" },
	{ "# a comment", KC_SPLIT_OK, "" },
	{ "a # comment \"", KC_SPLIT_OK, "a" },
	{ "a#b", KC_SPLIT_OK, "a#b" },
	{ "a \\#b", KC_SPLIT_OK, "a|#b" },
	{ "x \"\" y ''", KC_SPLIT_OK, "x||y|" },
	{ "'a b' \"c d\"", KC_SPLIT_OK, "a b|c d" },
	{ "'it'\\''s'", KC_SPLIT_OK, "it's" },
	{ "\"a\\\"b\\\\c\\$d\\`e\\nf\"", KC_SPLIT_OK, "a\"b\\c$d`e\\nf" },
	{ "a\\ b c", KC_SPLIT_OK, "a b|c" },
	{ "'a\\b' \"a'b\" 'c\"d'", KC_SPLIT_OK, "a\\b|a'b|c\"d" },
	{ "pre'mid'\"dle\"post", KC_SPLIT_OK, "premiddlepost" },
	{ "cache-control \"/assets/=max-age=31536000, immutable\"",
	  KC_SPLIT_OK, "cache-control|/assets/=max-age=31536000, immutable" },
	{ "'#' \"#\" x", KC_SPLIT_OK, "#|#|x" },
	{ "'abc", KC_SPLIT_ERROR, NULL },
	{ "a \"abc", KC_SPLIT_ERROR, NULL },
	{ "'abc\\", KC_SPLIT_ERROR, NULL },
	{ "a b \\", KC_SPLIT_MORE, NULL },
	{ "a \"b\\", KC_SPLIT_MORE, NULL },
	{ "a \\\\", KC_SPLIT_OK, "a|\\" },
};

static void split_desc(const struct split_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->in);
}

KUNIT_ARRAY_PARAM(split, split_cases, split_desc);

/* cmd's words joined with '|', in buf. */
static const char *joined(const struct kc_cmd *cmd, char *buf, size_t size)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < cmd->argc; i++)
		n += snprintf(buf + n, size - n, "%s%s", i ? "|" : "",
			      cmd->argv[i]);
	return buf;
}

static void split_test(struct kunit *test)
{
	const struct split_case *c = test->param_value;
	struct kc_cmd cmd = { 0 };
	const char *err = NULL;
	char buf[256];
	int ret;

	ret = kc_split(c->in, &cmd, &err);
	KUNIT_EXPECT_EQ(test, ret, c->ret);
	if (ret == KC_SPLIT_OK && c->words) {
		KUNIT_EXPECT_STREQ(test, joined(&cmd, buf, sizeof(buf)),
				   c->words);
		KUNIT_EXPECT_NULL(test, cmd.argv[cmd.argc]);
	} else {
		KUNIT_EXPECT_EQ(test, cmd.argc, 0);
		KUNIT_EXPECT_NULL(test, cmd.argv);
	}
	if (ret == KC_SPLIT_ERROR)
		KUNIT_EXPECT_NOT_NULL(test, err);
	kc_cmd_free(&cmd);
}

/* A file's commands as "LINE:words" lines, then "LINE!error" if any. */
static char *read_all(const char *text, size_t len)
{
	struct kc_batch b = { 0 };
	struct kc_cmd cmd;
	const char *err;
	char *out = NULL, buf[256];
	size_t out_len = 0;
	FILE *o = open_memstream(&out, &out_len);
	int n;

	b.f = fmemopen((void *)text, len, "r");
	if (!b.f || !o)
		return NULL;
	while ((n = kc_batch_next(&b, &cmd, &err)) > 0) {
		fprintf(o, "%u:%s\n", cmd.line, joined(&cmd, buf, sizeof(buf)));
		kc_cmd_free(&cmd);
	}
	if (n < 0)
		fprintf(o, "%u!%s\n", cmd.line, err);
	kc_batch_free(&b);
	fclose(b.f);
	fclose(o);
	return out;
}

static void batch_file_test(struct kunit *test)
{
	static const char file[] =
		"# kweb.conf\n"
		"config set keepalive-timeout 30\n"
		"\n"
		"listener add port 8081 \\\n"
		"    docroot /srv/b   # the second site\n"
		"  listener set 1 cache-control \"x; y\"\r\n"
		"config set dynamic-prefixes \"/a/,\\\n"
		"/b/\"\n"
		"listener del 2";
	static const char want[] =
		"2:config|set|keepalive-timeout|30\n"
		"4:listener|add|port|8081|docroot|/srv/b\n"
		"6:listener|set|1|cache-control|x; y\n"
		"7:config|set|dynamic-prefixes|/a/,/b/\n"
		"9:listener|del|2\n";
	char *out = read_all(file, sizeof(file) - 1);

	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_STREQ(test, out, want);
	free(out);
}

/* Errors name the line the command starts on; none is skipped over. */
static void batch_error_test(struct kunit *test)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
		{ "a\nb 'c\nd\n", "1:a\n2!no closing ' on the line\n" },
		{ "a\nb \\\nc \\\n", "1:a\n2!the file ends after a backslash\n" },
		{ "a\n\"b\\\nc\n", "1:a\n2!no closing \" on the line\n" },
		{ "", "" },
		{ "\n\n# x\n", "" },
	};
	static const char nul[] = "a\nb\0c\nd\n";
	size_t i;
	char *out;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		out = read_all(cases[i].text, strlen(cases[i].text));
		KUNIT_ASSERT_NOT_NULL(test, out);
		KUNIT_EXPECT_STREQ(test, out, cases[i].want);
		free(out);
	}
	out = read_all(nul, sizeof(nul) - 1);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_STREQ(test, out, "1:a\n2!a NUL byte in the line\n");
	free(out);
}

static char *quoted(const char *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);

	if (!o)
		return NULL;
	kc_quote(o, s);
	fclose(o);
	return out;
}

/* kc_quote()'s text splits back into the one word it was given. */
static void quote_test(struct kunit *test)
{
	static const char *const words[] = {
		"plain", "/assets/=max-age=60", "", "a b", "it's", "a\"b",
		"#x", "x#", "a\\b", "\t", "caf\xc3\xa9", "$HOME", "`x`", "'",
		"''", "a;b", "-", "x\\",
	};
	struct kc_cmd cmd;
	const char *err;
	size_t i;
	char *q;

	for (i = 0; i < ARRAY_SIZE(words); i++) {
		q = quoted(words[i]);
		KUNIT_ASSERT_NOT_NULL(test, q);
		KUNIT_ASSERT_EQ(test, kc_split(q, &cmd, &err), KC_SPLIT_OK);
		KUNIT_EXPECT_EQ(test, cmd.argc, 1);
		if (cmd.argc == 1)
			KUNIT_EXPECT_STREQ(test, cmd.argv[0], words[i]);
		kc_cmd_free(&cmd);
		free(q);
	}
	q = quoted("plain-word_1.2,3");
	KUNIT_EXPECT_STREQ(test, q, "plain-word_1.2,3");
	free(q);
	q = quoted("");
	KUNIT_EXPECT_STREQ(test, q, "''");
	free(q);
	q = quoted("it's");
	KUNIT_EXPECT_STREQ(test, q, "'it'\\''s'");
	free(q);
}

static struct kunit_case kc_batch_cases[] = {
	KUNIT_CASE_PARAM(split_test, split_gen_params),
	KUNIT_CASE(batch_file_test),
	KUNIT_CASE(batch_error_test),
	KUNIT_CASE(quote_test),
	{}
};

static struct kunit_suite kc_batch_suite = {
	.name = "kwebctl_batch",
	.test_cases = kc_batch_cases,
};

kunit_test_suite(kc_batch_suite);
