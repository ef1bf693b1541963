/* SPDX-License-Identifier: GPL-2.0 */
/* memset() and friends, for accmap's shared GPU code in qemu. */
#ifndef ACCMAP_SHIM_LINUX_STRING_H
#define ACCMAP_SHIM_LINUX_STRING_H

#include <string.h>

#endif
