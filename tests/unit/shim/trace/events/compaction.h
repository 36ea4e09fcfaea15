/* SPDX-License-Identifier: GPL-2.0 */
/* stand-in: mm_compaction_begin/end */
#include "../../shim.h"

struct compact_control;

#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 16, 0)
SHIM_DECLARE_TRACE(mm_compaction_begin, unsigned long zone_start,
		   unsigned long migrate_pfn, unsigned long free_pfn,
		   unsigned long zone_end, bool sync);
SHIM_DECLARE_TRACE(mm_compaction_end, unsigned long zone_start,
		   unsigned long migrate_pfn, unsigned long free_pfn,
		   unsigned long zone_end, bool sync, int status);
#else
SHIM_DECLARE_TRACE(mm_compaction_begin, struct compact_control *cc,
		   unsigned long zone_start, unsigned long zone_end, bool sync);
SHIM_DECLARE_TRACE(mm_compaction_end, struct compact_control *cc,
		   unsigned long zone_start, unsigned long zone_end, bool sync,
		   int status);
#endif
