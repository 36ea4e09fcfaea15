/* SPDX-License-Identifier: GPL-2.0 */
/* stand-in: the sched tracepoints psi_mod probes */
#include "../../shim.h"

#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 18, 0)
SHIM_DECLARE_TRACE(sched_switch, bool preempt, struct task_struct *prev,
		   struct task_struct *next);
#else
SHIM_DECLARE_TRACE(sched_switch, bool preempt, struct task_struct *prev,
		   struct task_struct *next, unsigned int prev_state);
#endif
SHIM_DECLARE_TRACE(sched_wakeup, struct task_struct *p);
SHIM_DECLARE_TRACE(sched_wakeup_new, struct task_struct *p);
SHIM_DECLARE_TRACE(sched_migrate_task, struct task_struct *p, int dest_cpu);
