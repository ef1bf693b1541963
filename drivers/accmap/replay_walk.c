// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: a Mali GPU MMU's page-table walk, done in software.
 *
 * The software Mali model translates every GPU address through this, and
 * the KUnit tests use it to check what the builder (replay_pgtable.c)
 * wrote.  It is written apart from the builder on purpose: it shares no
 * code with it, reads every entry through a callback as the GPU would read
 * memory, and decodes entries by the formats' rules rather than by what
 * the builder happens to write.  A builder bug therefore shows up as a
 * walk that disagrees, not as two copies of the same mistake.
 *
 * The walk, for both formats: TRANSTAB names a level-0 table; each level
 * indexes its table with nine bits of the address (47:39, 38:30, 29:21,
 * 20:12); an entry is a table, a leaf or invalid by its two low bits.
 *
 *   bits 1:0   levels 0-2   level 3
 *   0b11       table        page (AArch64 4K) / invalid (Mali LPAE)
 *   0b01       block (1-2)  invalid (AArch64 4K) / page (Mali LPAE)
 *   0b00/0b10  invalid      invalid
 *
 * A level-0 0b01 entry would be a 512 GiB block, which neither format has:
 * it is invalid.  Leaves carry the memory attribute index in bits 4:2.
 * AArch64 4K leaves need the access flag (bit 10); access bits 7:6 are 1
 * for read/write, 3 for read-only and grant nothing at 0 or 2; bit 54 is
 * execute-never.  Mali LPAE leaves grant read with bit 6 and write with
 * bit 7, have no access flag, and forbid execution if either of bits 54
 * and 53 is set.
 *
 * Output addresses are bits 47:12 of a page, 47:21 of a 2 MiB block and
 * 47:30 of a 1 GiB block: address bits below a block's size are ignored,
 * as are the bits above 47 except those named here.
 */

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/string.h>

#include "mali_regs.h"
#include "replay_walk.h"

#define WALK_IA_BITS		48
#define WALK_OA_MASK		GENMASK_ULL(47, 12)
#define WALK_LAST		3

#define WALK_KIND_MASK		GENMASK_ULL(1, 0)
#define WALK_KIND_3		0x3ULL
#define WALK_KIND_1		0x1ULL

#define WALK_ATTR_SHIFT		2
#define WALK_ATTR_MASK		0x7

#define WALK_A64_AF		BIT_ULL(10)
#define WALK_A64_AP_SHIFT	6
#define WALK_A64_AP_MASK	0x3
#define WALK_A64_AP_RW		1
#define WALK_A64_AP_RO		3
#define WALK_A64_XN		BIT_ULL(54)

#define WALK_LPAE_R		BIT_ULL(6)
#define WALK_LPAE_W		BIT_ULL(7)
#define WALK_LPAE_XN		(BIT_ULL(54) | BIT_ULL(53))

/* The lowest input address bit that indexes the table at @level. */
static unsigned int walk_shift(unsigned int level)
{
	return 39 - 9 * level;
}

/* The level-0 table TRANSTAB names, or false if it names none. */
static bool walk_root(u32 format, u64 transtab, u64 *table)
{
	switch (format) {
	case ACCMAP_PGT_MALI_AARCH64_4K:
		/*
		 * The register is the table's address and nothing else: low
		 * bits set most likely mean an LPAE-style value, so refuse
		 * them rather than mask them.
		 */
		if (transtab & ~WALK_OA_MASK)
			return false;
		*table = transtab;
		return true;
	case ACCMAP_PGT_MALI_LPAE:
		/* Bits 1:0 select table walks; the cache hints do not matter. */
		if ((transtab & MALI_LPAE_TRANSTAB_ADRMODE_MASK) !=
		    MALI_LPAE_TRANSTAB_ADRMODE_TABLE)
			return false;
		*table = transtab & WALK_OA_MASK;
		return true;
	}
	return false;
}

/* What a leaf grants, in ACCMAP_PGT_PERM_* bits. */
static u32 walk_perm(u32 format, u64 pte)
{
	u32 perm = 0;

	if (format == ACCMAP_PGT_MALI_LPAE) {
		if (pte & WALK_LPAE_R)
			perm |= ACCMAP_PGT_PERM_READ;
		if (pte & WALK_LPAE_W)
			perm |= ACCMAP_PGT_PERM_WRITE;
		if (!(pte & WALK_LPAE_XN))
			perm |= ACCMAP_PGT_PERM_EXEC;
		return perm;
	}

	switch ((pte >> WALK_A64_AP_SHIFT) & WALK_A64_AP_MASK) {
	case WALK_A64_AP_RW:
		perm = ACCMAP_PGT_PERM_READ | ACCMAP_PGT_PERM_WRITE;
		break;
	case WALK_A64_AP_RO:
		perm = ACCMAP_PGT_PERM_READ;
		break;
	default:
		/* Privileged-only encodings: the GPU gets nothing at all. */
		return 0;
	}
	if (!(pte & WALK_A64_XN))
		perm |= ACCMAP_PGT_PERM_EXEC;
	return perm;
}

static bool walk_is_table(unsigned int level, u64 pte)
{
	return level < WALK_LAST && (pte & WALK_KIND_MASK) == WALK_KIND_3;
}

static bool walk_is_leaf(u32 format, unsigned int level, u64 pte)
{
	u64 kind = pte & WALK_KIND_MASK;

	if (level == WALK_LAST)
		return kind == (format == ACCMAP_PGT_MALI_LPAE ? WALK_KIND_1 :
							       WALK_KIND_3);
	return level > 0 && kind == WALK_KIND_1;
}

/**
 * accmap_walk() - translate one GPU virtual address as the GPU MMU would
 * @format:   ACCMAP_PGT_*
 * @transtab: the address space's TRANSTAB value
 * @va:       the GPU virtual address
 * @read64:   reads the little-endian 64-bit word at device address @pa
 *            into *@val in CPU order; non-zero if nothing is there
 * @priv:     passed to @read64
 * @out:      where the walk ended; always filled
 *
 * Follows the tables from the root, one @read64 per level.  On success
 * @out holds the output address of @va (the leaf's base plus the offset
 * of @va in it), the leaf's level, size, permissions, attribute index and
 * raw entry.  Otherwise @out->status says why the walk stopped and
 * @out->level and @out->pte where; the other fields are 0.
 *
 * An AArch64 4K @transtab with any bit set outside 47:12 is refused
 * (ACCMAP_WALK_BAD_ROOT) rather than masked: it is most likely a Mali
 * LPAE value.  A Mali LPAE @transtab needs 0b11 in bits 1:0; its other
 * low bits (cache hints) are ignored.
 *
 * Return: 0 if @va translates; -EFAULT if the walk stopped at a fault;
 * -EINVAL for an unknown @format (@out->status is then
 * ACCMAP_WALK_BAD_ROOT).
 */
int accmap_walk(u32 format, u64 transtab, u64 va,
		int (*read64)(void *priv, u64 pa, u64 *val), void *priv,
		struct accmap_walk *out)
{
	unsigned int level;
	u64 table, pte;

	memset(out, 0, sizeof(*out));
	if (format >= ACCMAP_PGT_COUNT) {
		out->status = ACCMAP_WALK_BAD_ROOT;
		return -EINVAL;
	}
	if (va >> WALK_IA_BITS) {
		out->status = ACCMAP_WALK_ADDRESS_SIZE;
		return -EFAULT;
	}
	if (!walk_root(format, transtab, &table)) {
		out->status = ACCMAP_WALK_BAD_ROOT;
		return -EFAULT;
	}

	for (level = 0; level <= WALK_LAST; level++) {
		unsigned int shift = walk_shift(level);
		u64 index = (va >> shift) & (ACCMAP_PGT_ENTRIES - 1);

		out->level = level;
		if (read64(priv, table + index * sizeof(u64), &pte)) {
			out->status = ACCMAP_WALK_BUS;
			return -EFAULT;
		}
		out->pte = pte;

		if (walk_is_table(level, pte)) {
			table = pte & WALK_OA_MASK;
			continue;
		}
		if (!walk_is_leaf(format, level, pte))
			break;
		if (format == ACCMAP_PGT_MALI_AARCH64_4K &&
		    !(pte & WALK_A64_AF)) {
			out->status = ACCMAP_WALK_ACCESS_FLAG;
			return -EFAULT;
		}

		out->status = ACCMAP_WALK_OK;
		out->size = 1ULL << shift;
		out->pa = (pte & WALK_OA_MASK & ~(out->size - 1)) |
			  (va & (out->size - 1));
		out->perm = walk_perm(format, pte);
		out->attr = (pte >> WALK_ATTR_SHIFT) & WALK_ATTR_MASK;
		return 0;
	}

	out->status = ACCMAP_WALK_TRANSLATION;
	return -EFAULT;
}
