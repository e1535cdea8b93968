/*
 * The tracer at a panic: its panic hook (<kernel/panic.h> PANIC_HOOK) and
 * the options that choose what a panic dumps (panic.dump=,
 * panic.dump.last=, and the test facility panic.inject=).  The panic
 * path owns the order (its P1..P6) and the lines; the tracer adds its
 * words to them and does its part at each phase:
 *
 *   stop         recording off on every CPU's buffer (any CPU may, at any
 *                time; several panicking CPUs may at once: it only clears)
 *   owner        " in_tracer=<yes|no> recording=off": whether a writer of
 *                the owner's buffer was between reserve and commit
 *   stopped_cpu  " in_tracer=<yes|no>", " flush=<rc>": the stopped CPU ends
 *                its own tail page (only the owning CPU may); a writer it
 *                interrupted keeps its page unpublished
 *   stopped_all  " flush=<rc> dump=<panic.dump> last=<n>": the owner's own
 *                tail page
 *   end          seal the persistent range with how the boot ended (every
 *                writer stopped: recording off, each other CPU halted or
 *                named), then the dumps panic.dump= lists, from a walk of
 *                the buffers (no CPU asked for anything)
 */
#include <stdbool.h>
#include <stdint.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/dump.h"
#include "kernel/panic.h"
#include "kernel/persist.h"
#include "kernel/tracing.h"
#include "lib/format.h"

#define NEST_LEVELS	((1u << RB_NEST_MAX) - 1)	/* the nest word's Ln bits */

static const char *const injects[] = { "none", "dump", NULL };

static char panic_dump_sel[32] = "text";
static uint64_t panic_dump_last = 100;
static int panic_inject;		/* 1: fault once the dump has begun */

CMDLINE_OPTION(panic_dump, .name = "panic.dump", .type = OPT_LIST, .var = panic_dump_sel,
	       .size = sizeof(panic_dump_sel), .choices = dump_choices,
	       .help = "what a panic dumps: text, bin, usb (comma list) or none");
bool panic_dump_has(const char *item)
{
	return cmdline_list_has(panic_dump_sel, item);
}

CMDLINE_OPTION(panic_dump_last, .name = "panic.dump.last", .type = OPT_UINT,
	       .var = &panic_dump_last, .min = 0, .max = 100000000,
	       .help = "events in a panic's text dump, the most recent, all CPUs merged; "
		       "0 = all");
CMDLINE_OPTION(panic_inject, .name = "panic.inject", .type = OPT_ENUM, .var = &panic_inject,
	       .choices = injects,
	       .help = "test facility: dump = fault again inside the panic dump");

/* The calling CPU was stopped inside a write of its own buffer. */
static bool in_tracer(void)
{
	struct rb_cpu_buffer *cb = this_cpu_rb();

	return cb && (__atomic_load_n(&cb->nest, __ATOMIC_RELAXED) & NEST_LEVELS);
}

static void panic_stop(void)
{
	tracing_stop();
}

static void panic_owner(struct kbuf *state)
{
	kbuf_printf(state, " in_tracer=%s recording=off", in_tracer() ? "yes" : "no");
}

static void panic_stopped_cpu(struct kbuf *where, struct kbuf *done)
{
	bool busy = in_tracer();	/* before the flush, as the writer left it */
	int fl = ring_buffer_flush(this_cpu_rb());

	kbuf_printf(where, " in_tracer=%s", busy ? "yes" : "no");
	kbuf_printf(done, " flush=%d", fl);
}

static void panic_stopped_all(struct kbuf *done)
{
	int fl = ring_buffer_flush(this_cpu_rb());

	kbuf_printf(done, " flush=%d dump=%s last=%llu", fl, panic_dump_sel,
		    (unsigned long long)panic_dump_last);
}

static __noinline void inject_fault(void)
{
	volatile uint64_t *unmapped = (volatile uint64_t *)0x00007F0000000000ull;

	printk("panic: faulting in the dump on purpose (panic.inject=dump)\n");
	(void)*unmapped;
}

static void panic_end_trace(uint32_t end)
{
	persist_mark_end(end);	/* every writer stopped: seal the range */
	if (cmdline_list_has(panic_dump_sel, "none"))
		return;
	if (panic_inject)
		inject_fault();
	dump_panic(cmdline_list_has(panic_dump_sel, "text"),
		   cmdline_list_has(panic_dump_sel, "bin"),
		   cmdline_list_has(panic_dump_sel, "usb"), panic_dump_last);
}

PANIC_HOOK(tracer, .name = "tracer", .stop = panic_stop, .owner = panic_owner,
	   .stopped_cpu = panic_stopped_cpu, .stopped_all = panic_stopped_all,
	   .end = panic_end_trace);
