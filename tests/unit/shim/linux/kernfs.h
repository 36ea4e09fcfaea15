/* SPDX-License-Identifier: GPL-2.0 */
/* stand-in: see kapi.h and linux/cgroup.h */
#include "cgroup.h"
