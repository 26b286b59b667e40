// SPDX-License-Identifier: GPL-2.0
/*
 * The identity a server looks up and opens files with: the user and group
 * settings (numeric ids; 65534/65534, Debian's nobody/nogroup, by default),
 * with no capabilities and no supplementary groups, as nginx's workers run
 * as www-data. Root's rights would pass a directory only root may search
 * (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) and tell by 403 or 404 what it
 * holds.
 *
 * It is never more than its creator's: the ids are those of the creator's
 * user namespace (ids that do not map there are refused), and a creator
 * without CAP_SETUID (CAP_SETGID) there may only name one of its own uids
 * (gids), as setfsuid() allows. The cred is a copy of the creator's without
 * its capabilities, groups and keyrings; the LSM label stays the creator's,
 * so a confined creator's listener is as confined (the kernel's own label,
 * that of prepare_kernel_cred(NULL), would be unconfined).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <linux/uidgid.h>

#include "kweb.h"

/* Into the extack, or at module load (none) into dmesg. */
#define KWEB_IDENT_ERR(extack, msg) do {			\
		NL_SET_ERR_MSG(extack, msg);			\
		if (!(extack))					\
			pr_err("user=%u group=%u: %s\n", user,	\
			       group, msg);			\
	} while (0)

/* Gives new the ids of user and group and nothing else, or says why not. */
static int kweb_ident_set(const struct kweb_ident *id, struct cred *new,
			  u32 user, u32 group,
			  struct netlink_ext_ack *extack)
{
	const struct cred *c = id->base;
	kuid_t uid = make_kuid(c->user_ns, user);
	kgid_t gid = make_kgid(c->user_ns, group);
	struct group_info *none;

	if (!uid_valid(uid) || !gid_valid(gid)) {
		KWEB_IDENT_ERR(extack,
			       "user or group does not map in the listener creator's user namespace");
		return -EINVAL;
	}
	if (!id->may_setuid && !uid_eq(uid, c->uid) && !uid_eq(uid, c->euid) &&
	    !uid_eq(uid, c->suid) && !uid_eq(uid, c->fsuid)) {
		KWEB_IDENT_ERR(extack,
			       "the listener's creator may not take that user (no CAP_SETUID)");
		return -EPERM;
	}
	if (!id->may_setgid && !gid_eq(gid, c->gid) && !gid_eq(gid, c->egid) &&
	    !gid_eq(gid, c->sgid) && !gid_eq(gid, c->fsgid)) {
		KWEB_IDENT_ERR(extack,
			       "the listener's creator may not take that group (no CAP_SETGID)");
		return -EPERM;
	}
	none = groups_alloc(0);
	if (!none)
		return -ENOMEM;
	set_groups(new, none);
	put_group_info(none);
	new->uid = uid;
	new->euid = uid;
	new->suid = uid;
	new->fsuid = uid;
	new->gid = gid;
	new->egid = gid;
	new->sgid = gid;
	new->fsgid = gid;
	new->cap_inheritable = CAP_EMPTY_SET;
	new->cap_permitted = CAP_EMPTY_SET;
	new->cap_effective = CAP_EMPTY_SET;
	new->cap_bset = CAP_EMPTY_SET;
	new->cap_ambient = CAP_EMPTY_SET;
	return 0;
}

const struct cred *kweb_ident_prepare(const struct kweb_ident *id, u32 user,
				      u32 group, struct netlink_ext_ack *extack)
{
	const struct cred *old;
	struct cred *new;
	int err;

	/* prepare_creds() copies the subjective creds: base's, here. */
	old = override_creds(id->base);
	new = prepare_creds();
	revert_creds(old);
	if (!new)
		return ERR_PTR(-ENOMEM);
	err = kweb_ident_set(id, new, user, group, extack);
	if (err) {
		abort_creds(new);
		return ERR_PTR(err);
	}
	return new;
}

int kweb_ident_init(struct kweb_ident *id, u32 user, u32 group,
		    struct netlink_ext_ack *extack)
{
	const struct cred *cred;
	struct cred *base;

	/* current is the creator: insmod, or a netlink caller. */
	id->may_setuid = ns_capable(current_user_ns(), CAP_SETUID);
	id->may_setgid = ns_capable(current_user_ns(), CAP_SETGID);
	/* The creator's, without its keyrings (see prepare_kernel_cred()). */
	base = prepare_kernel_cred(current);
	if (!base)
		return -ENOMEM;
	/* Only copied from, never used: still, nothing of root's power. */
	base->cap_inheritable = CAP_EMPTY_SET;
	base->cap_permitted = CAP_EMPTY_SET;
	base->cap_effective = CAP_EMPTY_SET;
	base->cap_bset = CAP_EMPTY_SET;
	base->cap_ambient = CAP_EMPTY_SET;
	id->base = base;
	cred = kweb_ident_prepare(id, user, group, extack);
	if (IS_ERR(cred)) {
		put_cred(id->base);
		id->base = NULL;
		return PTR_ERR(cred);
	}
	RCU_INIT_POINTER(id->cred, cred);
	id->next = NULL;
	return 0;
}

void kweb_ident_replace(struct kweb_ident *id, const struct cred *cred)
{
	const struct cred *old;

	old = rcu_replace_pointer(id->cred, cred,
				  lockdep_is_held(&kweb_ctl_mutex));
	/* put_cred() frees after a grace period: readers may still get it. */
	put_cred(old);
}

const struct cred *kweb_ident_get(struct kweb_ident *id)
{
	const struct cred *cred;

	rcu_read_lock();
	do {
		cred = rcu_dereference(id->cred);
	} while (!get_cred_rcu(cred));
	rcu_read_unlock();
	return cred;
}

void kweb_ident_exit(struct kweb_ident *id)
{
	if (id->next)
		put_cred(id->next);
	put_cred(rcu_dereference_protected(id->cred, true));
	put_cred(id->base);
}
