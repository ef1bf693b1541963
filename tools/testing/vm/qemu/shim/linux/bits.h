/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's bit helpers, for accmap's shared GPU code in qemu. */
#ifndef ACCMAP_SHIM_LINUX_BITS_H
#define ACCMAP_SHIM_LINUX_BITS_H

#ifndef BIT
#define BIT(n)                  (1UL << (n))
#endif
#ifndef BIT_ULL
#define BIT_ULL(n)              (1ULL << (n))
#endif
#ifndef GENMASK
#define GENMASK(h, l)           (((~0UL) >> (63 - (h))) & ~((1UL << (l)) - 1))
#endif
#ifndef GENMASK_ULL
#define GENMASK_ULL(h, l)       (((~0ULL) >> (63 - (h))) & ~((1ULL << (l)) - 1))
#endif

#endif
