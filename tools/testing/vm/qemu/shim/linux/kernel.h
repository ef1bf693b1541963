/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What accmap's shared GPU code takes from the kernel's <linux/kernel.h>
 * and friends, for qemu: alignment, array sizes, 32-bit halves and
 * little-endian conversions (on the host's byte order).
 */
#ifndef ACCMAP_SHIM_LINUX_KERNEL_H
#define ACCMAP_SHIM_LINUX_KERNEL_H

#include <assert.h>
#include <endian.h>
#include <string.h>
#include <linux/types.h>
#include <linux/bits.h>

#ifndef IS_ALIGNED
#define IS_ALIGNED(x, a)        (((x) & ((__typeof__(x))(a) - 1)) == 0)
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)           (sizeof(a) / sizeof((a)[0]))
#endif
#define lower_32_bits(n)        ((u32)((n) & 0xffffffff))
#define upper_32_bits(n)        ((u32)((n) >> 32))

#define le16_to_cpu(x)          le16toh(x)
#define le32_to_cpu(x)          le32toh(x)
#define le64_to_cpu(x)          le64toh(x)
#define cpu_to_le16(x)          htole16(x)
#define cpu_to_le32(x)          htole32(x)
#define cpu_to_le64(x)          htole64(x)
#define le32_to_cpus(p)         (*(p) = le32toh(*(p)))
#define cpu_to_le32s(p)         (*(p) = htole32(*(p)))

#endif
