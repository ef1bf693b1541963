// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: validation of ioctl arguments.
 *
 * Everything here works on kernel copies of the arguments and touches no
 * other state, so that each rule can be tested on its own in KUnit.
 */

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/ioctl.h>
#include <linux/log2.h>
#include <linux/mm.h>

#include "accmap.h"

/**
 * accmap_check_ioctl_size() - check an ioctl command against its definition
 * @cmd: the command user space issued
 * @kernel_cmd: the command as this kernel defines it
 * @min_size: size of the first published version of the argument
 *
 * The command must match @kernel_cmd in type, number and direction; its
 * size may differ (older or newer user space) but may not be smaller than
 * @min_size.  Whether a larger argument's tail is zero is checked when it
 * is copied in.
 *
 * Return: 0, -ENOTTY if the command is not this one, or -EINVAL if the
 * argument is smaller than the first version.
 */
int accmap_check_ioctl_size(unsigned int cmd, unsigned int kernel_cmd,
			    unsigned int min_size)
{
	if (_IOC_TYPE(cmd) != _IOC_TYPE(kernel_cmd) ||
	    _IOC_NR(cmd) != _IOC_NR(kernel_cmd) ||
	    _IOC_DIR(cmd) != _IOC_DIR(kernel_cmd))
		return -ENOTTY;
	if (_IOC_SIZE(cmd) < min_size)
		return -EINVAL;
	return 0;
}

/**
 * accmap_check_create() - validate an ACCMAP_IOC_CREATE argument
 * @arg: the argument
 * @max_size: the largest buffer size allowed, in bytes
 * @size: set to the requested size rounded up to pages on success
 *
 * Only CREATE's own fields are checked here: the allocation fields of
 * ACCMAP_CREATE_ALLOC are ALLOC's, checked by accmap_check_alloc().
 *
 * Return: 0, or -EINVAL for unknown flags, non-zero padding, allocation
 * fields without ACCMAP_CREATE_ALLOC, a zero size or a size above
 * @max_size.
 */
int accmap_check_create(const struct accmap_create *arg, u64 max_size,
			u64 *size)
{
	if (arg->flags & ~ACCMAP_CREATE_VALID_FLAGS)
		return -EINVAL;
	if (arg->pad || arg->pad2)
		return -EINVAL;
	if (!(arg->flags & ACCMAP_CREATE_ALLOC) &&
	    (arg->heap_mask || arg->alloc_flags || arg->align || arg->tag))
		return -EINVAL;
	if (!arg->size || arg->size > max_size)
		return -EINVAL;
	/* max_size is far below U64_MAX, so rounding cannot wrap. */
	if (arg->size > U64_MAX - (PAGE_SIZE - 1))
		return -EINVAL;
	*size = round_up(arg->size, (u64)PAGE_SIZE);
	if (*size > max_size)
		return -EINVAL;
	return 0;
}

/**
 * accmap_check_alloc() - validate an ACCMAP_IOC_ALLOC argument
 * @arg: the argument
 * @heap_mask: heaps ALLOC may use, one bit per heap id
 * @usable: set to the heaps of the request that exist, on success
 *
 * Return: 0; -EINVAL for unknown flags, both write-combined and uncached,
 * non-zero padding, an alignment that is not 0 or a power of two no larger
 * than ACCMAP_ALLOC_MAX_ALIGN, or an empty heap mask; -ENODEV if the mask
 * names no heap that exists.
 */
int accmap_check_alloc(const struct accmap_alloc *arg, u32 heap_mask,
		       u32 *usable)
{
	if (arg->flags & ~ACCMAP_ALLOC_VALID_FLAGS)
		return -EINVAL;
	if ((arg->flags & ACCMAP_ALLOC_WRITECOMBINE) &&
	    (arg->flags & ACCMAP_ALLOC_UNCACHED))
		return -EINVAL;
	if (arg->pad)
		return -EINVAL;
	if (arg->align &&
	    (!is_power_of_2(arg->align) || arg->align > ACCMAP_ALLOC_MAX_ALIGN))
		return -EINVAL;
	if (!arg->heap_mask)
		return -EINVAL;

	*usable = arg->heap_mask & heap_mask;
	if (!*usable)
		return -ENODEV;
	return 0;
}

/**
 * accmap_heap_next() - the next heap to try for an allocation
 * @usable: the heaps to choose from, one bit per heap id
 * @prev: the heap tried last, or -1 to start
 *
 * Carveout heaps come first, in id order, then the system heap: memory
 * set aside for devices is used before general memory.
 *
 * Return: the heap id, or -1 when every heap has been tried.
 */
int accmap_heap_next(u32 usable, int prev)
{
	u32 carveouts = usable & ~BIT(ACCMAP_HEAP_SYSTEM);

	if (prev == ACCMAP_HEAP_SYSTEM)
		return -1;
	if (prev >= 0)
		carveouts &= ~GENMASK(prev, 0);
	if (carveouts)
		return __ffs(carveouts);
	return usable & BIT(ACCMAP_HEAP_SYSTEM) ? ACCMAP_HEAP_SYSTEM : -1;
}

/**
 * accmap_check_contig_size() - validate the size of a contiguous ALLOC
 * @size: the buffer's size in bytes (page aligned, not 0)
 *
 * Return: 0, or -EINVAL above ACCMAP_CONTIG_MAX_SIZE.
 */
int accmap_check_contig_size(u64 size)
{
	return size > ACCMAP_CONTIG_MAX_SIZE ? -EINVAL : 0;
}

/**
 * accmap_check_get_fd() - validate an ACCMAP_IOC_GET_FD argument
 * @arg: the argument
 *
 * Return: 0, or -EINVAL for non-zero padding, file flags other than
 * O_CLOEXEC and the access mode, or the access mode O_WRONLY (a buffer
 * that cannot be read back cannot be mapped).
 */
int accmap_check_get_fd(const struct accmap_get_fd *arg)
{
	if (arg->pad)
		return -EINVAL;
	if (arg->fd_flags & ~(O_CLOEXEC | O_ACCMODE))
		return -EINVAL;
	if ((arg->fd_flags & O_ACCMODE) != O_RDONLY &&
	    (arg->fd_flags & O_ACCMODE) != O_RDWR)
		return -EINVAL;
	return 0;
}
