/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The files of kwebctl -b and kwebctl apply: a kwebctl command line per
 * line, without the leading "kwebctl", split into words as sh(1) would
 * without expanding anything: blanks separate words; '...' keeps all it
 * holds; "..." too, but for \" \\ \$ and \` (the character after the
 * backslash); elsewhere a backslash keeps the next character; '#' at the
 * start of a word comments out the rest of the line; a backslash at the
 * end of a line joins the next one to it. Pure: no kwebctl or netlink in
 * here (tests/pure/batch_test.c).
 */
#ifndef KWEBCTL_BATCH_H
#define KWEBCTL_BATCH_H

#include <stdio.h>

/* One command: its words, and the line of the file it starts on. */
struct kc_cmd {
	unsigned int line;
	int argc;
	char **argv;		/* argv[argc] is NULL; words in one allocation */
};

enum {
	KC_SPLIT_OK,
	KC_SPLIT_MORE,		/* ends in a backslash: the next line goes on */
	KC_SPLIT_ERROR,
};

/*
 * Split s into cmd->argv (cmd->line untouched). Returns KC_SPLIT_OK,
 * KC_SPLIT_MORE with cmd empty, or KC_SPLIT_ERROR with *err saying why
 * (out of memory included) and cmd empty.
 */
int kc_split(const char *s, struct kc_cmd *cmd, const char **err);

void kc_cmd_free(struct kc_cmd *cmd);

struct kc_batch {
	FILE *f;
	unsigned int line;	/* lines read so far */
	char *buf;		/* getline()'s */
	size_t size;
};

/*
 * The next command of b->f, blank and comment lines skipped: 1 with cmd
 * filled in, 0 at the end of the file, -1 with *err and cmd->line set.
 */
int kc_batch_next(struct kc_batch *b, struct kc_cmd *cmd, const char **err);

void kc_batch_free(struct kc_batch *b);

/* s as one word that kc_split() reads back as s: quoted if need be. */
void kc_quote(FILE *f, const char *s);

#endif /* KWEBCTL_BATCH_H */
