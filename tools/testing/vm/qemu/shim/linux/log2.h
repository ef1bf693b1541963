/* SPDX-License-Identifier: GPL-2.0 */
/* is_power_of_2(), for accmap's shared GPU code in qemu. */
#ifndef ACCMAP_SHIM_LINUX_LOG2_H
#define ACCMAP_SHIM_LINUX_LOG2_H

#include <stdbool.h>

static inline bool is_power_of_2(unsigned long n)
{
        return n != 0 && (n & (n - 1)) == 0;
}

#endif
