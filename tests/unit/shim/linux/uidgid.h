/* SPDX-License-Identifier: GPL-2.0 */
/* stand-in: see kapi.h */
#include "../kapi.h"
