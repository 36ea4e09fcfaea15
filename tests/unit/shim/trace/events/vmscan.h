/* SPDX-License-Identifier: GPL-2.0 */
/* stand-in: the direct reclaim tracepoints */
#include "../../shim.h"

SHIM_DECLARE_TRACE(mm_vmscan_direct_reclaim_begin, int order, gfp_t gfp_flags);
SHIM_DECLARE_TRACE(mm_vmscan_direct_reclaim_end, unsigned long nr_reclaimed);
SHIM_DECLARE_TRACE(mm_vmscan_memcg_reclaim_begin, int order, gfp_t gfp_flags);
SHIM_DECLARE_TRACE(mm_vmscan_memcg_reclaim_end, unsigned long nr_reclaimed);
