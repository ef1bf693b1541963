/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: a Mali GPU MMU's page-table walk (replay_walk.c says how it
 * decodes the two formats).  The software model walks with it and the
 * KUnit tests check the builder's tables with it.  This header and
 * replay_walk.c use nothing but types and bit helpers, so that a GPU
 * device model outside the kernel can build them too.
 */
#ifndef _ACCMAP_REPLAY_WALK_H
#define _ACCMAP_REPLAY_WALK_H

#include <linux/types.h>

#include <uapi/linux/accmap.h>

/* Entries of a table page, at every level of both formats. */
#define ACCMAP_PGT_ENTRIES	512

/* Permissions of a mapping (the ACCMAP_REPLAY_MAP_* bits). */
#define ACCMAP_PGT_PERM_READ	ACCMAP_REPLAY_MAP_READ
#define ACCMAP_PGT_PERM_WRITE	ACCMAP_REPLAY_MAP_WRITE
#define ACCMAP_PGT_PERM_EXEC	ACCMAP_REPLAY_MAP_EXEC

/* Outcome of a walk. */
enum accmap_walk_status {
	ACCMAP_WALK_OK,
	ACCMAP_WALK_TRANSLATION,	/* invalid entry at @level */
	ACCMAP_WALK_ACCESS_FLAG,	/* leaf without the access flag */
	ACCMAP_WALK_ADDRESS_SIZE,	/* VA beyond the tables' reach */
	ACCMAP_WALK_BUS,		/* a table page could not be read */
	ACCMAP_WALK_BAD_ROOT,		/* TRANSTAB does not name tables */
};

/**
 * struct accmap_walk - where a walk ended
 * @status: ACCMAP_WALK_*
 * @level:  level of the leaf, or of the entry that stopped the walk
 * @pa:     the output address of the VA (ACCMAP_WALK_OK)
 * @size:   bytes the leaf maps (4 KiB page, 2 MiB or 1 GiB block)
 * @perm:   ACCMAP_PGT_PERM_* the leaf grants
 * @attr:   the leaf's memory attribute index
 * @pte:    the last entry read
 */
struct accmap_walk {
	enum accmap_walk_status status;
	u32 level;
	u64 pa;
	u64 size;
	u32 perm;
	u32 attr;
	u64 pte;
};

int accmap_walk(u32 format, u64 transtab, u64 va,
		int (*read64)(void *priv, u64 pa, u64 *val), void *priv,
		struct accmap_walk *out);

#endif /* _ACCMAP_REPLAY_WALK_H */
