/* SPDX-License-Identifier: GPL-2.0 */
/* stand-in: see shim.h */
#include "../shim.h"
