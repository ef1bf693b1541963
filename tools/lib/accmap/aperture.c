// SPDX-License-Identifier: GPL-2.0
/*
 * libaccmap: the SVM aperture, the part of the process's address space a
 * GPU with va_bits address bits can reach, and a first-fit allocator in it.
 *
 * When the GPU reaches less than the CPU's user range, a PROT_NONE,
 * MAP_NORESERVE reservation below 1 << va_bits holds the place (address
 * space only: no memory, no commit charge).  An allocation makes part of it
 * readable and writable with mprotect(), as glibc grows its heaps: that
 * never leaves a hole, and the commit charge comes where the kernel
 * accounts it (strict overcommit) or not at all (the default heuristic).
 * A free puts a fresh PROT_NONE, MAP_NORESERVE mapping over the block,
 * which drops its pages and its charge.  When the GPU reaches the whole
 * user range, allocations are plain anonymous mappings anywhere.
 *
 * Blocks are kept in an array sorted by address; first fit walks the gaps
 * between them.  One mutex covers all of the state below.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "accmap.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#define HUGE_SIZE	ACCMAP_SVM_APERTURE_MIN

/* Reservation attempts per size at most: bounds init on a crowded range. */
#define RESERVE_TRIES	4096

/**
 * struct block - one accmap_svm_alloc() block, or a range lost to a failed free
 * @start: first byte
 * @size:  bytes, whole pages
 * @lost:  the free failed and the range may be a hole now: never handed out
 *         again, never unmapped by us (someone else may map there)
 */
struct block {
	uint64_t start;
	uint64_t size;
	bool lost;
};

/* Everything below is under aperture_lock. */
static pthread_mutex_t aperture_lock = PTHREAD_MUTEX_INITIALIZER;
static bool have_aperture;
static struct accmap_svm_aperture aperture;
static struct block *blocks;	/* sorted by start, not overlapping */
static size_t nblocks, blocks_cap;

static uint64_t page_bytes(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (uint64_t)ps : 4096;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint64_t align_down(uint64_t v, uint64_t a)
{
	return v & ~(a - 1);
}

static unsigned int bits_of(uint64_t v)
{
	return v ? 64 - (unsigned int)__builtin_clzll(v) : 0;
}

int accmap_svm_cpu_va_bits(uint32_t *bits)
{
	uint64_t top = (uintptr_t)&top;
	unsigned long execfn;

	if (!bits)
		return -EINVAL;

	/*
	 * The name of the executable sits at the very top of the initial
	 * stack, which the kernel puts at the top of the default user range
	 * whatever the mmap layout; a thread's own stack is mmap()ed lower.
	 */
	execfn = getauxval(AT_EXECFN);
	if (execfn > top)
		top = execfn;
	*bits = bits_of(top);
	return 0;
}

/*
 * A PROT_NONE, MAP_NORESERVE mapping at exactly @addr, or MAP_FAILED (and
 * nothing mapped).  Kernels before 4.17 take MAP_FIXED_NOREPLACE as a mere
 * hint and may map elsewhere: that is undone.
 */
static void *map_none_at(uint64_t addr, uint64_t len)
{
	void *want = (void *)(uintptr_t)addr;
	void *p = mmap(want, (size_t)len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);

	if (p != MAP_FAILED && p != want) {
		munmap(p, (size_t)len);
		errno = EADDRNOTAVAIL;	/* not known to be taken: not EEXIST */
		return MAP_FAILED;
	}
	return p;
}

/*
 * The end of the user range below 1 << @cpu_bits: that address, unless
 * its last page cannot be mapped (x86-64 keeps the page below 1 << 47 out
 * of user space, 32-bit processes lose more on some kernels).  Probes
 * pages downwards at doubling distances: a page that maps, or is mapped
 * already, is user space.
 */
static uint64_t user_end(unsigned int cpu_bits, uint64_t page)
{
	uint64_t end = cpu_bits >= 64 ? UINT64_MAX - page + 1 : 1ULL << cpu_bits;
	uint64_t step;

	for (step = page; step < end / 16; step *= 2) {
		void *p = map_none_at(end - step, page);

		if (p != MAP_FAILED) {
			munmap(p, (size_t)page);
			break;
		}
		if (errno == EEXIST)
			break;
	}
	return step == page ? end : end - step + page;
}

/* The largest power of two not above @v (@v > 0). */
static uint64_t pow2_floor(uint64_t v)
{
	return 1ULL << (bits_of(v) - 1);
}

/*
 * Reserves the largest power-of-two range that fits in [@base, @limit):
 * each size is tried at addresses from the top down, then halved.
 * Returns 0 and the range, or -ENOMEM.
 */
static int reserve(uint64_t base, uint64_t limit, uint64_t *start, uint64_t *size)
{
	uint64_t len, step, addr;

	if (limit <= base || limit - base < HUGE_SIZE)
		return -ENOMEM;
	for (len = pow2_floor(limit - base); len >= HUGE_SIZE; len /= 2) {
		step = len / 2 > HUGE_SIZE ? len / 2 : HUGE_SIZE;
		if ((limit - base) / step > RESERVE_TRIES)
			step = align_up((limit - base) / RESERVE_TRIES, HUGE_SIZE);
		for (addr = align_down(limit - len, HUGE_SIZE); addr >= base; addr -= step) {
			if (map_none_at(addr, len) != MAP_FAILED) {
				*start = addr;
				*size = len;
				return 0;
			}
			if (addr < base + step)
				break;
		}
	}
	return -ENOMEM;
}

int accmap_svm_aperture_init(uint32_t va_bits)
{
	uint64_t page = page_bytes(), end, limit;
	uint32_t cpu_bits;
	int ret = 0;

	if (va_bits < ACCMAP_REPLAY_VA_BITS_MIN || va_bits > ACCMAP_REPLAY_VA_BITS_MAX)
		return -EINVAL;
	accmap_svm_cpu_va_bits(&cpu_bits);

	pthread_mutex_lock(&aperture_lock);
	if (have_aperture) {
		ret = -EBUSY;
		goto out_unlock;
	}
	memset(&aperture, 0, sizeof(aperture));
	aperture.va_bits = va_bits;
	aperture.cpu_va_bits = cpu_bits;
	end = user_end(cpu_bits, page);
	if (va_bits >= cpu_bits) {
		/* Page 0 is never a valid pointer: it stays out. */
		aperture.start = page;
		aperture.size = end - page;
	} else {
		limit = 1ULL << va_bits;
		if (limit > end)
			limit = end;
		ret = reserve(HUGE_SIZE, limit, &aperture.start, &aperture.size);
		if (ret)
			goto out_unlock;
		aperture.reserved = 1;
	}
	have_aperture = true;
out_unlock:
	pthread_mutex_unlock(&aperture_lock);
	return ret;
}

/* Unmaps what is left of the reservation: everything but lost blocks. */
static void unmap_reservation(void)
{
	uint64_t from = aperture.start, end = aperture.start + aperture.size;
	size_t i;

	for (i = 0; i <= nblocks; i++) {
		uint64_t to = i < nblocks ? blocks[i].start : end;

		if (to > from)
			munmap((void *)(uintptr_t)from, (size_t)(to - from));
		if (i < nblocks)
			from = blocks[i].start + blocks[i].size;
	}
}

int accmap_svm_aperture_fini(void)
{
	int ret = 0;

	pthread_mutex_lock(&aperture_lock);
	if (!have_aperture) {
		ret = -ENXIO;
		goto out_unlock;
	}
	if (aperture.allocations) {
		ret = -EBUSY;
		goto out_unlock;
	}
	if (aperture.reserved)
		unmap_reservation();
	free(blocks);
	blocks = NULL;
	nblocks = 0;
	blocks_cap = 0;
	have_aperture = false;
out_unlock:
	pthread_mutex_unlock(&aperture_lock);
	return ret;
}

int accmap_svm_aperture_info(struct accmap_svm_aperture *info)
{
	int ret = 0;

	if (!info)
		return -EINVAL;

	pthread_mutex_lock(&aperture_lock);
	if (have_aperture)
		*info = aperture;
	else
		ret = -ENXIO;
	pthread_mutex_unlock(&aperture_lock);
	return ret;
}

int accmap_svm_aperture_check(const void *addr, uint64_t size)
{
	uint64_t start = (uintptr_t)addr;
	int ret = 0;

	if (!size || start + size < start)
		return -EINVAL;

	pthread_mutex_lock(&aperture_lock);
	if (!have_aperture)
		ret = -ENXIO;
	else if (start < aperture.start || start + size > aperture.start + aperture.size)
		ret = -ERANGE;
	pthread_mutex_unlock(&aperture_lock);
	return ret;
}

/* Room for one more block; false if out of memory. */
static bool blocks_grow(void)
{
	struct block *b;
	size_t cap;

	if (nblocks < blocks_cap)
		return true;
	cap = blocks_cap ? blocks_cap * 2 : 16;
	b = realloc(blocks, cap * sizeof(*b));
	if (!b)
		return false;
	blocks = b;
	blocks_cap = cap;
	return true;
}

static void blocks_insert(size_t i, uint64_t start, uint64_t size)
{
	memmove(&blocks[i + 1], &blocks[i], (nblocks - i) * sizeof(*blocks));
	blocks[i].start = start;
	blocks[i].size = size;
	blocks[i].lost = false;
	nblocks++;
}

/* The index blocks[] would have a block starting at @start. */
static size_t blocks_index(uint64_t start)
{
	size_t lo = 0, hi = nblocks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (blocks[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * First fit in the reservation: the lowest @align-aligned start of @len
 * free bytes, and the index to insert it at.  false if none fits.
 */
static bool first_fit(uint64_t len, uint64_t align, uint64_t *start, size_t *index)
{
	uint64_t from = aperture.start, end = aperture.start + aperture.size;
	size_t i;

	for (i = 0; i <= nblocks; i++) {
		uint64_t to = i < nblocks ? blocks[i].start : end;
		uint64_t at = align_up(from, align);

		if (at >= from && at <= to && to - at >= len) {
			*start = at;
			*index = i;
			return true;
		}
		if (i < nblocks)
			from = blocks[i].start + blocks[i].size;
	}
	return false;
}

/* Anywhere (the GPU reaches it all): an anonymous mapping, aligned. */
static int alloc_anywhere(uint64_t len, uint64_t align, uint64_t *start)
{
	uint64_t pad = align > page_bytes() ? align - page_bytes() : 0, at;
	uint8_t *p;

	if (len + pad < len || len + pad > SIZE_MAX)
		return -ENOMEM;
	p = mmap(NULL, (size_t)(len + pad), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return errno == ENOMEM || errno <= 0 ? -ENOMEM : -errno;
	at = align_up((uintptr_t)p, align);
	if (at > (uintptr_t)p)
		munmap(p, (size_t)(at - (uintptr_t)p));
	if ((uintptr_t)p + pad > at)
		munmap((void *)(uintptr_t)(at + len), (size_t)((uintptr_t)p + pad - at));
	*start = at;
	return 0;
}

int accmap_svm_alloc(size_t size, void **ptr)
{
	uint64_t page = page_bytes(), len, align, start;
	size_t index;
	int ret = 0;

	if (!size || !ptr)
		return -EINVAL;
	len = align_up(size, page);
	if (len < size)
		return -ENOMEM;
	align = len >= HUGE_SIZE ? HUGE_SIZE : page;

	pthread_mutex_lock(&aperture_lock);
	if (!have_aperture) {
		ret = -ENXIO;
		goto out_unlock;
	}
	if (!blocks_grow()) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	if (aperture.reserved) {
		if (!first_fit(len, align, &start, &index)) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		if (mprotect((void *)(uintptr_t)start, (size_t)len, PROT_READ | PROT_WRITE)) {
			ret = errno > 0 ? -errno : -ENOMEM;
			goto out_unlock;
		}
	} else {
		ret = alloc_anywhere(len, align, &start);
		if (ret)
			goto out_unlock;
		index = blocks_index(start);
	}
	blocks_insert(index, start, len);
	aperture.allocations++;
	aperture.allocated += len;
	*ptr = (void *)(uintptr_t)start;
out_unlock:
	pthread_mutex_unlock(&aperture_lock);
	return ret;
}

int accmap_svm_free(void *ptr)
{
	uint64_t start = (uintptr_t)ptr;
	struct block *b;
	size_t i;
	void *p;
	int ret = 0;

	if (!ptr)
		return -EINVAL;

	pthread_mutex_lock(&aperture_lock);
	if (!have_aperture) {
		ret = -ENXIO;
		goto out_unlock;
	}
	i = blocks_index(start);
	if (i == nblocks || blocks[i].start != start || blocks[i].lost) {
		ret = -EINVAL;
		goto out_unlock;
	}
	b = &blocks[i];
	if (aperture.reserved) {
		p = mmap(ptr, (size_t)b->size, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
		if (p == MAP_FAILED)
			ret = errno > 0 ? -errno : -ENOMEM;
	} else if (munmap(ptr, (size_t)b->size)) {
		ret = errno > 0 ? -errno : -EINVAL;
	}
	aperture.allocations--;
	aperture.allocated -= b->size;
	if (ret) {
		/* Whatever is there now is not ours to hand out or unmap. */
		b->lost = true;
		goto out_unlock;
	}
	memmove(b, b + 1, (nblocks - i - 1) * sizeof(*b));
	nblocks--;
out_unlock:
	pthread_mutex_unlock(&aperture_lock);
	return ret;
}
