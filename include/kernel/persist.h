/*
 * The persistent trace range, kernel side (docs/persist.md): where it is
 * (trace.persist=), the previous boot's check and dump, this boot's ring
 * buffers in it, and the record of how this boot ended.  The layout and
 * the validator are portable: <trace/persist.h>.
 *
 * Boot order:
 *   memory_init()       persist_reserve(): the window is kept from the page
 *                       allocator before anything is allocated, so nothing
 *                       of this boot writes in it before it is checked
 *   tracing_init_boot() persist_boot(): check and report (and dump) what
 *                       the previous boot left, then lay this boot's
 *                       buffers out in it and give back what is not needed
 *   (each buffer)       persist_cpu_area() instead of the page allocator
 *   tracing_init()      persist_update(): every CPU's clock into the header
 *   panic, reboot       persist_mark_end(): how the boot ended, and a seal
 */
#ifndef KERNEL_PERSIST_H
#define KERNEL_PERSIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/bootinfo.h"

struct rb_cpu_buffer;

/*
 * From trace.persist= and the memory map: the window to keep out of the
 * page allocator, given what else is reserved.  False (and *out empty) if
 * persistence is off or the option cannot be honoured (one line says why).
 */
bool persist_reserve(const struct boot_info *bi, const struct phys_range *reserved,
		     unsigned nres, struct phys_range *out);

/*
 * Check and report the previous boot's range, then lay out this boot's for
 * nr_cpus CPUs of want pages each.  Returns the pages per CPU the range
 * holds (<= want), or 0 if the buffers come from the page allocator.
 */
uint32_t persist_boot(uint32_t nr_cpus, uint32_t want);

/* A new layout for a reconfiguration to want pages; the pages it holds, or 0. */
uint32_t persist_relayout(uint32_t want);

/* Whether this boot's buffers live in the range. */
bool persist_active(void);

/*
 * CPU c's part of the range for a ring of n pages: its buffer struct (and
 * the bytes it may take) and its n + 1 page addresses, written into the
 * range's page table.  False if c has no area or n is not the layout's.
 */
bool persist_cpu_area(uint32_t c, uint32_t n, struct rb_cpu_buffer **cb, size_t *cb_size,
		      void ***pages);
/* CPU c's buffer is built in its area (or gone, for present false). */
void persist_cpu_present(uint32_t c, bool present);

/* Every CPU's clock conversion and the TSC rate into the header. */
void persist_update(void);

/*
 * This boot ends (enum persist_end): record it, and seal every CPU's
 * buffer (CRCs of its state and pages) so the next boot can tell damage
 * from data.  Only with every writer quiescent: recording off and no
 * writer between reserve and commit, or its CPU stopped for good.
 * Safe at a panic: no lock, no allocation, no other CPU asked.
 */
void persist_mark_end(uint32_t end);

/*
 * Recording off (the shell's reboot): park every other CPU for good (from
 * its idle loop, interrupts off; bounded, a CPU not parked is named), turn
 * this CPU's interrupts off, and wait (bounded) for a writer still inside.
 */
void persist_quiesce(void);

/* One status line: "persist: off" or where the range is and what it holds. */
void persist_status(void);

#endif
