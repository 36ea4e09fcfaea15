// SPDX-License-Identifier: GPL-2.0
/*
 * QEMU TCG plugin for the overhead benchmark: counts executed guest
 * instructions and reports the running count at marker instructions.
 *
 * Plugin API version 1 (Debian 12's QEMU 7.2 accepts -plugin but ships no
 * header, so the few declarations needed are written out here).
 *
 * - Every translated block adds its instruction count to one counter, inline,
 *   when it is entered (as ../shared/tools/insncount.c does). Use one vCPU,
 *   or several run in turn by one host thread (-accel tcg,thread=single):
 *   the add is not atomic.
 * - A marker is the 7-byte no-op `nopl 0x4d495350(%rax)` (0f 1f 80 50 53 49 4d,
 *   "PSIM" as its displacement), executed by the guest helper bench/brun.c
 *   right before and right after each hackbench run. At each marker the plugin
 *   prints `@@MARK <n> <count> <host ns>`; the host subtracts consecutive marks, so a
 *   run's count covers exactly that run (boot and setup excluded). The count
 *   includes the whole block the marker sits in (error: a few instructions).
 *   The third field is the host's CLOCK_MONOTONIC in ns: with -icount the
 *   guest clock is virtual, so the run's wall time is taken here.
 * - At exit it prints `@@INSNS <total>` (the whole boot, as the shared tool).
 * - With the argument prof=on (`-plugin ./libinsncount.so,prof=on`) it also
 *   profiles: every block start address keeps its own execution count
 *   (an inline add per block, as above), cleared at even markers (a run's
 *   start) and printed at odd ones (its end) as `@@PROF <mark> <address>
 *   <instructions>` for every block executed in between. bench/profile.py
 *   folds the addresses into functions (the kernel's /proc/kallsyms, which
 *   the guest writes to its disk, and the module's lines of it).
 *
 * Build: gcc -shared -fPIC -O2 -o libinsncount.so insncount.c
 * Use:   qemu-system-x86_64 ... -plugin ./libinsncount.so -d plugin -D FILE
 */
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
		enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
		qemu_plugin_vcpu_udata_cb_t cb, enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t, void *), void *userdata);
void qemu_plugin_outs(const char *s);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static const unsigned char marker[7] = { 0x0f, 0x1f, 0x80, 'P', 'S', 'I', 'M' };
static uint64_t insns;
static uint64_t marks;

/*
 * Profile: one entry per (block start, length); a block translated again
 * finds its entry, so the inline add of every translation lands in one
 * counter. Open addressing, never shrinks (a boot has some 10^5 blocks).
 */
struct blk {
	uint64_t vaddr;
	uint64_t n;
	uint64_t execs;
};
static int prof;
static struct blk **tab;
static size_t tab_size, tab_used;

static size_t blk_hash(uint64_t vaddr, uint64_t n)
{
	return (size_t)((vaddr * 0x9e3779b97f4a7c15ULL) ^ n) & (tab_size - 1);
}

static struct blk *blk_get(uint64_t vaddr, uint64_t n)
{
	size_t i;

	if ((tab_used + 1) * 2 > tab_size) {
		struct blk **old = tab;
		size_t j, old_size = tab_size;

		tab_size = tab_size ? tab_size * 2 : 1 << 16;
		tab = calloc(tab_size, sizeof(*tab));
		if (!tab)
			abort();
		for (j = 0; j < old_size; j++) {
			if (!old[j])
				continue;
			for (i = blk_hash(old[j]->vaddr, old[j]->n); tab[i]; i = (i + 1) & (tab_size - 1))
				;
			tab[i] = old[j];
		}
		free(old);
	}
	for (i = blk_hash(vaddr, n); tab[i]; i = (i + 1) & (tab_size - 1))
		if (tab[i]->vaddr == vaddr && tab[i]->n == n)
			return tab[i];
	tab[i] = calloc(1, sizeof(struct blk));
	if (!tab[i])
		abort();
	tab[i]->vaddr = vaddr;
	tab[i]->n = n;
	tab_used++;
	return tab[i];
}

static void prof_mark(uint64_t mark)
{
	char buf[96];
	size_t i;

	for (i = 0; i < tab_size; i++) {
		if (!tab[i] || !tab[i]->execs)
			continue;
		if (mark & 1) {
			snprintf(buf, sizeof(buf), "@@PROF %llu %llx %llu\n",
				 (unsigned long long)mark,
				 (unsigned long long)tab[i]->vaddr,
				 (unsigned long long)(tab[i]->execs * tab[i]->n));
			qemu_plugin_outs(buf);
		}
		tab[i]->execs = 0;
	}
}

static void at_marker(unsigned int vcpu, void *udata)
{
	char buf[96];
	struct timespec ts;

	(void)vcpu;
	(void)udata;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(buf, sizeof(buf), "@@MARK %llu %llu %llu\n",
		 (unsigned long long)marks++, (unsigned long long)insns,
		 (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
	qemu_plugin_outs(buf);
	if (prof)
		prof_mark(marks - 1);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns, n);
	if (prof)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
			&blk_get(qemu_plugin_tb_vaddr(tb), n)->execs, 1);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (qemu_plugin_insn_size(insn) == sizeof(marker) &&
		    !memcmp(qemu_plugin_insn_data(insn), marker, sizeof(marker)))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, at_marker,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	char buf[64];

	(void)id;
	(void)p;
	snprintf(buf, sizeof(buf), "@@INSNS %llu\n", (unsigned long long)insns);
	qemu_plugin_outs(buf);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strcmp(argv[i], "prof=on"))
			prof = 1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
