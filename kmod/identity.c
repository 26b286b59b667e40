// SPDX-License-Identifier: GPL-2.0
/*
 * The identity a server looks up and opens files with: the user and group
 * settings (numeric ids; 65534/65534, Debian's nobody/nogroup, by default),
 * with no capabilities and no supplementary groups, as nginx's workers run
 * as www-data. Root's rights would pass a directory only root may search
 * (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) and tell by 403 or 404 what it
 * holds.
 *
 * The ids are those of the user namespace that owns the server's network
 * namespace, whose settings they are (ids that do not map there are
 * refused). The identity is never more than its creator's, nor more than
 * what whoever changes it later (config-set) could take: each may name an
 * id of its own, as setfsuid() allows, or, with CAP_SETUID (CAP_SETGID)
 * in its own user namespace, an id that maps there, as setuid() allows.
 * So CAP_NET_ADMIN over a namespace never opens more files than its
 * holder could. The cred is a copy of the creator's without its
 * capabilities, groups and keyrings; the LSM label stays the creator's,
 * so a confined creator's listener is as confined (the kernel's own
 * label, that of prepare_kernel_cred(NULL), would be unconfined).
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

/* Could a task of c's, or with c's setuid rights, take uid (gid)? */
static bool kweb_may_uid(const struct cred *c, bool may_setuid, kuid_t uid)
{
	return uid_eq(uid, c->uid) || uid_eq(uid, c->euid) ||
	       uid_eq(uid, c->suid) || uid_eq(uid, c->fsuid) ||
	       (may_setuid && kuid_has_mapping(c->user_ns, uid));
}

static bool kweb_may_gid(const struct cred *c, bool may_setgid, kgid_t gid)
{
	return gid_eq(gid, c->gid) || gid_eq(gid, c->egid) ||
	       gid_eq(gid, c->sgid) || gid_eq(gid, c->fsgid) ||
	       (may_setgid && kgid_has_mapping(c->user_ns, gid));
}

int kweb_ident_check(struct user_namespace *owner, u32 user, u32 group,
		     struct netlink_ext_ack *extack)
{
	const struct cred *caller = current_cred();
	kuid_t uid = make_kuid(owner, user);
	kgid_t gid = make_kgid(owner, group);

	if (!uid_valid(uid) || !gid_valid(gid)) {
		KWEB_IDENT_ERR(extack,
			       "user or group does not map in the network namespace's user namespace");
		return -EINVAL;
	}
	if (!kweb_may_uid(caller, ns_capable(caller->user_ns, CAP_SETUID),
			  uid)) {
		KWEB_IDENT_ERR(extack,
			       "the caller may not take that user (no CAP_SETUID)");
		return -EPERM;
	}
	if (!kweb_may_gid(caller, ns_capable(caller->user_ns, CAP_SETGID),
			  gid)) {
		KWEB_IDENT_ERR(extack,
			       "the caller may not take that group (no CAP_SETGID)");
		return -EPERM;
	}
	return 0;
}

/* Gives new the ids of user and group and nothing else, or says why not. */
static int kweb_ident_set(const struct kweb_ident *id, struct cred *new,
			  u32 user, u32 group,
			  struct netlink_ext_ack *extack)
{
	kuid_t uid = make_kuid(id->owner, user);
	kgid_t gid = make_kgid(id->owner, group);
	struct group_info *none;
	int err;

	err = kweb_ident_check(id->owner, user, group, extack);
	if (err)
		return err;
	if (!kweb_may_uid(id->base, id->may_setuid, uid)) {
		KWEB_IDENT_ERR(extack,
			       "the listener's creator may not take that user (no CAP_SETUID)");
		return -EPERM;
	}
	if (!kweb_may_gid(id->base, id->may_setgid, gid)) {
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

int kweb_ident_init(struct kweb_ident *id, struct user_namespace *owner,
		    u32 user, u32 group, struct netlink_ext_ack *extack)
{
	const struct cred *cred;
	struct cred *base;

	id->owner = owner;
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
