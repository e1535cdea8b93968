/*
 * Panic: one report for the whole machine. The first CPU to panic owns it:
 * recording stops on every CPU, the others are stopped by an NMI (each
 * prints where it was), the trace is dumped as panic.dump= says, and the
 * machine ends as panic.action= says. See docs/output.md for the lines.
 */
#ifndef KERNEL_PANIC_H
#define KERNEL_PANIC_H

#include <stdbool.h>
#include <stdint.h>
#include <arch/trap.h>

/*
 * First call of a fatal path (any CPU, any context, interrupts off).
 * Returns only to the CPU that owns the report. A CPU that panics while
 * another reports waits there for its NMI; the owner panicking again
 * (a fault during its own report) prints one line and ends.
 */
void panic_begin(struct trap_frame *f);
/* The owner, after its register report: stop the others, dump, end. */
void __attribute__((noreturn)) panic_end(void);
/* The same, recording end (a PERSIST_END_*, e.g. the watchdog's) as how the boot ended. */
void __attribute__((noreturn)) panic_end_as(uint32_t end);
/* From the NMI handler: stops this CPU for good if another one panics; else returns. */
void panic_nmi(struct trap_frame *f);
/* Does panic.dump= list item ("usb": the stick is looked for at boot)? */
bool panic_dump_has(const char *item);

#endif
