// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: the files. /proc/<proc_dir>/{cpu,io,memory} in the kernel's
 * format (psi_show() in kernel/sched/psi.c), with the kernel's trigger
 * write/poll (psi_triggers.c), and the debug view
 * /sys/kernel/debug/psi_mod/state.
 *
 * Unload safety: proc_remove() waits for every file operation in progress
 * and calls ->proc_release for files still open, after which their reads
 * and writes fail with -EIO inside procfs (and poll answers
 * DEFAULT_POLLMASK) without entering this module again. That release
 * destroys a trigger whose pollers may still sleep on its wait queue, so
 * psim_triggers_shutdown() comes first (psi_triggers.c).
 * debugfs_remove() gives the same guarantee for the debug file.
 *
 * proc_remove()'s wait for the operations in progress has no bound, so
 * no operation of the pressure files may wait on user space: the copies
 * to and from the caller's buffer run with page faults disabled, and a
 * page that is not there is brought in here only where that cannot wait
 * on a process (psim_fault_in()). The debug file is root's alone.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/hugetlb_inline.h>
#include <linux/magic.h>
#include <linux/mm.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/poll.h>
#include <linux/printk.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "psi_mod.h"

static struct proc_dir_entry *psim_dir;
static struct dentry *psim_debug_dir;
/* the files are being removed: a copy waiting for the mm gives up */
static bool psim_files_closing;
/* irq=1: irq files too, system-wide and per cgroup */
static bool psim_proc_irq;

/* The files' names: the kernel's resource names */
static const char * const psim_res_names[PSIM_NR_RES] = {
	[PSIM_IO] = "io", [PSIM_MEM] = "memory", [PSIM_CPU] = "cpu",
	[PSIM_IRQ] = "irq",
};

/*
 * Whether a fault on @vma can only wait on the kernel (memory, swap, a
 * block device), not on a process. Not so for a file of a filesystem that
 * unprivileged users may mount (FS_USERNS_MOUNT: FUSE, whose page reads a
 * process answers, or never does), the memory filesystems apart; nor for
 * a special mapping with a fault handler of its own.
 */
static bool psim_vma_fault_bounded(struct vm_area_struct *vma)
{
	struct super_block *sb;

	if (vma_is_anonymous(vma) || is_vm_hugetlb_page(vma))
		return true;
	if (!vma->vm_file)
		return false;
	sb = file_inode(vma->vm_file)->i_sb;
	return !(sb->s_type->fs_flags & FS_USERNS_MOUNT) ||
	       sb->s_magic == TMPFS_MAGIC || sb->s_magic == RAMFS_MAGIC;
}

/*
 * Bring in the caller's page at @addr for a write (@write) or a read, as
 * the faulting access would, if that cannot wait on a process; 0, or
 * -EFAULT (a bad address, or a page that could wait forever), -EIO (the
 * files are going away), -EINTR (a fatal signal). The mm's lock is only
 * tried: a holder of it may itself wait on user space. The fault is not
 * allowed to drop the lock and retry, so the mapping checked is the one
 * faulted, and userfaultfd answers it at once (-EFAULT) instead of
 * waiting for its handler.
 */
static int psim_fault_in(unsigned long addr, bool write)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	int ret = -EFAULT;

	if (!mm)
		return -EFAULT;
	while (!mmap_read_trylock(mm)) {
		if (READ_ONCE(psim_files_closing))
			return -EIO;
		if (fatal_signal_pending(current))
			return -EINTR;
		msleep(20);
	}
	vma = find_vma(mm, addr);
	if (vma && vma->vm_start <= addr) {
		if (psim_vma_fault_bounded(vma))
			ret = fixup_user_fault(mm, addr,
					       write ? FAULT_FLAG_WRITE : 0,
					       NULL);
		else
			pr_warn_once("a read or write of the pressure files with its buffer in a mapping of a user-mountable filesystem's file (FUSE): EFAULT unless the page is present\n");
	}
	mmap_read_unlock(mm);
	return ret;
}

/* Between the retries of a copy: give up on a stop or a fatal signal. */
static int psim_copy_retry(unsigned long addr, bool write)
{
	if (READ_ONCE(psim_files_closing))
		return -EIO;
	if (fatal_signal_pending(current))
		return -EINTR;
	cond_resched();
	return psim_fault_in(addr, write);
}

/*
 * copy_from_user() for the files' writes: 0 or an error of
 * psim_fault_in(), never a wait on user space.
 */
int psim_copy_from_user(void *dst, const void __user *src, size_t len)
{
	unsigned long left;
	int ret;

	for (;;) {
		pagefault_disable();
		left = copy_from_user(dst, src, len);
		pagefault_enable();
		if (!left)
			return 0;
		ret = psim_copy_retry((unsigned long)src + len - left, false);
		if (ret)
			return ret;
	}
}

/*
 * seq_read() for the pressure files, with the copy to the caller's buffer
 * under pagefault_disable(): a copy cut short by a missing page leaves the
 * rest in the seq_file's buffer (seq_read_iter()), the page is brought in
 * (psim_fault_in()) and the read goes on where it stopped. So the caller
 * gets what seq_read() would give, a short count or -EFAULT on a bad
 * address included; another seq_read() call after a short one finds the
 * end (0) or the rest.
 */
static ssize_t psim_read(struct file *file, char __user *buf, size_t count,
			 loff_t *ppos)
{
	ssize_t ret, done = 0;
	int err;

	while (done < count) {
		pagefault_disable();
		ret = seq_read(file, buf + done, count - done, ppos);
		pagefault_enable();
		if (ret > 0) {
			done += ret;
			continue;
		}
		if (ret != -EFAULT)
			return done ? done : ret;
		err = psim_copy_retry((unsigned long)buf + done, true);
		if (err)
			return done ? done : err;
	}
	return done;
}

/* A "some" or "full" line in the kernel's format (psi_show()). */
static void psim_show_line(struct seq_file *m, int full,
			   const unsigned long avg[3], u64 total)
{
	seq_printf(m, "%s avg10=%lu.%02lu avg60=%lu.%02lu avg300=%lu.%02lu total=%llu\n",
		   full ? "full" : "some",
		   PSIM_LOAD_INT(avg[0]), PSIM_LOAD_FRAC(avg[0]),
		   PSIM_LOAD_INT(avg[1]), PSIM_LOAD_FRAC(avg[1]),
		   PSIM_LOAD_INT(avg[2]), PSIM_LOAD_FRAC(avg[2]),
		   div_u64(total, NSEC_PER_USEC));
}

static int psim_pressure_show(struct seq_file *m, enum psim_res res)
{
	unsigned long avg[2][3];
	u64 total[2];
	int full;

	psim_aggregate_read(res, avg, total);
	/* irq has only its full line, cpu its some line before 5.13 */
	for (full = res == PSIM_IRQ;
	     full < 2 - (res == PSIM_CPU && !PSIM_CPU_FULL_LINE); full++) {
		/* CPU FULL is undefined at the system level: zeros. */
		if (res == PSIM_CPU && full) {
			memset(avg[full], 0, sizeof(avg[full]));
			total[full] = 0;
		}
		psim_show_line(m, full, avg[full], total[full]);
	}
	return 0;
}

/*
 * The per-CPU view, <proc_dir>/percpu/{cpu,io,memory}: per online CPU its
 * two lines, each after a column "cpu<N>". Strip that column and the rest
 * is the system-wide file's format. A CPU's cpu full is its own (time
 * with tasks runnable and none running), not zeroed as system-wide.
 */
static void psim_percpu_line(void *arg, int cpu, unsigned long avg[2][3],
			     u64 total[2])
{
	struct seq_file *m = arg;
	int full;

	for (full = (long)m->private == PSIM_IRQ; full < 2; full++) {
		seq_printf(m, "cpu%d ", cpu);
		psim_show_line(m, full, avg[full], total[full]);
	}
}

static int psim_percpu_show(struct seq_file *m, void *v)
{
	psim_aggregate_read_percpu((enum psim_res)(long)m->private,
				   psim_percpu_line, m);
	return 0;
}

static int psim_percpu_open(struct inode *inode, struct file *file)
{
	return single_open(file, psim_percpu_show, psim_pde_data(inode));
}

/* No triggers on the per-CPU files: a write is refused, with the reason. */
static ssize_t psim_percpu_write(struct file *file, const char __user *buf,
				 size_t nbytes, loff_t *ppos)
{
	pr_warn_once("the per-CPU files take no triggers; write them to the system-wide files in <proc_dir>\n");
	return -EINVAL;
}

static const struct proc_ops psim_percpu_ops = {
	.proc_open	= psim_percpu_open,
	.proc_read	= psim_read,
	.proc_lseek	= seq_lseek,
	.proc_write	= psim_percpu_write,
	.proc_release	= single_release,
};

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

static int psim_irq_show(struct seq_file *m, void *v)
{
	return psim_pressure_show(m, PSIM_IRQ);
}

/*
 * An open pressure file (the seq_file's private): its group (NULL: the
 * system's) and the trigger written to it, under the seq_file's lock.
 */
struct psim_pfile {
	struct psim_cgroup *g;
	struct psim_trigger *t;
};

static int psim_pfile_open(struct file *file,
			   int (*show)(struct seq_file *m, void *v),
			   struct psim_cgroup *g)
{
	struct psim_pfile *pf = kzalloc(sizeof(*pf), GFP_KERNEL_ACCOUNT);
	int ret;

	if (!pf)
		return -ENOMEM;
	pf->g = g;
	ret = single_open(file, show, pf);
	if (ret)
		kfree(pf);
	return ret;
}

static struct psim_pfile *psim_pfile(struct file *file)
{
	return ((struct seq_file *)file->private_data)->private;
}

static int psim_io_open(struct inode *inode, struct file *file)
{
	return psim_pfile_open(file, psim_io_show, NULL);
}

static int psim_memory_open(struct inode *inode, struct file *file)
{
	return psim_pfile_open(file, psim_memory_show, NULL);
}

static int psim_cpu_open(struct inode *inode, struct file *file)
{
	return psim_pfile_open(file, psim_cpu_show, NULL);
}

static int psim_irq_open(struct inode *inode, struct file *file)
{
	return psim_pfile_open(file, psim_irq_show, NULL);
}

/*
 * The files have the kernel's modes (PSIM_FILE_MODE): a write creates the
 * descriptor's pressure trigger, poll() waits for its events
 * (psi_triggers.c), in the set of the file's group.
 */
static ssize_t psim_pfile_write(struct file *file, const char __user *buf,
				size_t nbytes, enum psim_res res)
{
	struct psim_pfile *pf = psim_pfile(file);

	return psim_trigger_write(file, buf, nbytes, res, pf->g, &pf->t);
}

static ssize_t psim_io_write(struct file *file, const char __user *buf,
			     size_t nbytes, loff_t *ppos)
{
	return psim_pfile_write(file, buf, nbytes, PSIM_IO);
}

static ssize_t psim_memory_write(struct file *file, const char __user *buf,
				 size_t nbytes, loff_t *ppos)
{
	return psim_pfile_write(file, buf, nbytes, PSIM_MEM);
}

static ssize_t psim_cpu_write(struct file *file, const char __user *buf,
			      size_t nbytes, loff_t *ppos)
{
	return psim_pfile_write(file, buf, nbytes, PSIM_CPU);
}

static ssize_t psim_irq_write(struct file *file, const char __user *buf,
			      size_t nbytes, loff_t *ppos)
{
	return psim_pfile_write(file, buf, nbytes, PSIM_IRQ);
}

/*
 * poll(): without a trigger, readable, writable, and EPOLLERR | EPOLLPRI at
 * once, as the kernel's psi_trigger_poll() answers, so that a consumer
 * never sleeps on a file that cannot give an event; with one, EPOLLPRI
 * per event.
 */
static __poll_t psim_poll(struct file *file, poll_table *wait)
{
	return psim_trigger_poll(&psim_pfile(file)->t, file, wait);
}

/* The last close, or proc_remove() closing a file still open. */
static int psim_release(struct inode *inode, struct file *file)
{
	struct psim_pfile *pf = psim_pfile(file);
	int ret;

	psim_trigger_release(&pf->t);
	ret = single_release(inode, file);
	kfree(pf);
	return ret;
}

#define PSIM_PROC_OPS(res)					\
	static const struct proc_ops psim_##res##_ops = {	\
		.proc_open	= psim_##res##_open,		\
		.proc_read	= psim_read,			\
		.proc_lseek	= seq_lseek,			\
		.proc_write	= psim_##res##_write,		\
		.proc_poll	= psim_poll,			\
		.proc_release	= psim_release,			\
	}

/*
 * The kernel's own modes: a write creates a trigger; 0666 with the 6.5
 * privilege rules, 0444 before them (psi_mod_compat.h).
 */
#define PSIM_FILE_MODE	PSIM_TRIGGER_FILE_MODE

PSIM_PROC_OPS(io);
PSIM_PROC_OPS(memory);
PSIM_PROC_OPS(cpu);
PSIM_PROC_OPS(irq);

/*
 * A cgroup's <res>.pressure, here and in cgroupfs (psi_cgroupfs.c): the
 * kernel's format, group @g's figures (NULL for the root: the system-wide
 * ones). A non-root group's cpu full is its own, as in the kernel.
 */
int psim_group_show(struct seq_file *m, struct psim_cgroup *g,
		    enum psim_res res)
{
	unsigned long avg[2][3];
	u64 total[2];
	int full;

	if (!g)
		return psim_pressure_show(m, res);
	psim_cgroup_read(g, res, avg, total);
	for (full = res == PSIM_IRQ;
	     full < 2 - (res == PSIM_CPU && !PSIM_CPU_FULL_LINE); full++)
		psim_show_line(m, full, avg[full], total[full]);
	return 0;
}

static int psim_cgroup_pressure_show(struct seq_file *m, enum psim_res res)
{
	return psim_group_show(m, ((struct psim_pfile *)m->private)->g, res);
}

/* Whether the files include irq's (irq=1), the cgroups' too */
bool psim_proc_has_irq(void)
{
	return psim_proc_irq;
}

/*
 * A trigger on a cgroup's file goes into its group's set; on a top file
 * (the root cgroup's) into the system's, as the kernel's root cgroup
 * files share psi_system's, marked to go with the tree.
 */
static ssize_t psim_cgroup_write(struct file *file, const char __user *buf,
				 size_t nbytes, enum psim_res res)
{
	struct psim_pfile *pf = psim_pfile(file);

	if (!pf->g)
		return psim_trigger_write_top(file, buf, nbytes, res, &pf->t);
	return psim_pfile_write(file, buf, nbytes, res);
}

static ssize_t psim_cgroup_io_write(struct file *file, const char __user *buf,
				    size_t nbytes, loff_t *ppos)
{
	return psim_cgroup_write(file, buf, nbytes, PSIM_IO);
}

static ssize_t psim_cgroup_memory_write(struct file *file,
					const char __user *buf, size_t nbytes,
					loff_t *ppos)
{
	return psim_cgroup_write(file, buf, nbytes, PSIM_MEM);
}

static ssize_t psim_cgroup_cpu_write(struct file *file,
				     const char __user *buf, size_t nbytes,
				     loff_t *ppos)
{
	return psim_cgroup_write(file, buf, nbytes, PSIM_CPU);
}

static ssize_t psim_cgroup_irq_write(struct file *file,
				     const char __user *buf, size_t nbytes,
				     loff_t *ppos)
{
	return psim_cgroup_write(file, buf, nbytes, PSIM_IRQ);
}

#define PSIM_CGROUP_OPS(res, RES)					\
	static int psim_cgroup_##res##_show(struct seq_file *m, void *v) \
	{								\
		return psim_cgroup_pressure_show(m, RES);		\
	}								\
	static int psim_cgroup_##res##_open(struct inode *inode,	\
					    struct file *file)		\
	{								\
		return psim_pfile_open(file, psim_cgroup_##res##_show,	\
				       psim_pde_data(inode));		\
	}								\
	static const struct proc_ops psim_cgroup_##res##_ops = {	\
		.proc_open	= psim_cgroup_##res##_open,		\
		.proc_read	= psim_read,				\
		.proc_lseek	= seq_lseek,				\
		.proc_write	= psim_cgroup_##res##_write,		\
		.proc_poll	= psim_poll,				\
		.proc_release	= psim_release,				\
	}

PSIM_CGROUP_OPS(io, PSIM_IO);
PSIM_CGROUP_OPS(memory, PSIM_MEM);
PSIM_CGROUP_OPS(cpu, PSIM_CPU);
PSIM_CGROUP_OPS(irq, PSIM_IRQ);

static const struct proc_ops *const psim_cgroup_ops[PSIM_NR_RES] = {
	[PSIM_IO] = &psim_cgroup_io_ops, [PSIM_MEM] = &psim_cgroup_memory_ops,
	[PSIM_CPU] = &psim_cgroup_cpu_ops, [PSIM_IRQ] = &psim_cgroup_irq_ops,
};

/* Whether a cgroup of this name would clash with its parent's files. */
bool psim_proc_cgroup_file_name(const char *name)
{
	size_t len;
	int res;

	for (res = 0; res < PSIM_NR_RES; res++) {
		len = strlen(psim_res_names[res]);
		if (!strncmp(name, psim_res_names[res], len) &&
		    !strcmp(name + len, ".pressure"))
			return true;
	}
	return false;
}

/*
 * A cgroup's directory @name under @parent with its files, for group @g
 * (NULL: the root), owned by @uid and @gid with the kernel's cgroup file
 * mode; NULL if it could not be made whole (nothing of it is left).
 */
struct proc_dir_entry *psim_proc_cgroup_dir(const char *name,
					    struct proc_dir_entry *parent,
					    struct psim_cgroup *g, kuid_t uid,
					    kgid_t gid)
{
	char file[sizeof("memory.pressure")];
	struct proc_dir_entry *dir, *pde;
	int res;

	dir = proc_mkdir(name, parent);
	if (!dir)
		return NULL;
	proc_set_user(dir, uid, gid);
	for (res = 0; res < (psim_proc_irq ? PSIM_NR_RES : PSIM_IRQ); res++) {
		snprintf(file, sizeof(file), "%s.pressure",
			 psim_res_names[res]);
		pde = proc_create_data(file, 0644, dir, psim_cgroup_ops[res], g);
		if (!pde) {
			proc_remove(dir);
			return NULL;
		}
		proc_set_user(pde, uid, gid);
	}
	return dir;
}

/*
 * The raw state, for tests and for debugging: the task counts of every
 * CPU, the underflow count (must stay 0), and how often the periodic
 * aggregation ran.
 */
static int psim_debug_state_show(struct seq_file *m, void *v)
{
	struct psim_aggregate_debug ag;
	struct psim_triggers_debug tr;
	struct psim_cgroups_debug cg;
	unsigned long flags;
	u64 sc, kt;
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
	/*
	 * irq=1: each CPU's interrupt time seen, its part charged (us), the
	 * intervals timed by what closed them and their time, and the hard
	 * interrupts inside softirqs (within the softirqs' time)
	 */
	for_each_possible_cpu(cpu) {
		unsigned long n[PSIM_IRQ_DEBUG_KINDS];
		u64 total, charged, t[PSIM_IRQ_DEBUG_KINDS];

		psim_irq_debug(cpu, &total, &charged, n, t);
		seq_printf(m, "cpu%d irq_us=%llu irq_charged_us=%llu irq_device=%lu irq_vector=%lu irq_soft=%lu irq_device_us=%llu irq_vector_us=%llu irq_soft_us=%llu irq_nested=%lu irq_nested_us=%llu\n",
			   cpu, div_u64(total, NSEC_PER_USEC),
			   div_u64(charged, NSEC_PER_USEC), n[0], n[1], n[2],
			   div_u64(t[0], NSEC_PER_USEC),
			   div_u64(t[1], NSEC_PER_USEC),
			   div_u64(t[2], NSEC_PER_USEC), n[3],
			   div_u64(t[3], NSEC_PER_USEC));
	}
	/* where the task words are: psi_flags, or a table of this many pids */
	seq_printf(m, "task_table %u\n", psim_store_table_size());
	psim_aggregate_debug(&ag);
	seq_printf(m, "avgs_work_runs %lu\n", ag.runs);
	/* the latest fold after its grid point, over lag_folds timed folds */
	seq_printf(m, "avgs_lag_max_us %llu\n",
		   div_u64(ag.lag_max, NSEC_PER_USEC));
	seq_printf(m, "avgs_lag_folds %lu\n", ag.lag_folds);
	/* runs that found their next fold queued by a task change */
	seq_printf(m, "avgs_restarts %lu\n", ag.restarts);
	/* the latest run after the jiffy its timer was set for, over runs */
	seq_printf(m, "avgs_late_max_jiffies %lu\n", ag.late_max);
	seq_printf(m, "avgs_late_runs %lu\n", ag.late_runs);
	/*
	 * sched_clock(), the averaging grid's clock, and ktime, the timers',
	 * read together (ns): their drift bounds a fold's lag
	 */
	local_irq_save(flags);
	kt = ktime_get_ns();
	sc = sched_clock();
	local_irq_restore(flags);
	seq_printf(m, "clocks_ns %llu %llu\n", sc, kt);
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
	/* each CPU's weight in the system-wide figures so far (percpu=1) */
	seq_puts(m, "cpu_nonidle_us");
	for_each_possible_cpu(cpu)
		seq_printf(m, " %llu",
			   div_u64(psim_aggregate_cpu_nonidle(cpu),
				   NSEC_PER_USEC));
	seq_putc(m, '\n');
	/* time in the averaging work since the start, triggers included */
	seq_printf(m, "avgs_work_us %llu\n", div_u64(ag.work_ns, NSEC_PER_USEC));
	psim_triggers_debug(&tr);
	/* triggers now: unprivileged (averaging work), privileged (fast path) */
	seq_printf(m, "triggers %lu %lu\n", tr.nr[PSIM_AVGS], tr.nr[PSIM_POLL]);
	seq_printf(m, "triggers_created %lu\n", tr.created);
	seq_printf(m, "triggers_destroyed %lu\n", tr.destroyed);
	seq_printf(m, "trigger_events %lu %lu\n", tr.events[PSIM_AVGS],
		   tr.events[PSIM_POLL]);
	seq_printf(m, "trigger_updates %lu %lu\n", tr.evals[PSIM_AVGS],
		   tr.evals[PSIM_POLL]);
	seq_printf(m, "poll_work_runs %lu\n", tr.poll_runs);
	seq_printf(m, "poll_work_us %llu\n",
		   div_u64(tr.poll_work_ns, NSEC_PER_USEC));
	seq_printf(m, "poll_states 0x%02x\n", tr.poll_states);
	/* the cgroups' trigger sets (cgroups=1), made at their first trigger */
	seq_printf(m, "trigger_sets %lu\n", tr.sets);
	seq_printf(m, "poll_min_period_us %llu\n",
		   tr.poll_min_period == U64_MAX ? 0 :
		   div_u64(tr.poll_min_period, NSEC_PER_USEC));
	psim_cgroups_debug(&cg);
	/* cgroups=1: groups now, made and freed since the start, failed */
	if (cg.on)
		seq_printf(m, "cgroups %lu %lu %lu %lu\ncgroup_files_failed %lu\n",
			   cg.nr, cg.made, cg.freed, cg.failed,
			   cg.files_failed);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(psim_debug_state);

/* cgroups=1: the groups, one line each (psim_cgroups_show()) */
static int psim_debug_cgroups_show(struct seq_file *m, void *v)
{
	psim_cgroups_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(psim_debug_cgroups);

/*
 * cgroups=1 with accounting: each group's pressure, its lines in the
 * kernel's format after "<cgroup id> <resource> "; irq's zero without
 * irq=1.
 */
static void psim_debug_cgroup_line(struct seq_file *m, u64 id,
				   enum psim_res res, unsigned long avg[2][3],
				   u64 total[2])
{
	int full;

	for (full = res == PSIM_IRQ; full < 2; full++) {
		seq_printf(m, "%llu %s ", id, psim_res_names[res]);
		psim_show_line(m, full, avg[full], total[full]);
	}
}

static int psim_debug_cgroup_pressure_show(struct seq_file *m, void *v)
{
	psim_cgroups_show_pressure(m, psim_debug_cgroup_line);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(psim_debug_cgroup_pressure);

static int psim_percpu_create(bool irq)
{
	struct proc_dir_entry *dir;
	long res;

	dir = proc_mkdir("percpu", psim_dir);
	if (!dir)
		return -ENOMEM;
	for (res = 0; res < (irq ? PSIM_NR_RES : PSIM_IRQ); res++)
		if (!proc_create_data(psim_res_names[res], 0444, dir, &psim_percpu_ops,
				      (void *)res))
			return -ENOMEM;
	return 0;
}

/*
 * The files go live one by one. On a failure those that exist stay: one may
 * be open already, with a polled trigger, so psim_proc_remove() must come
 * after the triggers' shutdown (psi_mod.c undoes the start so).
 */
int psim_proc_create(const char *name, bool percpu, bool irq)
{
	int ret;

	WRITE_ONCE(psim_files_closing, false);
	psim_proc_irq = irq;
	psim_dir = proc_mkdir(name, NULL);
	if (!psim_dir)
		return -ENOMEM;
	if (!proc_create("io", PSIM_FILE_MODE, psim_dir, &psim_io_ops) ||
	    !proc_create("memory", PSIM_FILE_MODE, psim_dir, &psim_memory_ops) ||
	    !proc_create("cpu", PSIM_FILE_MODE, psim_dir, &psim_cpu_ops))
		return -ENOMEM;
	/* the test aid fails here, with the first files already live */
	ret = psim_start_fault(PSIM_STEP_FILES);
	if (ret)
		return ret;
	if ((irq && !proc_create("irq", PSIM_FILE_MODE, psim_dir,
				 &psim_irq_ops)) ||
	    (percpu && psim_percpu_create(irq)))
		return -ENOMEM;
	/* Debug aid only: a failure here is not worth failing the load. */
	psim_debug_dir = debugfs_create_dir("psi_mod", NULL);
	debugfs_create_file("state", 0400, psim_debug_dir, NULL,
			    &psim_debug_state_fops);
	debugfs_create_file("cgroups", 0400, psim_debug_dir, NULL,
			    &psim_debug_cgroups_fops);
	debugfs_create_file("cgroup_pressure", 0400, psim_debug_dir, NULL,
			    &psim_debug_cgroup_pressure_fops);
	/* cgroups=1: the cgroups' files, now or when it is set */
	psim_cgroups_files_start(psim_dir);
	return 0;
}

void psim_proc_remove(void)
{
	debugfs_remove(psim_debug_dir);
	psim_debug_dir = NULL;
	/* a copy waiting for the mm's lock ends, proc_remove() waits for it */
	WRITE_ONCE(psim_files_closing, true);
	psim_cgroups_files_stop();
	proc_remove(psim_dir);
	psim_dir = NULL;
}
