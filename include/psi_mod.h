/* SPDX-License-Identifier: GPL-2.0 */
/*
 * psi_mod: declarations shared by the module's files.
 */
#ifndef PSI_MOD_H
#define PSI_MOD_H

#include <linux/kprobes.h>
#include <linux/seq_file.h>
#include "psi_mod_compat.h"
#include "psi_mod_logic.h"

/* psi_aggregate.c: per-task and per-CPU state, averaging */
int psim_state_start(void);
void psim_state_stop(void);
int psim_show(struct seq_file *m, enum psim_res res);
u32 psim_underflows(void);
int psim_show_state(struct seq_file *m);

/* The scheduler tracepoints psi_mod attaches to, in attach order. */
struct psim_probe {
	const char *name;
	void *func;
	struct tracepoint *tp;	/* looked up by name at load */
	bool attached;
};

#define PSIM_NR_PROBES	4
extern struct psim_probe psim_probes[PSIM_NR_PROBES];

/*
 * Memory stalls from mm tracepoints, where psi_memstall_*() do not exist;
 * the slots of tracepoints a kernel's config leaves out stay empty.
 */
#define PSIM_NR_MEMSTALL_PROBES	6
extern struct psim_probe psim_memstall_probes[PSIM_NR_MEMSTALL_PROBES];
int psim_kp_memstall_enter(struct kprobe *kp, struct pt_regs *regs);
int psim_kp_memstall_leave(struct kprobe *kp, struct pt_regs *regs);
int psim_krp_exchange_entry(struct kretprobe_instance *ri, struct pt_regs *regs);
int psim_krp_exchange_ret(struct kretprobe_instance *ri, struct pt_regs *regs);
int psim_kp_idle_dead(struct kprobe *kp, struct pt_regs *regs);
#define PSIM_XTIDS_DATA_SIZE	(2 * sizeof(void *))

/* psi_proc.c: the files under /proc */
int psim_proc_create(const char *dir);
void psim_proc_remove(void);

#endif /* PSI_MOD_H */
