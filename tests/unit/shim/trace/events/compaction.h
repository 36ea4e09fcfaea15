/* SPDX-License-Identifier: GPL-2.0 */
/* stand-in: mm_compaction_begin/end, as of 5.16 and later */
#include "../../shim.h"

struct compact_control;

SHIM_DECLARE_TRACE(mm_compaction_begin, struct compact_control *cc,
		   unsigned long zone_start, unsigned long zone_end, bool sync);
SHIM_DECLARE_TRACE(mm_compaction_end, struct compact_control *cc,
		   unsigned long zone_start, unsigned long zone_end, bool sync,
		   int status);
