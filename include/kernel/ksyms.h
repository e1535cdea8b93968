/*
 * Kernel symbol table for backtraces. Generated at build time from the
 * first link (scripts/gen-ksyms.sh) and linked into .ksyms in the second.
 */
#ifndef KERNEL_KSYMS_H
#define KERNEL_KSYMS_H

#include <stdint.h>

/* Name of the function containing addr and the offset into it, or NULL. */
const char *ksym_lookup(uint64_t addr, uint64_t *offset);

#endif
