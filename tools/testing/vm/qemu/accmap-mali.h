/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap-mali: what the virt machine needs to create and wire the device
 * (accmap-mali.c says what it is).
 */
#ifndef HW_MISC_ACCMAP_MALI_H
#define HW_MISC_ACCMAP_MALI_H

#include "qom/object.h"

#define TYPE_ACCMAP_MALI "accmap-mali"
OBJECT_DECLARE_SIMPLE_TYPE(AccmapMaliState, ACCMAP_MALI)

/* The interrupt outputs, in the order of the binding's interrupt-names. */
enum {
    AM_IRQ_JOB,
    AM_IRQ_MMU,
    AM_IRQ_GPU,
    AM_IRQ_COUNT,
};

#endif /* HW_MISC_ACCMAP_MALI_H */
