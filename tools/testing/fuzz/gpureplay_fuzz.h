/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GPUReplay importer's fuzz input format, shared by the libFuzzer
 * harness and the corpus regression test (see gpureplay_fuzz.c).
 */
#ifndef ACCMAP_GPUREPLAY_FUZZ_H
#define ACCMAP_GPUREPLAY_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "gpureplay.h"

/* Three u32 lengths: gr_pgt, gr_mem_contents, gr_io_history. */
#define GPUREPLAY_FUZZ_HDR	12

/**
 * gpureplay_fuzz_split() - cut one fuzz input into the four files
 * @data: the input
 * @size: its bytes
 * @in: set to point into @data (all empty if @size is below the header)
 */
void gpureplay_fuzz_split(const uint8_t *data, size_t size,
			  struct gpureplay_input *in);

/**
 * gpureplay_fuzz_one() - import one fuzz input
 * @data: the input
 * @size: its bytes
 * @err: why the input was refused
 *
 * Aborts if an accepted recording does not encode and read back.
 *
 * Return: what gpureplay_import() returned.
 */
int gpureplay_fuzz_one(const uint8_t *data, size_t size,
		       struct accmap_rec_error *err);

#endif /* ACCMAP_GPUREPLAY_FUZZ_H */
