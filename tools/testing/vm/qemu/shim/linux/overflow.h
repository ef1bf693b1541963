/* SPDX-License-Identifier: GPL-2.0 */
/* check_add_overflow(), for accmap's shared GPU code in qemu. */
#ifndef ACCMAP_SHIM_LINUX_OVERFLOW_H
#define ACCMAP_SHIM_LINUX_OVERFLOW_H

#define check_add_overflow(a, b, d)     __builtin_add_overflow(a, b, d)

#endif
