/*
 * Panic: one report for the whole machine. The first CPU to panic owns it:
 * recording stops on every CPU, the others are stopped by an NMI (each
 * prints where it was), the trace is dumped as panic.dump= says, and the
 * machine ends as panic.action= says. See docs/output.md for the lines.
 *
 * The panic path knows no subsystem: recording, flushing and dumping are
 * the tracer's, which registers them with PANIC_HOOK() below.
 */
#ifndef KERNEL_PANIC_H
#define KERNEL_PANIC_H

#include <stdbool.h>
#include <stdint.h>
#include <arch/trap.h>
#include "baretrace/compiler.h"

/*
 * A fatal trap reaches the panic through <arch/trap.h>'s TRAP_FATAL(),
 * which kernel/panic.c registers: its begin() (any CPU, any context,
 * interrupts off) returns only to the CPU that owns the report; a CPU
 * that panics while another reports waits there for its NMI, and the
 * owner panicking again (a fault during its own report) prints one line
 * and ends. Its end(), after the owner's register report, stops the
 * others, dumps and ends, recording how (the watchdog's or a fault) as
 * the way the boot ended. Its nmi(), from every NMI, stops a CPU that
 * another's report asks to stop.
 */

/*
 * Panic hooks: a subsystem with something to save at a panic (the
 * tracer: recording off, tail pages flushed, the range sealed, the dump)
 * registers what it does at each phase with PANIC_HOOK() in the
 * "panic_hooks" linker section, next to its code (as CPU_HOOK() does for
 * bring-up); the panic path calls every hook in link order, knows none of
 * them, and prints the words they add to its lines:
 *
 *   stop()        panic_begin(), on every CPU that panics (several may, at
 *                 once), before the report is claimed: what must stop
 *                 before anything else happens (the trace ends at the fault)
 *   owner(state)  the owner, after its register report, before it stops the
 *                 others: words for "panic: cpu=<n>..." (this CPU's state)
 *   stopped_cpu(where, done)
 *                 each other CPU, on itself, in the NMI that stops it, one
 *                 CPU at a time: its own part (only it may do it), and
 *                 words for its "panic: stopped cpu=<n>..." line: where it
 *                 was, what was done
 *   stopped_all(done)
 *                 the owner, every other CPU stopped or given up on: its
 *                 own part, words for "panic: stopped=<a>/<n>..."
 *   end(end)      the owner, after that line: what the report ends with
 *                 (end: how the boot ended, a PERSIST_END_*); it may fault
 *
 * Any of them may be NULL. Words go into a struct kbuf (<lib/format.h>),
 * each with its leading space. Hooks run with interrupts off, in NMI
 * context for stopped_cpu, with the console in panic mode: no locks, no
 * allocation, no other CPU asked for anything.
 */
struct kbuf;

struct panic_hook {
	const char *name;					/* the subsystem */
	void (*stop)(void);					/* or NULL */
	void (*owner)(struct kbuf *state);			/* or NULL */
	void (*stopped_cpu)(struct kbuf *where, struct kbuf *done);	/* or NULL */
	void (*stopped_all)(struct kbuf *done);			/* or NULL */
	void (*end)(uint32_t end);				/* or NULL */
};

#define PANIC_HOOK(id, ...)						\
	static const struct panic_hook __panic_hook_##id		\
	__section("panic_hooks") __used __aligned(8) = { __VA_ARGS__ }

#endif
