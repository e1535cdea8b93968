/*
 * The function tracer's site table and filters, the portable half
 * (kernel/tracer/ftrace/ftrace_sites.c): no x86 and no kernel service, so the
 * host tests run it unchanged.
 *
 * A site is the 5 bytes of NOPs GCC puts at the entry of a function built
 * with -fpatchable-function-entry=5, which lists each site's address in the
 * __patchable_function_entries section, in link order. ftrace_sites_prepare() turns
 * that list into the table the tracer uses: ascending, no duplicates,
 * every address inside the kernel's code (a site outside it, e.g. in code
 * freed after boot, is dropped).
 *
 * Filters are comma lists of names and globs ('*' any run of characters,
 * '?' one character), as Linux's set_ftrace_filter takes them. Applying
 * one sets a bit in each matching site's flags byte and names, in one
 * line, the items that matched nothing.
 */
#ifndef KERNEL_FTRACE_SITES_H
#define KERNEL_FTRACE_SITES_H

#include <stdbool.h>
#include "trace/event_select.h"	/* trace_glob_match() */
#include <stddef.h>
#include <stdint.h>

#define FTRACE_LIST_MAX		256	/* bytes of a filter list, NUL included */

/*
 * Sort loc[0..n) ascending in place, drop zeros, duplicates and addresses
 * outside [text_lo, text_hi - 5]; returns how many remain (at the front).
 * *dropped counts the entries removed.
 */
unsigned ftrace_sites_prepare(uint64_t *loc, unsigned n, uint64_t text_lo, uint64_t text_hi,
			      unsigned *dropped);

/* Index of addr in the prepared table, or -1. */
int ftrace_sites_find(const uint64_t *sites, unsigned n, uint64_t addr);

/* The name of site i (NULL: unknown, matched by no filter). */
typedef const char *(*ftrace_name_fn)(unsigned i, void *arg);

/*
 * For each item of the comma list, set bit in flags[i] of every site whose
 * name matches it (the bit is first cleared everywhere). Empty items are
 * ignored. The items that matched no site are written, comma-separated,
 * to unknown (cut to unknown_len); returns how many there were.
 */
unsigned ftrace_filter_apply(const char *list, unsigned n, ftrace_name_fn name, void *arg,
			     uint8_t *flags, uint8_t bit, char *unknown, size_t unknown_len);

#endif
