/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRIU's logger (criu/log.h), which the criu binary exports to plugins:
 * what a plugin prints with it lands in criu's log (-o), among criu's own
 * lines.  Declared weak, so that a criu without it still loads the
 * plugin, which then writes to stderr.
 */
#ifndef ACCMAP_CRIU_LOG_H
#define ACCMAP_CRIU_LOG_H

#define CRIU_LOG_ERROR	1

__weak __printf(2, 3)
void print_on_level(unsigned int loglevel, const char *format, ...);

#endif /* ACCMAP_CRIU_LOG_H */
