// SPDX-License-Identifier: GPL-2.0
/*
 * kwebctl -b FILE and kwebctl apply FILE: many changes, all or none.
 *
 * Both read the whole file and check every command in user space first
 * (words, keys, values; for -b, that each listener named exists), sending
 * no change until all is well. Then the changes are made one request at
 * a time, and each one's undo is known before it is sent: "config set"
 * and "listener set" read the values they change (config get, listener
 * get), "listener add" learns the id to delete. If the kernel refuses a
 * change, those made are undone, last first. A deleted listener cannot
 * come back as it was (its connections are gone, a new one gets a new
 * id), so deletions are made last, when nothing else can fail any more;
 * should one fail, those deleted before it are added again with the
 * settings read before.
 *
 * -b runs the commands as written: config set, listener add, set and del.
 * apply takes the file as the state wanted: its "config set" lines and
 * its "listener add" lines, a listener per port, are compared with what
 * runs, and only what differs becomes a change (kc_apply_plan()).
 */
#define _GNU_SOURCE	/* asprintf */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kweb.h>

#include "batch.h"
#include "ctl.h"

enum kc_op { KC_CONFIG_SET, KC_LISTENER_ADD, KC_LISTENER_SET, KC_LISTENER_DEL };

static const char *const kc_op_names[] = {
	[KC_CONFIG_SET] = "config set",
	[KC_LISTENER_ADD] = "listener add",
	[KC_LISTENER_SET] = "listener set",
	[KC_LISTENER_DEL] = "listener del",
};

struct kc_step {
	enum kc_op op;
	unsigned int line;	/* where in the file; 0: none (--prune) */
	uint32_t id;		/* set, del: the listener */
	int argc;		/* after "config set", "listener add", */
	char **argv;		/* "listener set ID"; the array is ours */
	char *note;		/* printed before it, if any */
	struct nlmsghdr *before; /* config, or the listener, before it ran */
	uint32_t made;		/* add, and del's undo: the listener made */
	bool done;
};

struct kc_run {
	struct kc_nl *nl;
	const char *file;	/* as messages name it */
	struct kc_cmd *cmds;	/* the file's commands: argv point into them */
	size_t nr_cmds;
	struct kc_step *steps;
	size_t nr_steps;
	char *scratch;		/* a request that is never sent */
	char where[PATH_MAX + 32];
	char line_at[PATH_MAX + 32];	/* kc_where while checking */
};

/* ---- small helpers ---- */

/*
 * p, an array of nr elements of size bytes, with room for one more: its
 * room is nr rounded up to a power of two, at least 8, so it grows when
 * nr reaches one. NULL if out of memory (p is still good).
 */
static void *kc_grow(void *p, size_t nr, size_t size)
{
	if (nr && (nr < 8 || (nr & (nr - 1))))
		return p;
	return realloc(p, (nr ? nr * 2 : 8) * size);
}

static struct kc_step *kc_step_new(struct kc_run *r, enum kc_op op,
				   unsigned int line, uint32_t id)
{
	struct kc_step *s, *steps = kc_grow(r->steps, r->nr_steps, sizeof(*s));

	if (!steps)
		return NULL;
	r->steps = steps;
	s = &r->steps[r->nr_steps++];
	memset(s, 0, sizeof(*s));
	s->op = op;
	s->line = line;
	s->id = id;
	return s;
}

/* s's arguments: a copy of the array, the words stay where they are. */
static int kc_step_args(struct kc_step *s, int argc, char **argv)
{
	s->argv = calloc(argc + 1, sizeof(*s->argv));
	if (!s->argv)
		return -1;
	memcpy(s->argv, argv, argc * sizeof(*argv));
	s->argc = argc;
	return 0;
}

static int kc_nomem(void)
{
	kc_err("out of memory\n");
	return KC_ERROR;
}

/* "FILE:LINE: " (or "FILE: ") into r->where, for messages. */
static const char *kc_at(struct kc_run *r, unsigned int line)
{
	if (line)
		snprintf(r->where, sizeof(r->where), "%s:%u: ", r->file, line);
	else
		snprintf(r->where, sizeof(r->where), "%s: ", r->file);
	return r->where;
}

/* The messages of c's checks name it. */
static void kc_checking(struct kc_run *r, const struct kc_cmd *c)
{
	snprintf(r->line_at, sizeof(r->line_at), "%s:%u: ", r->file,
		 c->line);
	kc_where = r->line_at;
}

/* "FILE:LINE: listener set", what kc_nl_talk() names a failure by. */
static const char *kc_what(struct kc_run *r, unsigned int line,
			   const char *what)
{
	size_t n;

	kc_at(r, line);
	n = strlen(r->where);
	snprintf(r->where + n, sizeof(r->where) - n, "%s", what);
	return r->where;
}

static void kc_step_print(FILE *f, struct kc_run *r, const struct kc_step *s)
{
	int i;

	fprintf(f, "%s%s", kc_at(r, s->line), kc_op_names[s->op]);
	if (s->op == KC_LISTENER_SET || s->op == KC_LISTENER_DEL)
		fprintf(f, " %u", s->id);
	for (i = 0; i < s->argc; i++) {
		putc(' ', f);
		kc_quote(f, s->argv[i]);
	}
}

/* ---- reading ---- */

struct kc_copy {
	struct nlmsghdr **msgs;
	size_t nr;
	bool nomem;
};

/* Keep each reply message. */
static int kc_copy_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kc_copy *c = data;
	struct nlmsghdr **msgs = kc_grow(c->msgs, c->nr, sizeof(*msgs));
	struct nlmsghdr *m;

	if (msgs)
		c->msgs = msgs;
	m = msgs ? malloc(nlh->nlmsg_len) : NULL;
	if (!m) {
		c->nomem = true;
		return MNL_CB_ERROR;
	}
	memcpy(m, nlh, nlh->nlmsg_len);
	c->msgs[c->nr++] = m;
	return MNL_CB_OK;
}

static void kc_copy_free(struct kc_copy *c)
{
	while (c->nr)
		free(c->msgs[--c->nr]);
	free(c->msgs);
	c->msgs = NULL;
}

/*
 * Send nlh, keep the replies in c. Returns a KC_* code; KC_NOT_FOUND is
 * silent when quiet.
 */
static int kc_fetch(struct kc_run *r, struct nlmsghdr *nlh, struct kc_copy *c,
		    bool quiet, const char *what)
{
	int ret;

	r->nl->quiet_not_found = quiet;
	ret = kc_nl_talk(r->nl, nlh, kc_copy_cb, c, what);
	r->nl->quiet_not_found = false;
	if (c->nomem) {
		kc_copy_free(c);
		return kc_nomem();
	}
	if (ret)
		kc_copy_free(c);
	return ret;
}

/* The one message of config get, or of listener get ID, in *msg. */
static int kc_fetch_one(struct kc_run *r, uint8_t cmd, uint32_t id,
			bool quiet, const char *what, struct nlmsghdr **msg)
{
	struct nlmsghdr *nlh = kc_nl_request(r->nl, cmd, false);
	struct kc_copy c = { 0 };
	int ret;

	if (cmd == KWEB_CMD_LISTENER_GET)
		mnl_attr_put_u32(nlh, KWEB_A_LISTENER_ID, id);
	ret = kc_fetch(r, nlh, &c, quiet, what);
	if (ret)
		return ret;
	if (c.nr != 1) {
		kc_copy_free(&c);
		kc_err("%s: %zu replies, not one\n", what, c.nr);
		return KC_ERROR;
	}
	*msg = c.msgs[0];
	free(c.msgs);
	return KC_OK;
}

/* ---- doing and undoing ---- */

static int kc_id_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KWEB_A_LISTENER_MAX + 1];

	kc_nl_parse(nlh, tb, KWEB_A_LISTENER_MAX);
	if (tb[KWEB_A_LISTENER_ID])
		*(uint32_t *)data = mnl_attr_get_u32(tb[KWEB_A_LISTENER_ID]);
	return MNL_CB_OK;
}

/* A's value, as read, into nlh; false if there is no room. */
static bool kc_put_copy(struct nlmsghdr *nlh, const struct nlattr *a)
{
	return mnl_attr_put_check(nlh, MNL_SOCKET_BUFFER_SIZE,
				  mnl_attr_get_type(a),
				  mnl_attr_get_payload_len(a),
				  mnl_attr_get_payload(a));
}

/* The request that makes again the listener read in msg. */
static bool kc_readd_build(struct nlmsghdr *nlh, const struct nlmsghdr *msg)
{
	static const uint16_t types[] = {
		KWEB_A_LISTENER_PORT, KWEB_A_LISTENER_DOCROOT,
		KWEB_A_LISTENER_ADDR4, KWEB_A_LISTENER_ADDR6,
		KWEB_A_LISTENER_BACKEND_ADDR4, KWEB_A_LISTENER_BACKEND_ADDR6,
	};
	const struct nlattr *tb[KWEB_A_LISTENER_MAX + 1];
	uint32_t inherit = 0;
	size_t i;

	kc_nl_parse(msg, tb, KWEB_A_LISTENER_MAX);
	if (tb[KWEB_A_LISTENER_INHERIT])
		inherit = mnl_attr_get_u32(tb[KWEB_A_LISTENER_INHERIT]);
	for (i = 0; i < ARRAY_SIZE(types); i++)
		if (tb[types[i]] && !kc_put_copy(nlh, tb[types[i]]))
			return false;
	/* Its own settings; those it inherited it will inherit again. */
	for (i = 0; i < kc_nr_listener_keys; i++) {
		const struct kc_lkey *k = &kc_listener_keys[i];

		if (tb[k->type] && !(inherit & k->inherit) &&
		    !kc_put_copy(nlh, tb[k->type]))
			return false;
	}
	return true;
}

/* The config set that puts back the values of s's keys read before it. */
static bool kc_undo_config(struct nlmsghdr *nlh, const struct kc_step *s)
{
	const struct nlattr *tb[KWEB_A_CONFIG_MAX + 1];
	int i;

	kc_nl_parse(s->before, tb, KWEB_A_CONFIG_MAX);
	for (i = 0; i < s->argc; i += 2) {
		const struct kc_key *k = kc_config_key(s->argv[i]);

		if (k && tb[k->type] && !kc_put_copy(nlh, tb[k->type]))
			return false;
	}
	return true;
}

/* The same for listener set: values, or following config's again. */
static bool kc_undo_listener(struct nlmsghdr *nlh, const struct kc_step *s)
{
	const struct nlattr *tb[KWEB_A_LISTENER_MAX + 1];
	uint32_t was = 0, inherit = 0;
	int i;

	kc_nl_parse(s->before, tb, KWEB_A_LISTENER_MAX);
	if (tb[KWEB_A_LISTENER_INHERIT])
		was = mnl_attr_get_u32(tb[KWEB_A_LISTENER_INHERIT]);
	mnl_attr_put_u32(nlh, KWEB_A_LISTENER_ID, s->id);
	for (i = 0; i < s->argc; i += 2) {
		const struct kc_lkey *k = kc_listener_key(s->argv[i]);

		if (!k)
			continue;
		if (was & k->inherit)
			inherit |= k->inherit;
		else if (tb[k->type] && !kc_put_copy(nlh, tb[k->type]))
			return false;
	}
	return !inherit ||
	       mnl_attr_put_u32_check(nlh, MNL_SOCKET_BUFFER_SIZE,
				      KWEB_A_LISTENER_INHERIT, inherit);
}

static int kc_step_do(struct kc_run *r, struct kc_step *s)
{
	const char *what = kc_what(r, s->line, kc_op_names[s->op]);
	struct nlmsghdr *nlh;
	int ret = KC_OK;

	/* What it changes, as it is now: its undo. */
	if (s->op == KC_CONFIG_SET)
		ret = kc_fetch_one(r, KWEB_CMD_CONFIG_GET, 0, false, what,
				   &s->before);
	else if (s->op != KC_LISTENER_ADD)
		ret = kc_fetch_one(r, KWEB_CMD_LISTENER_GET, s->id, false,
				   what, &s->before);
	if (ret)
		return ret;
	switch (s->op) {
	case KC_CONFIG_SET:
		nlh = kc_nl_request(r->nl, KWEB_CMD_CONFIG_SET, false);
		ret = kc_config_set_build(nlh, s->argc, s->argv);
		break;
	case KC_LISTENER_ADD:
		nlh = kc_nl_request(r->nl, KWEB_CMD_LISTENER_ADD, false);
		ret = kc_listener_add_build(nlh, s->argc, s->argv);
		break;
	case KC_LISTENER_SET:
		nlh = kc_nl_request(r->nl, KWEB_CMD_LISTENER_SET, false);
		ret = kc_listener_set_build(nlh, s->id, s->argc, s->argv);
		break;
	case KC_LISTENER_DEL:
	default:
		nlh = kc_nl_request(r->nl, KWEB_CMD_LISTENER_DEL, false);
		mnl_attr_put_u32(nlh, KWEB_A_LISTENER_ID, s->id);
		break;
	}
	if (ret)
		return ret;
	ret = kc_nl_talk(r->nl, nlh, s->op == KC_LISTENER_ADD ? kc_id_cb :
			 NULL, &s->made, what);
	if (ret)
		return ret;
	s->done = true;
	kc_step_print(stdout, r, s);
	if (s->op == KC_LISTENER_ADD)
		printf(": listener %u", s->made);
	putchar('\n');
	return KC_OK;
}

static int kc_step_undo(struct kc_run *r, struct kc_step *s)
{
	static const uint8_t cmds[] = {
		[KC_CONFIG_SET] = KWEB_CMD_CONFIG_SET,
		[KC_LISTENER_ADD] = KWEB_CMD_LISTENER_DEL,
		[KC_LISTENER_SET] = KWEB_CMD_LISTENER_SET,
		[KC_LISTENER_DEL] = KWEB_CMD_LISTENER_ADD,
	};
	struct nlmsghdr *nlh = kc_nl_request(r->nl, cmds[s->op], false);
	char what[64];
	uint32_t made = 0;
	bool ok;
	int ret;

	snprintf(what, sizeof(what), "undoing %s", kc_op_names[s->op]);
	if (s->op == KC_LISTENER_ADD) {
		mnl_attr_put_u32(nlh, KWEB_A_LISTENER_ID, s->made);
		ok = true;
	} else if (s->op == KC_LISTENER_DEL) {
		ok = kc_readd_build(nlh, s->before);
	} else if (s->op == KC_CONFIG_SET) {
		ok = kc_undo_config(nlh, s);
	} else {
		ok = kc_undo_listener(nlh, s);
	}
	if (!ok) {
		kc_err("%s%s: the request is too long\n", kc_at(r, s->line),
		       what);
		return KC_ERROR;
	}
	ret = kc_nl_talk(r->nl, nlh, s->op == KC_LISTENER_DEL ? kc_id_cb :
			 NULL, &made, kc_what(r, s->line, what));
	if (ret)
		return ret;
	fprintf(stderr, "kwebctl: ");
	kc_step_print(stderr, r, s);
	if (s->op == KC_LISTENER_DEL)
		fprintf(stderr, ": undone, the listener added again as listener %u (its connections were closed)\n",
			made);
	else if (s->op == KC_LISTENER_ADD)
		fprintf(stderr, ": undone (listener %u deleted)\n", s->made);
	else
		fprintf(stderr, ": undone\n");
	return KC_OK;
}

/*
 * Make r's steps in order; if one fails, undo those made. Signals that
 * would end kwebctl wait until that is over, a closed stdout's SIGPIPE
 * too: no file is left half made.
 */
static int kc_run_steps(struct kc_run *r)
{
	sigset_t block, old;
	size_t i, done = 0;
	int ret = KC_OK, err;
	bool readded;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigaddset(&block, SIGPIPE);
	sigprocmask(SIG_BLOCK, &block, &old);
	for (i = 0; i < r->nr_steps; i++) {
		if (r->steps[i].note)
			printf("%s%s\n", kc_at(r, r->steps[i].line),
			       r->steps[i].note);
		ret = kc_step_do(r, &r->steps[i]);
		if (ret)
			break;
		done++;
	}
	fflush(stdout);
	if (ret && done) {
		kc_err("%s: undoing the %zu change%s made\n", r->file, done,
		       done == 1 ? "" : "s");
		err = KC_OK;
		readded = false;
		while (i--) {
			if (!r->steps[i].done)
				continue;
			if (kc_step_undo(r, &r->steps[i]))
				err = KC_ERROR;
			else if (r->steps[i].op == KC_LISTENER_DEL)
				readded = true;
		}
		if (err)
			kc_err("%s: not all could be undone (see above)\n",
			       r->file);
		else if (readded)
			kc_err("%s: all undone; listeners deleted are back with new ids\n",
			       r->file);
		else
			kc_err("%s: all undone\n", r->file);
	} else if (!ret) {
		printf("%s: %zu change%s made\n", r->file, done,
		       done == 1 ? "" : "s");
	}
	fflush(stdout);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/* ---- the file ---- */

static int kc_read_file(struct kc_run *r, const char *path)
{
	struct kc_batch b = { 0 };
	struct kc_cmd cmd, *cmds;
	const char *err;
	int n, ret = KC_OK;

	r->file = strcmp(path, "-") ? path : "stdin";
	b.f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	if (!b.f) {
		kc_err("%s: %s\n", path, strerror(errno));
		return errno == ENOENT ? KC_USAGE : KC_ERROR;
	}
	while ((n = kc_batch_next(&b, &cmd, &err)) > 0) {
		cmds = kc_grow(r->cmds, r->nr_cmds, sizeof(*cmds));
		if (!cmds) {
			kc_cmd_free(&cmd);
			ret = kc_nomem();
			break;
		}
		r->cmds = cmds;
		r->cmds[r->nr_cmds++] = cmd;
	}
	if (n < 0) {
		kc_err("%s%s\n", kc_at(r, cmd.line), err);
		ret = KC_USAGE;
	}
	kc_batch_free(&b);
	if (b.f != stdin)
		fclose(b.f);
	return ret;
}

static void kc_run_free(struct kc_run *r)
{
	size_t i;

	for (i = 0; i < r->nr_steps; i++) {
		free(r->steps[i].argv);
		free(r->steps[i].note);
		free(r->steps[i].before);
	}
	free(r->steps);
	for (i = 0; i < r->nr_cmds; i++)
		kc_cmd_free(&r->cmds[i]);
	free(r->cmds);
	free(r->scratch);
}

static bool kc_is(const struct kc_cmd *c, const char *object,
		  const char *command)
{
	return c->argc >= 2 && !strcmp(c->argv[0], object) &&
	       !strcmp(c->argv[1], command);
}

/*
 * Check a command's words by building its request, which is not sent;
 * it is left in nl->buf.
 */
static int kc_check(struct kc_run *r, enum kc_op op, unsigned long id,
		    int argc, char **argv)
{
	static const uint8_t cmds[] = {
		[KC_CONFIG_SET] = KWEB_CMD_CONFIG_SET,
		[KC_LISTENER_ADD] = KWEB_CMD_LISTENER_ADD,
		[KC_LISTENER_SET] = KWEB_CMD_LISTENER_SET,
		[KC_LISTENER_DEL] = KWEB_CMD_LISTENER_DEL,
	};
	struct nlmsghdr *nlh = kc_nl_request(r->nl, cmds[op], false);

	switch (op) {
	case KC_CONFIG_SET:
		return kc_config_set_build(nlh, argc, argv);
	case KC_LISTENER_ADD:
		return kc_listener_add_build(nlh, argc, argv);
	case KC_LISTENER_SET:
		return kc_listener_set_build(nlh, id, argc, argv);
	default:
		return KC_OK;
	}
}

/* ---- kwebctl -b FILE ---- */

/* One command of the file, checked, as a step of r. */
static int kc_batch_cmd(struct kc_run *r, const struct kc_cmd *c)
{
	struct nlmsghdr *msg;
	unsigned long id = 0;
	struct kc_step *s;
	enum kc_op op;
	int skip, ret;

	kc_checking(r, c);
	if (kc_is(c, "config", "set")) {
		op = KC_CONFIG_SET;
		skip = 2;
	} else if (kc_is(c, "listener", "add")) {
		op = KC_LISTENER_ADD;
		skip = 2;
	} else if (kc_is(c, "listener", "set") && c->argc >= 3) {
		op = KC_LISTENER_SET;
		skip = 3;
	} else if ((kc_is(c, "listener", "del") ||
		    kc_is(c, "listener", "delete")) && c->argc == 3) {
		op = KC_LISTENER_DEL;
		skip = 3;
	} else {
		kc_err("\"%s%s%s\": not a command -b runs (config set, listener add, listener set ID, listener del ID)\n",
		       c->argv[0], c->argc > 1 ? " " : "",
		       c->argc > 1 ? c->argv[1] : "");
		return KC_USAGE;
	}
	if (skip == 3) {
		ret = kc_parse_uint(c->argv[2], UINT32_MAX, &id,
				    "listener id");
		if (ret)
			return ret;
	}
	ret = kc_check(r, op, id, c->argc - skip, c->argv + skip);
	if (ret)
		return ret;
	if (skip == 3) {
		/* The listener must be there: a read, which changes nothing. */
		ret = kc_fetch_one(r, KWEB_CMD_LISTENER_GET, id, true,
				   kc_what(r, c->line, kc_op_names[op]), &msg);
		if (ret == KC_NOT_FOUND)
			kc_err("%s: no listener %lu in this network namespace\n",
			       kc_op_names[op], id);
		if (ret)
			return ret;
		free(msg);
	}
	s = kc_step_new(r, op, c->line, id);
	if (!s || kc_step_args(s, c->argc - skip, c->argv + skip))
		return kc_nomem();
	return KC_OK;
}

int kc_batch(struct kc_nl *nl, const char *file)
{
	struct kc_run r = { .nl = nl };
	struct kc_step *dels;
	size_t i, j, nr = 0;
	int ret, bad = KC_OK;

	ret = kc_read_file(&r, file);
	for (i = 0; !ret && i < r.nr_cmds; i++) {
		ret = kc_batch_cmd(&r, &r.cmds[i]);
		/* Each line's mistakes, not only the first's; then stop. */
		if (ret == KC_USAGE || ret == KC_NOT_FOUND) {
			bad = bad ? bad : ret;
			ret = KC_OK;
		}
	}
	kc_where = "";
	if (!ret)
		ret = bad;
	/* A listener deleted twice would fail the second time. */
	for (i = 0; !ret && i < r.nr_steps; i++)
		for (j = 0; j < i; j++)
			if (r.steps[i].op == KC_LISTENER_DEL &&
			    r.steps[j].op == KC_LISTENER_DEL &&
			    r.steps[i].id == r.steps[j].id) {
				kc_err("%slistener %u is deleted twice (also at line %u)\n",
				       kc_at(&r, r.steps[i].line), r.steps[i].id,
				       r.steps[j].line);
				ret = KC_USAGE;
			}
	/* Deletions last, in the file's order. */
	dels = ret ? NULL : malloc(r.nr_steps * sizeof(*dels) + 1);
	if (!ret && !dels)
		ret = kc_nomem();
	if (!ret) {
		for (i = 0; i < r.nr_steps; i++)
			if (r.steps[i].op == KC_LISTENER_DEL)
				dels[nr++] = r.steps[i];
		for (i = 0, j = 0; i < r.nr_steps; i++)
			if (r.steps[i].op != KC_LISTENER_DEL)
				r.steps[j++] = r.steps[i];
		memcpy(&r.steps[j], dels, nr * sizeof(*dels));
		free(dels);
		ret = kc_run_steps(&r);
	}
	kc_run_free(&r);
	return ret;
}

/* ---- kwebctl apply FILE ---- */

/* A listener of the file. */
struct kc_want {
	const struct kc_cmd *cmd;
	struct nlmsghdr *req;		/* its listener add request */
	const struct nlattr *tb[KWEB_A_LISTENER_MAX + 1];
	uint16_t port;
	char docroot[PATH_MAX];		/* as the kernel shows it: resolved */
	struct kc_have *have;		/* what runs on its port, if any */
	char *replace;			/* why have must be made anew, if so */
};

/* A listener that runs. */
struct kc_have {
	const struct nlattr *tb[KWEB_A_LISTENER_MAX + 1];
	uint32_t id, inherit;
	uint16_t port;
	bool wanted;
};

struct kc_state {
	struct kc_want *want;
	size_t nr_want;
	const struct kc_cmd **config;	/* the config set lines */
	size_t nr_config;
	struct kc_copy listeners;	/* what runs */
	struct kc_have *have;
	struct nlmsghdr *cfg;
};

static bool kc_same(const struct nlattr *a, const struct nlattr *b)
{
	if (!a || !b)
		return !a && !b;
	return mnl_attr_get_payload_len(a) == mnl_attr_get_payload_len(b) &&
	       !memcmp(mnl_attr_get_payload(a), mnl_attr_get_payload(b),
		       mnl_attr_get_payload_len(a));
}

/* val of a key as the attribute a request would carry (in r->scratch). */
static const struct nlattr *kc_encode(struct kc_run *r, uint16_t type,
				      enum kc_kind kind, const char *name,
				      const char *val)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(r->scratch);

	if (kc_put_value(nlh, type, kind, name, val))
		return NULL;
	return mnl_nlmsg_get_payload(nlh);
}

static int kc_apply_config_cmd(struct kc_run *r, struct kc_state *st,
			       const struct kc_cmd *c, unsigned int *seen)
{
	const struct kc_cmd **cfg;
	int i, ret;

	ret = kc_check(r, KC_CONFIG_SET, 0, c->argc - 2, c->argv + 2);
	if (ret)
		return ret;
	for (i = 2; i < c->argc; i += 2) {
		size_t k = kc_config_key(c->argv[i]) - kc_config;

		if (seen[k]) {
			kc_err("config set: %s is set twice (also at line %u)\n",
			       c->argv[i], seen[k]);
			return KC_USAGE;
		}
		seen[k] = c->line;
	}
	cfg = kc_grow(st->config, st->nr_config, sizeof(*cfg));
	if (!cfg)
		return kc_nomem();
	st->config = cfg;
	st->config[st->nr_config++] = c;
	return KC_OK;
}

static int kc_apply_listener_cmd(struct kc_run *r, struct kc_state *st,
				 const struct kc_cmd *c)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)r->nl->buf;
	struct kc_want *w;
	const char *dir;
	size_t i;
	int ret;

	ret = kc_check(r, KC_LISTENER_ADD, 0, c->argc - 2, c->argv + 2);
	if (ret)
		return ret;
	w = kc_grow(st->want, st->nr_want, sizeof(*w));
	if (!w)
		return kc_nomem();
	st->want = w;
	w = &st->want[st->nr_want];
	memset(w, 0, sizeof(*w));
	w->req = malloc(nlh->nlmsg_len);
	if (!w->req)
		return kc_nomem();
	memcpy(w->req, nlh, nlh->nlmsg_len);
	st->nr_want++;
	w->cmd = c;
	kc_nl_parse(w->req, w->tb, KWEB_A_LISTENER_MAX);
	w->port = mnl_attr_get_u16(w->tb[KWEB_A_LISTENER_PORT]);
	for (i = 0; i + 1 < st->nr_want; i++)
		if (st->want[i].port == w->port) {
			kc_err("listener add: a second listener on port %u (the first at line %u): apply knows listeners by their port\n",
			       w->port, st->want[i].cmd->line);
			return KC_USAGE;
		}
	/* The kernel shows the docroot it opened: compare with that. */
	dir = mnl_attr_get_str(w->tb[KWEB_A_LISTENER_DOCROOT]);
	if (dir[0] != '/') {
		kc_err("listener add: docroot %s is not an absolute path\n",
		       dir);
		return KC_USAGE;
	}
	if (!realpath(dir, w->docroot)) {
		kc_err("listener add: docroot %s: %s\n", dir, strerror(errno));
		return KC_USAGE;
	}
	return KC_OK;
}

/* The file's lines, checked: every mistake is told, then KC_USAGE. */
static int kc_apply_read(struct kc_run *r, struct kc_state *st)
{
	unsigned int seen[32] = { 0 };
	int ret = KC_OK, bad = KC_OK;
	size_t i;

	if (kc_nr_config > ARRAY_SIZE(seen))
		return kc_nomem();
	for (i = 0; i < r->nr_cmds; i++) {
		const struct kc_cmd *c = &r->cmds[i];

		kc_checking(r, c);
		if (kc_is(c, "config", "set")) {
			ret = kc_apply_config_cmd(r, st, c, seen);
		} else if (kc_is(c, "listener", "add")) {
			ret = kc_apply_listener_cmd(r, st, c);
		} else {
			kc_err("\"%s%s%s\": apply takes \"config set\" and \"listener add\" lines (kwebctl -b runs other commands)\n",
			       c->argv[0], c->argc > 1 ? " " : "",
			       c->argc > 1 ? c->argv[1] : "");
			ret = KC_USAGE;
		}
		if (ret != KC_USAGE && ret)
			break;
		if (ret)
			bad = ret;
		ret = KC_OK;
	}
	kc_where = "";
	return ret ? ret : bad;
}

/* What runs: config, and every listener of this network namespace. */
static int kc_apply_state(struct kc_run *r, struct kc_state *st)
{
	struct nlmsghdr *nlh;
	size_t i;
	int ret;

	ret = kc_fetch_one(r, KWEB_CMD_CONFIG_GET, 0, false, "apply",
			   &st->cfg);
	if (ret)
		return ret;
	nlh = kc_nl_request(r->nl, KWEB_CMD_LISTENER_GET, true);
	ret = kc_fetch(r, nlh, &st->listeners, false, "apply");
	if (ret)
		return ret;
	st->have = calloc(st->listeners.nr + 1, sizeof(*st->have));
	if (!st->have)
		return kc_nomem();
	for (i = 0; i < st->listeners.nr; i++) {
		struct kc_have *h = &st->have[i];

		kc_nl_parse(st->listeners.msgs[i], h->tb, KWEB_A_LISTENER_MAX);
		if (!h->tb[KWEB_A_LISTENER_ID] ||
		    !h->tb[KWEB_A_LISTENER_PORT] ||
		    !h->tb[KWEB_A_LISTENER_DOCROOT] ||
		    mnl_attr_validate(h->tb[KWEB_A_LISTENER_DOCROOT],
				      MNL_TYPE_NUL_STRING) < 0) {
			kc_err("apply: a listener without id, port or docroot\n");
			return KC_ERROR;
		}
		h->id = mnl_attr_get_u32(h->tb[KWEB_A_LISTENER_ID]);
		h->port = mnl_attr_get_u16(h->tb[KWEB_A_LISTENER_PORT]);
		if (h->tb[KWEB_A_LISTENER_INHERIT])
			h->inherit =
				mnl_attr_get_u32(h->tb[KWEB_A_LISTENER_INHERIT]);
	}
	return KC_OK;
}

/*
 * A step that sets the n words of argv (KEY VALUE pairs), which it takes;
 * none when n is 0.
 */
static int kc_step_set(struct kc_run *r, enum kc_op op, unsigned int line,
		       uint32_t id, char **argv, int n)
{
	struct kc_step *s = n ? kc_step_new(r, op, line, id) : NULL;

	if (!s) {
		free(argv);
		return n ? kc_nomem() : KC_OK;
	}
	s->argv = argv;
	s->argc = n;
	return KC_OK;
}

/* The config set line c, less the keys that have their value already. */
static int kc_plan_config(struct kc_run *r, struct kc_state *st,
			  const struct kc_cmd *c)
{
	const struct nlattr *tb[KWEB_A_CONFIG_MAX + 1];
	char **argv = calloc(c->argc + 1, sizeof(*argv));
	int i, n = 0;

	if (!argv)
		return kc_nomem();
	kc_nl_parse(st->cfg, tb, KWEB_A_CONFIG_MAX);
	for (i = 2; i < c->argc; i += 2) {
		const struct kc_key *k = kc_config_key(c->argv[i]);
		const struct nlattr *want = kc_encode(r, k->type, k->kind,
						      k->name, c->argv[i + 1]);

		if (want && kc_same(want, tb[k->type]))
			continue;
		argv[n++] = c->argv[i];
		argv[n++] = c->argv[i + 1];
	}
	return kc_step_set(r, KC_CONFIG_SET, c->line, 0, argv, n);
}

/* The value the file gives key k of w, else the one a new listener has. */
static const char *kc_want_value(const struct kc_want *w,
				 const struct kc_lkey *k)
{
	const char *val = k->dflt;
	int i;

	/* The last, as the kernel takes the last of an attribute. */
	for (i = 2; i + 1 < w->cmd->argc; i += 2)
		if (!strcmp(w->cmd->argv[i], k->name))
			val = w->cmd->argv[i + 1];
	return val;
}

static bool kc_key_same(struct kc_run *r, const struct kc_have *h,
			const struct kc_lkey *k, const char *val)
{
	const struct nlattr *want;
	bool inherited = h->inherit & k->inherit;

	if (k->inherit && !strcmp(val, "default"))
		return inherited;
	if (inherited)
		return false;
	want = kc_encode(r, k->type, k->kind, k->name, val);
	return want && kc_same(want, h->tb[k->type]);
}

/*
 * Why w's listener must be made anew, or NULL if it can be changed in
 * place: listener set changes its own settings, not where it listens,
 * its docroot or its backend's address (which is compared only if the
 * file gives it: a listener without gets the module parameters').
 */
static char *kc_why_replace(const struct kc_want *w, const struct kc_have *h)
{
	static const struct {
		uint16_t type;
		const char *name;
		bool if_given;
	} addrs[] = {
		{ KWEB_A_LISTENER_ADDR4, "IPv4 address", false },
		{ KWEB_A_LISTENER_ADDR6, "IPv6 address", false },
		{ KWEB_A_LISTENER_BACKEND_ADDR4, "IPv4 backend", true },
		{ KWEB_A_LISTENER_BACKEND_ADDR6, "IPv6 backend", true },
	};
	const char *have = mnl_attr_get_str(h->tb[KWEB_A_LISTENER_DOCROOT]);
	char *why = NULL;
	size_t i;

	if (strcmp(have, w->docroot)) {
		if (asprintf(&why, "its docroot is %s, the file's %s", have,
			     w->docroot) < 0)
			why = NULL;
		return why ? why : strdup("its docroot differs");
	}
	for (i = 0; i < ARRAY_SIZE(addrs); i++) {
		if (addrs[i].if_given && !w->tb[addrs[i].type])
			continue;
		if (kc_same(w->tb[addrs[i].type], h->tb[addrs[i].type]))
			continue;
		if (asprintf(&why, "its %s differs from the file's",
			     addrs[i].name) < 0)
			why = NULL;
		return why ? why : strdup("its address differs");
	}
	return NULL;
}

/* listener set for what differs between w's line and what runs. */
static int kc_plan_set(struct kc_run *r, const struct kc_want *w)
{
	char **argv = calloc(2 * kc_nr_listener_keys + 1, sizeof(*argv));
	size_t i;
	int n = 0;

	if (!argv)
		return kc_nomem();
	for (i = 0; i < kc_nr_listener_keys; i++) {
		const struct kc_lkey *k = &kc_listener_keys[i];
		const char *val = kc_want_value(w, k);

		if (kc_key_same(r, w->have, k, val))
			continue;
		argv[n++] = (char *)k->name;
		argv[n++] = (char *)val;
	}
	return kc_step_set(r, KC_LISTENER_SET, w->cmd->line, w->have->id,
			   argv, n);
}

static int kc_plan_add(struct kc_run *r, const struct kc_want *w)
{
	struct kc_step *s = kc_step_new(r, KC_LISTENER_ADD, w->cmd->line, 0);

	if (!s || kc_step_args(s, w->cmd->argc - 2, w->cmd->argv + 2))
		return kc_nomem();
	return KC_OK;
}

/*
 * The steps that make what runs what the file says, in the order they
 * are made: config; listeners changed in place; new ones; then what
 * cannot be undone as it was, deletions: listeners not in the file
 * (--prune), and those made anew (deleted, then added as the file says).
 */
static int kc_apply_plan(struct kc_run *r, struct kc_state *st, bool prune)
{
	struct kc_step *s;
	struct kc_want *w;
	struct kc_have *h;
	size_t i, j;
	int ret = KC_OK;

	for (i = 0; !ret && i < st->nr_config; i++)
		ret = kc_plan_config(r, st, st->config[i]);
	for (i = 0; !ret && i < st->nr_want; i++) {
		w = &st->want[i];
		for (j = 0; j < st->listeners.nr; j++)
			if (st->have[j].port == w->port)
				w->have = &st->have[j];
		if (!w->have)
			continue;
		w->have->wanted = true;
		w->replace = kc_why_replace(w, w->have);
		if (!w->replace)
			ret = kc_plan_set(r, w);
	}
	for (i = 0; !ret && i < st->nr_want; i++)
		if (!st->want[i].have)
			ret = kc_plan_add(r, &st->want[i]);
	for (i = 0; !ret && i < st->listeners.nr; i++) {
		h = &st->have[i];
		if (h->wanted)
			continue;
		if (!prune) {
			printf("%slistener %u on port %u is not in the file: kept (--prune deletes it)\n",
			       kc_at(r, 0), h->id, h->port);
			continue;
		}
		s = kc_step_new(r, KC_LISTENER_DEL, 0, h->id);
		if (!s || asprintf(&s->note, "listener %u on port %u is not in the file: deleted (--prune)",
				   h->id, h->port) < 0)
			ret = kc_nomem();
	}
	for (i = 0; !ret && i < st->nr_want; i++) {
		w = &st->want[i];
		if (!w->replace)
			continue;
		s = kc_step_new(r, KC_LISTENER_DEL, w->cmd->line, w->have->id);
		if (!s || asprintf(&s->note, "listener %u on port %u: %s, which cannot change in place: it is deleted and added again (its connections are closed)",
				   w->have->id, w->port, w->replace) < 0)
			ret = kc_nomem();
		else
			ret = kc_plan_add(r, w);
	}
	return ret;
}

int kc_apply(struct kc_nl *nl, const char *file, bool prune, bool dry_run)
{
	struct kc_run r = { .nl = nl };
	struct kc_state st = { 0 };
	size_t i;
	int ret;

	r.scratch = calloc(1, MNL_SOCKET_BUFFER_SIZE);
	if (!r.scratch)
		return kc_nomem();
	ret = kc_read_file(&r, file);
	if (!ret)
		ret = kc_apply_read(&r, &st);
	if (!ret)
		ret = kc_apply_state(&r, &st);
	if (!ret)
		ret = kc_apply_plan(&r, &st, prune);
	if (!ret && !r.nr_steps) {
		printf("%s: nothing to change\n", r.file);
	} else if (!ret && dry_run) {
		for (i = 0; i < r.nr_steps; i++) {
			if (r.steps[i].note)
				printf("%s%s\n", kc_at(&r, r.steps[i].line),
				       r.steps[i].note);
			kc_step_print(stdout, &r, &r.steps[i]);
			putchar('\n');
		}
		printf("%s: %zu change%s to make (--dry-run: none made)\n",
		       r.file, r.nr_steps, r.nr_steps == 1 ? "" : "s");
	} else if (!ret) {
		ret = kc_run_steps(&r);
	}
	for (i = 0; i < st.nr_want; i++) {
		free(st.want[i].req);
		free(st.want[i].replace);
	}
	free(st.want);
	free(st.config);
	free(st.have);
	free(st.cfg);
	kc_copy_free(&st.listeners);
	kc_run_free(&r);
	return ret;
}
