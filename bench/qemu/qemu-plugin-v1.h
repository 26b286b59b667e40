/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of QEMU's TCG plugin interface, version 1 (QEMU 4.2 to 7.2),
 * that kwebicount.c uses, declared from its documented ABI so that no
 * QEMU source is needed to build it.
 */
#ifndef KWEB_QEMU_PLUGIN_V1_H
#define KWEB_QEMU_PLUGIN_V1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;

struct qemu_info {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
};

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
		void (*cb)(unsigned int vcpu, void *data),
		enum qemu_plugin_cb_flags flags, void *data);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

#endif /* KWEB_QEMU_PLUGIN_V1_H */
