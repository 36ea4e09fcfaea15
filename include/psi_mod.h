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

void psim_probe_switch(PSIM_SWITCH_PROTO(data, preempt, prev, next));
void psim_probe_wakeup(void *data, struct task_struct *p);
void psim_probe_wakeup_new(void *data, struct task_struct *p);
void psim_probe_migrate(void *data, struct task_struct *p, int dest_cpu);
int psim_kp_memstall_enter(struct kprobe *kp, struct pt_regs *regs);
int psim_kp_memstall_leave(struct kprobe *kp, struct pt_regs *regs);

/* psi_proc.c: the files under /proc */
int psim_proc_create(const char *dir);
void psim_proc_remove(void);

#endif /* PSI_MOD_H */
