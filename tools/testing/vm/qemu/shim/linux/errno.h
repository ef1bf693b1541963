/* SPDX-License-Identifier: GPL-2.0 */
/* The errno values, for accmap's shared GPU code in qemu: the system's. */
#ifndef ACCMAP_SHIM_LINUX_ERRNO_H
#define ACCMAP_SHIM_LINUX_ERRNO_H

#include_next <linux/errno.h>

#endif
