// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: /proc/<proc_dir>/{cpu,io,memory}, in the kernel's format.
 *
 * Unload safety: proc_remove() waits for every read in progress and calls
 * ->proc_release for files still open, after which their reads fail with
 * -EIO inside procfs without entering this module again. debugfs_remove()
 * gives the same guarantee for the debug file.
 */
#include <linux/debugfs.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/printk.h>

#include "psi_mod.h"

static struct proc_dir_entry *psim_dir;
static struct dentry *psim_debug_dir;

static int psim_io_show(struct seq_file *m, void *v)
{
	return psim_show(m, PSIM_IO);
}

static int psim_memory_show(struct seq_file *m, void *v)
{
	return psim_show(m, PSIM_MEM);
}

static int psim_cpu_show(struct seq_file *m, void *v)
{
	return psim_show(m, PSIM_CPU);
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

static int psim_state_show(struct seq_file *m, void *v)
{
	return psim_show_state(m);
}
DEFINE_SHOW_ATTRIBUTE(psim_state);

/*
 * The kernel's files are 0666 because a write creates a trigger. psi_mod
 * keeps the modes consumers expect but does not implement triggers yet:
 * refuse every write, and say why once.
 */
static ssize_t psim_write(struct file *file, const char __user *buf,
			  size_t nbytes, loff_t *ppos)
{
	pr_notice_once("psi_mod: pressure triggers are not supported yet: writes to the pressure files are refused\n");
	return -EOPNOTSUPP;
}

#define PSIM_PROC_OPS(res)					\
	static const struct proc_ops psim_##res##_ops = {	\
		.proc_open	= psim_##res##_open,		\
		.proc_read	= seq_read,			\
		.proc_lseek	= seq_lseek,			\
		.proc_write	= psim_write,			\
		.proc_release	= single_release,		\
	}

/* The kernel's own modes (see the note on psim_write()). */
#define PSIM_FILE_MODE	0666

PSIM_PROC_OPS(io);
PSIM_PROC_OPS(memory);
PSIM_PROC_OPS(cpu);

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
			    &psim_state_fops);
	return 0;
}

void psim_proc_remove(void)
{
	debugfs_remove(psim_debug_dir);
	psim_debug_dir = NULL;
	proc_remove(psim_dir);
	psim_dir = NULL;
}
