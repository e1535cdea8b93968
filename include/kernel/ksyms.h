/*
 * Kernel symbol table for backtraces. Generated at build time from the
 * first link (scripts/gen-ksyms.sh) and linked into .ksyms in the second.
 */
#ifndef KERNEL_KSYMS_H
#define KERNEL_KSYMS_H

#include <stdint.h>

/* Name of the function containing addr and the offset into it, or NULL. */
const char *ksym_lookup(uint64_t addr, uint64_t *offset);

/* The table itself, ascending: symbols, the i-th's name and address, its end. */
uint32_t ksym_count(void);
const char *ksym_at(uint32_t i, uint64_t *addr);
uint64_t ksym_end(void);

#endif
