/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kwebctl.c shares with apply.c: the key tables, the builders of the
 * requests that change something (they check a command's words and put
 * its attributes, sending nothing), and messages that name where in a
 * batch file they come from.
 */
#ifndef KWEBCTL_CTL_H
#define KWEBCTL_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

#include "nl.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* KC_UID_NONE: a user, or "none" (KWEB_BACKEND_USER_NONE). */
enum kc_kind { KC_U8, KC_U16, KC_U32, KC_STR, KC_UID, KC_GID, KC_UID_NONE };

/* What "config get" shows and "config set" takes, in uAPI order. */
struct kc_key {
	const char *name;	/* the spec's name */
	uint16_t type;
	enum kc_kind kind;
	bool settable;
};

extern const struct kc_key kc_config[];
extern const size_t kc_nr_config;

/*
 * A listener's own settings: what "listener set" takes and "listener show"
 * prints after its addresses. Those with an inherit flag take "default",
 * to follow config's value of the same name again. dflt is what a new
 * listener has unless told otherwise.
 */
struct kc_lkey {
	const char *name;
	uint16_t type;
	enum kc_kind kind;
	uint32_t inherit;
	const char *dflt;
};

extern const struct kc_lkey kc_listener_keys[];
extern const size_t kc_nr_listener_keys;

const struct kc_key *kc_config_key(const char *name);
const struct kc_lkey *kc_listener_key(const char *name);

/*
 * Put in every message of kc_err() after "kwebctl: ": a batch file's
 * "FILE:LINE: " while its commands are checked; "" otherwise.
 */
extern const char *kc_where;

/* A message on stderr: "kwebctl: ", kc_where, then printf()'s. */
#define kc_err(...) \
	((void)fprintf(stderr, "kwebctl: %s", kc_where), \
	 (void)fprintf(stderr, __VA_ARGS__))

int kc_parse_uint(const char *s, unsigned long max, unsigned long *v,
		  const char *what);

/* VALUE of KEY name, as attribute type of kind; KC_USAGE if it is not one. */
int kc_put_value(struct nlmsghdr *nlh, uint16_t type, enum kc_kind kind,
		 const char *name, const char *val);

/*
 * The attributes of "config set ARGS", "listener add ARGS" and "listener
 * set ID ARGS" (argv: ARGS) into a request for the command; KC_OK, or
 * KC_USAGE with a message.
 */
int kc_config_set_build(struct nlmsghdr *nlh, int argc, char **argv);
int kc_listener_add_build(struct nlmsghdr *nlh, int argc, char **argv);
int kc_listener_set_build(struct nlmsghdr *nlh, unsigned long id, int argc,
			  char **argv);

/* kwebctl -b FILE, kwebctl apply FILE (apply.c). */
int kc_batch(struct kc_nl *nl, const char *file);
int kc_apply(struct kc_nl *nl, const char *file, bool prune, bool dry_run);

#endif /* KWEBCTL_CTL_H */
