/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's <linux/types.h> as accmap's shared GPU code (mali_jobs.c,
 * mali_regfile.c, replay_walk.c) uses it, for the qemu build: the system's
 * uapi types
 * (__u32, __le32, ...) and the kernel's short names.
 */
#ifndef ACCMAP_SHIM_LINUX_TYPES_H
#define ACCMAP_SHIM_LINUX_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#endif
