// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup side of the module for the tests that link no
 * src/psi_cgroup.c (test_probes, test_midload, test_aggregate,
 * test_triggers): no groups, so the probes never count in one.
 * test_cgroup links the real file instead.
 */
#include "kapi.h"
#include "linux/cgroup.h"
#include "psi_mod.h"

DEFINE_STATIC_KEY_FALSE(psim_cgroup_slot_key);

bool psim_cgroups_counting(void)
{
	return false;
}

struct psim_cgroup *psim_cgroup_lookup(struct cgroup *cgrp)
{
	(void)cgrp;
	return NULL;
}
