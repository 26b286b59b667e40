// SPDX-License-Identifier: GPL-2.0
/*
 * Batch files: lines to words (batch.h says how), and words back to text
 * that reads the same.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "batch.h"

static bool kc_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * One pass over s: with out NULL, only counts the words and their bytes
 * (each word's NUL included); else writes them to out and argv.
 */
static int kc_scan(const char *s, char *out, char **argv, int *argc,
		   size_t *bytes, const char **err)
{
	const char *p = s;
	size_t n = 0;
	int words = 0;

#define KC_PUT(c) do { if (out) out[n] = (c); n++; } while (0)
	for (;;) {
		while (kc_blank(*p))
			p++;
		if (!*p || *p == '#')
			break;
		if (argv)
			argv[words] = out + n;
		words++;
		while (*p && !kc_blank(*p)) {
			if (*p == '\'') {
				for (p++; *p && *p != '\''; p++)
					KC_PUT(*p);
				if (!*p) {
					*err = "no closing ' on the line";
					return KC_SPLIT_ERROR;
				}
				p++;
			} else if (*p == '"') {
				for (p++; *p && *p != '"'; p++) {
					if (*p == '\\' && !p[1])
						return KC_SPLIT_MORE;
					if (*p == '\\' && strchr("\"\\$`", p[1]))
						p++;
					KC_PUT(*p);
				}
				if (!*p) {
					*err = "no closing \" on the line";
					return KC_SPLIT_ERROR;
				}
				p++;
			} else if (*p == '\\') {
				if (!p[1])
					return KC_SPLIT_MORE;
				KC_PUT(p[1]);
				p += 2;
			} else {
				KC_PUT(*p);
				p++;
			}
		}
		KC_PUT('\0');
	}
#undef KC_PUT
	*argc = words;
	*bytes = n;
	return KC_SPLIT_OK;
}

int kc_split(const char *s, struct kc_cmd *cmd, const char **err)
{
	size_t bytes;
	int argc, ret;
	char *mem;

	cmd->argc = 0;
	cmd->argv = NULL;
	ret = kc_scan(s, NULL, NULL, &argc, &bytes, err);
	if (ret != KC_SPLIT_OK)
		return ret;
	/* The pointers, then the words, in one allocation. */
	mem = malloc((argc + 1) * sizeof(char *) + bytes);
	if (!mem) {
		*err = "out of memory";
		return KC_SPLIT_ERROR;
	}
	cmd->argv = (char **)mem;
	kc_scan(s, mem + (argc + 1) * sizeof(char *), cmd->argv, &argc,
		&bytes, err);
	cmd->argv[argc] = NULL;
	cmd->argc = argc;
	return KC_SPLIT_OK;
}

void kc_cmd_free(struct kc_cmd *cmd)
{
	free(cmd->argv);
	cmd->argv = NULL;
	cmd->argc = 0;
}

/* Read a line into b->buf without its end; -1 at the end of the file. */
static ssize_t kc_read_line(struct kc_batch *b, const char **err)
{
	ssize_t n;

	errno = 0;
	n = getline(&b->buf, &b->size, b->f);
	if (n < 0 && !errno && !ferror(b->f))
		return -1;
	/* The line read, or the one that could not be. */
	b->line++;
	if (n < 0) {
		*err = errno == ENOMEM ? "out of memory" : "cannot read the file";
		return -2;
	}
	if ((size_t)n != strlen(b->buf)) {
		*err = "a NUL byte in the line";
		return -2;
	}
	if (n && b->buf[n - 1] == '\n')
		b->buf[--n] = '\0';
	/* A file written on Windows: CRLF. */
	if (n && b->buf[n - 1] == '\r')
		b->buf[--n] = '\0';
	return n;
}

int kc_batch_next(struct kc_batch *b, struct kc_cmd *cmd, const char **err)
{
	char *text = NULL, *more;
	size_t len = 0;
	ssize_t n;
	int ret;

	cmd->argc = 0;
	cmd->argv = NULL;
	for (;;) {
		n = kc_read_line(b, err);
		if (n == -1 && !text)
			return 0;
		if (n == -1) {
			*err = "the file ends after a backslash";
			ret = KC_SPLIT_ERROR;
			break;
		}
		if (n < 0) {
			cmd->line = b->line;
			free(text);
			return -1;
		}
		if (!text)
			cmd->line = b->line;
		more = realloc(text, len + n + 1);
		if (!more) {
			*err = "out of memory";
			ret = KC_SPLIT_ERROR;
			break;
		}
		text = more;
		memcpy(text + len, b->buf, n + 1);
		len += n;
		ret = kc_split(text, cmd, err);
		if (ret == KC_SPLIT_MORE) {
			/* Drop the backslash; the next line takes its place. */
			text[--len] = '\0';
			continue;
		}
		if (ret == KC_SPLIT_OK && !cmd->argc) {
			kc_cmd_free(cmd);
			free(text);
			text = NULL;
			len = 0;
			continue;
		}
		break;
	}
	free(text);
	return ret == KC_SPLIT_OK ? 1 : -1;
}

void kc_batch_free(struct kc_batch *b)
{
	free(b->buf);
	b->buf = NULL;
	b->size = 0;
}

void kc_quote(FILE *f, const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("@%+=:,./_-", *p))
			break;
	if (*s && !*p) {
		fputs(s, f);
		return;
	}
	/* In '...', all is kept but the quote itself: '\'' closes, adds, opens. */
	putc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			putc(*s, f);
	}
	putc('\'', f);
}
