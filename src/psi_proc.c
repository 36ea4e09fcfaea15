// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: the files. /proc/<proc_dir>/{cpu,io,memory} in the kernel's
 * format (psi_show() in kernel/sched/psi.c), and the debug view
 * /sys/kernel/debug/psi_mod/state.
 *
 * Unload safety: proc_remove() waits for every read in progress and calls
 * ->proc_release for files still open, after which their reads fail with
 * -EIO inside procfs without entering this module again. debugfs_remove()
 * gives the same guarantee for the debug file.
 */
#include <linux/debugfs.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/poll.h>
#include <linux/printk.h>

#include "psi_mod.h"

static struct proc_dir_entry *psim_dir;
static struct dentry *psim_debug_dir;

static int psim_pressure_show(struct seq_file *m, enum psim_res res)
{
	unsigned long avg[2][3];
	u64 total[2];
	int full;

	psim_aggregate_read(res, avg, total);
	for (full = 0; full < 2; full++) {
		/* CPU FULL is undefined at the system level: zeros. */
		if (res == PSIM_CPU && full) {
			memset(avg[full], 0, sizeof(avg[full]));
			total[full] = 0;
		}
		seq_printf(m, "%s avg10=%lu.%02lu avg60=%lu.%02lu avg300=%lu.%02lu total=%llu\n",
			   full ? "full" : "some",
			   PSIM_LOAD_INT(avg[full][0]),
			   PSIM_LOAD_FRAC(avg[full][0]),
			   PSIM_LOAD_INT(avg[full][1]),
			   PSIM_LOAD_FRAC(avg[full][1]),
			   PSIM_LOAD_INT(avg[full][2]),
			   PSIM_LOAD_FRAC(avg[full][2]),
			   div_u64(total[full], NSEC_PER_USEC));
	}
	return 0;
}

static int psim_io_show(struct seq_file *m, void *v)
{
	return psim_pressure_show(m, PSIM_IO);
}

static int psim_memory_show(struct seq_file *m, void *v)
{
	return psim_pressure_show(m, PSIM_MEM);
}

static int psim_cpu_show(struct seq_file *m, void *v)
{
	return psim_pressure_show(m, PSIM_CPU);
}

static int psim_io_open(struct inode *inode, struct file *file)
{
	return single_open(file, psim_io_show, NULL);
}

static int psim_memory_open(struct inode *inode, struct file *file)
{
	return single_open(file, psim_memory_show, NULL);
}

static int psim_cpu_open(struct inode *inode, struct file *file)
{
	return single_open(file, psim_cpu_show, NULL);
}

/*
 * The kernel's files are 0666 because a write creates a trigger. psi_mod
 * keeps the modes consumers expect but does not implement triggers yet:
 * refuse every write, and say why once.
 */
static ssize_t psim_write(struct file *file, const char __user *buf,
			  size_t nbytes, loff_t *ppos)
{
	pr_notice_once("pressure triggers are not supported yet: writes to the pressure files are refused\n");
	return -EOPNOTSUPP;
}

/*
 * poll() on a file without a trigger: readable, writable, and EPOLLERR |
 * EPOLLPRI at once, as the kernel's psi_trigger_poll() answers, so that a
 * consumer that polls for pressure events never sleeps on a file that
 * cannot give one.
 */
static __poll_t psim_poll(struct file *file, poll_table *wait)
{
	return DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI;
}

#define PSIM_PROC_OPS(res)					\
	static const struct proc_ops psim_##res##_ops = {	\
		.proc_open	= psim_##res##_open,		\
		.proc_read	= seq_read,			\
		.proc_lseek	= seq_lseek,			\
		.proc_write	= psim_write,			\
		.proc_poll	= psim_poll,			\
		.proc_release	= single_release,		\
	}

/* The kernel's own modes (see the note on psim_write()). */
#define PSIM_FILE_MODE	0666

PSIM_PROC_OPS(io);
PSIM_PROC_OPS(memory);
PSIM_PROC_OPS(cpu);

/*
 * The raw state, for tests and for debugging: the task counts of every
 * CPU, the underflow count (must stay 0), and how often the periodic
 * aggregation ran.
 */
static int psim_debug_state_show(struct seq_file *m, void *v)
{
	struct psim_aggregate_debug ag;
	int cpu, i;

	for_each_possible_cpu(cpu) {
		struct psim_cpu_debug d;

		psim_cpu_debug(cpu, &d);
		seq_printf(m, "cpu%d iowait=%u memstall=%u running=%u memstall_running=%u oncpu=%u curr_memstall=%u states=0x%02x underflows=%u relocations=%u dead_kprobe=%u dead_callback=%u\n",
			   cpu, d.st.tasks[PSIM_NR_IOWAIT],
			   d.st.tasks[PSIM_NR_MEMSTALL],
			   d.st.tasks[PSIM_NR_RUNNING],
			   d.st.tasks[PSIM_NR_MEMSTALL_RUNNING], d.st.oncpu,
			   d.st.curr_memstall, d.st.state_mask,
			   d.st.underflows, d.relocations, d.dead_kprobe,
			   d.dead_callback);
	}
	psim_aggregate_debug(&ag);
	seq_printf(m, "avgs_work_runs %lu\n", ag.runs);
	/* of those, on the timer that wakes an idle CPU */
	seq_printf(m, "avgs_work_wake_runs %lu\n", ag.wake_runs);
	/* the latest fold after its grid point, over lag_folds timed folds */
	seq_printf(m, "avgs_lag_max_us %llu\n",
		   div_u64(ag.lag_max, NSEC_PER_USEC));
	seq_printf(m, "avgs_lag_folds %lu\n", ag.lag_folds);
	/* the latest PSIM_NR_LAGS of them, oldest first */
	seq_puts(m, "avgs_lags_us");
	for (i = 0; i < PSIM_NR_LAGS && i < ag.lag_folds; i++)
		seq_printf(m, " %u", ag.lags[(ag.lag_folds + i -
					      min_t(unsigned long, ag.lag_folds,
						    PSIM_NR_LAGS)) %
					     PSIM_NR_LAGS]);
	seq_putc(m, '\n');
	/* warm-up weights (204800 = 100%: the kernel's arithmetic) */
	seq_printf(m, "avg_seen %lu %lu %lu\n", ag.seen[0], ag.seen[1],
		   ag.seen[2]);
	seq_printf(m, "avgs_work_pending %d\n", ag.pending);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(psim_debug_state);

int psim_proc_create(const char *name)
{
	psim_dir = proc_mkdir(name, NULL);
	if (!psim_dir)
		return -ENOMEM;
	if (!proc_create("io", PSIM_FILE_MODE, psim_dir, &psim_io_ops) ||
	    !proc_create("memory", PSIM_FILE_MODE, psim_dir, &psim_memory_ops) ||
	    !proc_create("cpu", PSIM_FILE_MODE, psim_dir, &psim_cpu_ops)) {
		psim_proc_remove();
		return -ENOMEM;
	}
	/* Debug aid only: a failure here is not worth failing the load. */
	psim_debug_dir = debugfs_create_dir("psi_mod", NULL);
	debugfs_create_file("state", 0400, psim_debug_dir, NULL,
			    &psim_debug_state_fops);
	return 0;
}

void psim_proc_remove(void)
{
	debugfs_remove(psim_debug_dir);
	psim_debug_dir = NULL;
	proc_remove(psim_dir);
	psim_dir = NULL;
}
