// SPDX-License-Identifier: GPL-2.0
/*
 * kwebicount: a QEMU TCG plugin that counts the guest instructions each
 * vCPU executes, for the benchmark's CPU measure (docs/benchmarking.md).
 *
 *	qemu-system-x86_64 ... -plugin kwebicount.so,out=/dev/shm/F
 *
 * F is a page of counters, one 64-byte slot per vCPU (at most
 * ICOUNT_MAX_VCPUS): the instructions it has executed, the translation
 * blocks, and of those instructions the kernel's and those of an address
 * range the sampler sets (kweb.ko's code). Each is an aligned u64 that
 * only the vCPU's own thread writes, so that bench/hostcpu.py may read
 * them at any time with plain loads. After the page, a record per block
 * translated in the kernel's text (its image and the module area), with
 * how often each of vCPUs 0 and 1 ran it: where the kernel's and a
 * module's instructions go, function by function. A halted vCPU
 * executes nothing: an idle CPU counts no instructions, and a vCPU the
 * host preempts counts none either, unlike its time.
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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "qemu-plugin-v1.h"

EXPORT int qemu_plugin_version = 1;

#define ICOUNT_PAGE		4096
/*
 * After the page: a record per block translated in the kernel's text.
 * A boot and a benchmark translate some 10^5; QEMU translates a block
 * again after a flush of its code cache, into a new record.
 */
#define ICOUNT_BLOCKS		(2 * 1024 * 1024)
#define ICOUNT_FILE		(ICOUNT_PAGE + \
				 ICOUNT_BLOCKS * sizeof(struct icount_tb))
/* x86-64's kernel text and module area: __START_KERNEL_map to MODULES_END. */
#define ICOUNT_TEXT_START	0xffffffff80000000ULL
#define ICOUNT_TEXT_END		0xffffffffff000000ULL
#define ICOUNT_MAGIC		0x544e434943424557ULL	/* "WEBCICNT" */
#define ICOUNT_MAX_VCPUS	(ICOUNT_PAGE / 64 - 1)
/* x86-64: the kernel's half of the address space. */
#define ICOUNT_KERNEL_START	0xffff800000000000ULL

struct icount_slot {
	uint64_t insns;
	uint64_t blocks;
	uint64_t kernel;	/* of insns, in the kernel's half */
	uint64_t range;		/* of insns, in [range_lo, range_hi) */
	uint64_t pad[4];
};

/*
 * The file's layout: a header slot, then a slot per vCPU. The range is
 * the sampler's to set (a module's code, e.g. kweb.ko's): blocks that
 * start in it count there too.
 */
struct icount_page {
	uint64_t magic;
	uint64_t nr_vcpus;
	uint64_t range_lo;
	uint64_t range_hi;
	uint64_t nr_blocks;	/* records in use after the page */
	uint64_t lost_blocks;	/* text blocks with no record left */
	uint64_t pad[2];
	struct icount_slot vcpu[ICOUNT_MAX_VCPUS];
};

/*
 * What a translated block is: where it starts, its size, and (for the
 * kernel text's, kept in the file) how often vCPUs 0 and 1 ran it: a
 * profile of the kernel's code by instructions, for the sampler to read.
 */
struct icount_tb {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t execs[2];
};

static struct icount_page *page;
static struct icount_tb *blocks;

static inline void icount_add(uint64_t *c, uint64_t n)
{
	/* Relaxed: one writer per slot, read whole by the sampler. */
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

static void icount_exec(unsigned int vcpu, void *data)
{
	struct icount_tb *tb = data;
	struct icount_slot *s;
	uint64_t lo, hi;

	if (vcpu >= ICOUNT_MAX_VCPUS)
		return;
	s = &page->vcpu[vcpu];
	icount_add(&s->insns, tb->insns);
	icount_add(&s->blocks, 1);
	if (tb->vaddr < ICOUNT_KERNEL_START)
		return;
	icount_add(&s->kernel, tb->insns);
	if (tb >= blocks && tb < blocks + ICOUNT_BLOCKS && vcpu < 2)
		icount_add(&tb->execs[vcpu], 1);
	lo = __atomic_load_n(&page->range_lo, __ATOMIC_RELAXED);
	hi = __atomic_load_n(&page->range_hi, __ATOMIC_RELAXED);
	if (tb->vaddr >= lo && tb->vaddr < hi)
		icount_add(&s->range, tb->insns);
}

static struct icount_tb *icount_tb_new(uint64_t vaddr)
{
	uint64_t n;

	if (vaddr >= ICOUNT_TEXT_START && vaddr < ICOUNT_TEXT_END) {
		/* Filled before the count is raised: the sampler reads n. */
		n = __atomic_load_n(&page->nr_blocks, __ATOMIC_RELAXED);
		while (n < ICOUNT_BLOCKS) {
			if (__atomic_compare_exchange_n(&page->nr_blocks, &n,
							n + 1, false,
							__ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED))
				return &blocks[n];
		}
		__atomic_fetch_add(&page->lost_blocks, 1, __ATOMIC_RELAXED);
	}
	/*
	 * Never freed: QEMU keeps no hook for a block's end, and a
	 * benchmark's translations are a few MB of these at most.
	 */
	return calloc(1, sizeof(struct icount_tb));
}

static void icount_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct icount_tb *t = icount_tb_new(vaddr);

	(void)id;
	if (!t)
		return;
	t->insns = qemu_plugin_tb_n_insns(tb);
	__atomic_store_n(&t->vaddr, vaddr, __ATOMIC_RELEASE);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, icount_exec,
					     QEMU_PLUGIN_CB_NO_REGS, t);
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
	if (fd < 0 || ftruncate(fd, ICOUNT_FILE) < 0) {
		perror(file);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	map = mmap(NULL, ICOUNT_FILE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		perror("kwebicount: mmap");
		return -1;
	}
	page = map;
	blocks = (struct icount_tb *)((char *)map + ICOUNT_PAGE);
	page->nr_vcpus = info->system.smp_vcpus;
	__atomic_store_n(&page->magic, ICOUNT_MAGIC, __ATOMIC_RELEASE);
	qemu_plugin_register_vcpu_tb_trans_cb(id, icount_trans);
	return 0;
}
