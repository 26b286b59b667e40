// SPDX-License-Identifier: GPL-2.0
/*
 * kwebicount: a QEMU TCG plugin that counts the guest instructions each
 * vCPU executes, for the benchmark's CPU measure (docs/benchmarking.md).
 *
 *	qemu-system-x86_64 ... -plugin kwebicount.so,out=/dev/shm/F
 *
 * F is a page of counters, one 64-byte slot per vCPU (at most
 * ICOUNT_MAX_VCPUS): the instructions it has executed and the
 * translation blocks, each an aligned u64 that only the vCPU's own thread
 * writes, so that bench/hostcpu.py may read them at any time with plain
 * loads. A halted vCPU executes nothing: an idle CPU counts no
 * instructions, and a vCPU the host preempts counts none either, unlike
 * its time.
 *
 * A block is counted whole when it starts, so one cut short by an
 * exception or interrupt counts the instructions it did not run: a
 * bounded error of at most a block per interruption.
 *
 * Built against QEMU's plugin API version 1 (QEMU 4.2 to 7.2, Debian
 * 12's), whose few calls it uses are declared in qemu-plugin-v1.h.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "qemu-plugin-v1.h"

EXPORT int qemu_plugin_version = 1;

#define ICOUNT_PAGE		4096
#define ICOUNT_MAGIC		0x544e434943424557ULL	/* "WEBCICNT" */
#define ICOUNT_MAX_VCPUS	(ICOUNT_PAGE / 64 - 1)

struct icount_slot {
	uint64_t insns;
	uint64_t blocks;
	uint64_t pad[6];
};

/* The file's layout: a header slot, then a slot per vCPU. */
struct icount_page {
	uint64_t magic;
	uint64_t nr_vcpus;
	uint64_t pad[6];
	struct icount_slot vcpu[ICOUNT_MAX_VCPUS];
};

static struct icount_page *page;

static void icount_exec(unsigned int vcpu, void *data)
{
	struct icount_slot *s;

	if (vcpu >= ICOUNT_MAX_VCPUS)
		return;
	s = &page->vcpu[vcpu];
	/* Relaxed: one writer per slot, read whole by the sampler. */
	__atomic_store_n(&s->insns, s->insns + (uintptr_t)data,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&s->blocks, s->blocks + 1, __ATOMIC_RELAXED);
}

static void icount_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uintptr_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;

	qemu_plugin_register_vcpu_tb_exec_cb(tb, icount_exec,
					     QEMU_PLUGIN_CB_NO_REGS,
					     (void *)n);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
			       const struct qemu_info *info,
			       int argc, char **argv)
{
	const char *file = NULL;
	void *map;
	int i, fd;

	for (i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0)
			file = argv[i] + 4;
	}
	if (!file || !info->system_emulation) {
		fprintf(stderr, "kwebicount: out=PATH, system emulation only\n");
		return -1;
	}
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, ICOUNT_PAGE) < 0) {
		perror(file);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	map = mmap(NULL, ICOUNT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		perror("kwebicount: mmap");
		return -1;
	}
	page = map;
	page->nr_vcpus = info->system.smp_vcpus;
	__atomic_store_n(&page->magic, ICOUNT_MAGIC, __ATOMIC_RELEASE);
	qemu_plugin_register_vcpu_tb_trans_cb(id, icount_trans);
	return 0;
}
