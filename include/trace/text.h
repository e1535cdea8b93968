/*
 * Trace text in the layout of ftrace's trace file, generic and
 * freestanding: the kernel's `dump text` and the host decoder both print
 * through it, so the two print byte-identical text from the same pages.
 *
 *   # tracer: baretrace
 *   #
 *   # entries-in-buffer/entries-written: 1183/1200   #P:2
 *   # cpu=0 entries=0 overrun=17 dropped=0 commit_overrun=0 read=683 lost=17
 *   # cpu=1 entries=0 overrun=0 dropped=0 commit_overrun=0 read=500 lost=0 clock=untrusted
 *   # U: clock=untrusted: the kernel could not bound this CPU's TSC skew, ...
 *   #
 *   #      TASK-PID   CPU# FLAGS       TIMESTAMP  FUNCTION
 *   #         | |      |     |             |      |
 *          task-0     [000] ....     0.012345678: producer: seq=1 value=7
 *   CPU:0 [LOST 17 EVENTS]
 *           irq-1     [001] ..hU     0.012346001: lapic_tick: tick=4
 *
 * Event lines: <context>-<cpu> [<cpu>] <flags> <seconds>.<9 digits>: <name>:
 * <field>=<value> ...; the context is the writer's level (task, softirq,
 * irq, nmi) and the flags are four characters:
 *   1  '.'   (ftrace: interrupts disabled; not recorded here)
 *   2  '.'   (ftrace: need-resched; no scheduler here)
 *   3  '.' task, 's' softirq, 'h' irq, 'z' NMI (as ftrace's third column)
 *   4  '.' or 'U' when the CPU's clock is untrusted, missing or
 *      invalid: its stamps are not comparable with other CPUs' (the cpu=
 *      line says which, and a "# U:" line under them what it means; for
 *      an invalid clock one line per CPU, with what is wrong).  A clock
 *      trusted until an instant (struct dump_trust) has 'U' only on the
 *      events at or after it; its cpu= line says untrusted_from=<s>.
 * Header lines about clocks, after the cpu= and events lines:
 *   # clock: ...   the calibration's vote was disputed (struct dump_calib)
 *   # order: cpu=<a> <b>=<ns> ...   per pair of CPUs, the ns within which
 *                  the merged order of their events is not decided: the two
 *                  skew bounds added (trace_clock_skew_bound_ns()), or
 *                  "unbounded"; "CPU:<b> [ORDER UNDECIDED: ...]" lines mark
 *                  adjacent events within it (opts.mark_order)
 * Events whose id is unknown or whose payload does not match their id
 * print as "unknown: id=<id> bytes=<payload bytes>".  A page whose records
 * stop making sense prints "CPU:<n> [MALFORMED PAGE pos=<p> at offset <o>]"
 * and the rest of that page is skipped.
 *
 * Order: all selected CPUs merged by converted ns, each CPU with its own
 * clock_conv; ties go to the lower CPU id, and one CPU's items keep their
 * buffer order.  "CPU:<n> [LOST <m> EVENTS]" stands where the page that
 * reported the loss begins: it is placed at that page's base stamp, so it
 * comes right before the page's first event in that CPU's order.
 *
 * Damage (decoder only): "# damaged: <what>" right after the tracer line
 * when the capture lost frames (opts.damaged), and events lost because
 * frames went missing in the capture, not in the ring, print apart as
 * "CPU:<n> [LOST <m> EVENTS IN TRANSIT]" (trace_text_cpu.transit).
 */
#ifndef TRACE_TEXT_H
#define TRACE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trace/clock.h>
#include <trace/dump_format.h>
#include <trace/events.h>
#include <trace/event_fmt.h>
#include <trace/sink.h>

#define TRACE_TEXT_ALL_CPUS	UINT32_MAX

/* How far a CPU's timestamps can be trusted. */
enum trace_clock_state {
	TRACE_CLOCK_TRUSTED = 0,	/* skew bounded, no warps */
	TRACE_CLOCK_UNTRUSTED = 1,	/* the kernel could not bound its skew */
	TRACE_CLOCK_MISSING = 2,	/* no CLOCK frame in the dump (decoder only) */
	TRACE_CLOCK_INVALID = 3,	/* its CLOCK fails trace_clock_check() */
};

/*
 * Slack of the offset check of trace_clock_check(): an offset may exceed
 * the measured skew's span in ns by this much.
 *   - The kernel derives offset_ns = -skew_cycles * 1e9 / hz, truncated:
 *     never more than the span, which is (|skew| + uncertainty) * 1e9 / hz.
 *   - A kernel that converts the skew with mult / 2^shift instead of
 *     1e9 / hz differs by the relative error of mult, below 1 ppm for
 *     every supported rate (docs/clock.md): the PPM part.
 *   - Roundings of either derivation, and the check's own floor: a few
 *     ns.  The NS part is far above them and still 20 times below the
 *     20 us past which the kernel calls a CPU's skew unbounded, so an
 *     offset let through is one a trusted CPU could have.
 */
#define TRACE_CLOCK_OFFSET_SLACK_NS	1000u	/* ns, absolute */
#define TRACE_CLOCK_OFFSET_SLACK_PPM	1u	/* of the span, relative */

/*
 * Whether a CLOCK frame's conversion can be used as sent: 0 if it has the
 * shape the kernel's clock code gives and its offset is explained, -1
 * otherwise, with a one-line reason in why[0 .. len) (NUL-terminated,
 * truncated to fit; why may be NULL).  Fails, in this order:
 *   - no conversion: mult 0 (all fields 0 is how the kernel says "none");
 *   - clock_conv_check() fails: shift above CLOCK_SHIFT_MAX, or ns_frac
 *     not below 2^shift;
 *   - hz 0 or above CLOCK_HZ_MAX (clock_conv_init() takes neither);
 *   - mult is not 10^9 * 2^shift / hz rounded down or up;
 *   - skew_uncert_cycles negative;
 *   - |offset_ns| larger than (|skew_cycles| + skew_uncert_cycles) cycles
 *     at hz, plus the slack above: an offset no measured skew explains.
 * 64-bit arithmetic and 128-bit products only: safe in the kernel.
 */
int trace_clock_check(const struct dump_clock *c, char *why, size_t len);

/*
 * The state of a CPU's clock as a dump describes it: the one rule the
 * kernel and the decoder both apply.  INVALID when trace_clock_check()
 * fails (then the decoder converts with a stand-in; the kernel, which
 * never sends such a frame, prints the times as the conversion makes
 * them), else TRUSTED or UNTRUSTED as the frame's flag says.
 */
uint32_t trace_clock_state(const struct dump_clock *c);

/*
 * How far c's converted times can be off the boot CPU's, in ns, rounded
 * up: its skew bound, plus the skew itself when the skew lies within its
 * bound, since the kernel then does not apply it (docs/clock.md, "Skew
 * between CPUs").  The boot CPU's is 0.  UINT64_MAX when c has no usable
 * rate or a negative bound.  Whether the bound holds is the clock state's
 * business: the text uses it only for trusted clocks (and a clock trusted
 * until an instant, before it).
 */
uint64_t trace_clock_skew_bound_ns(const struct dump_clock *c);

/* One CPU's part of the trace. */
struct trace_text_cpu {
	uint32_t cpu;			/* CPU id, as printed */
	uint32_t clock_state;		/* enum trace_clock_state */
	const struct clock_conv *clock;	/* its cycles->ns conversion; never NULL */
	const char *clock_note;		/* INVALID: "<what is wrong>; its times
					 * <what stands in>", for its "# U:" line;
					 * NULL: a generic line */
	const struct dump_trust *trust;	/* UNTRUSTED from trust->from_ns on, trusted
					 * before it; NULL: as clock_state says */
	const struct dump_clock *clock_frame; /* its CLOCK: skew and bound for the
					 * order lines; NULL: no bound known */
	const struct dump_stats *stats;	/* its counters, NULL if unknown */
	uint32_t page_size;		/* ring page size, bytes */
	uint32_t nr_pages;		/* entries in pages[] (and lost[]) */
	const void *const *pages;	/* in the order taken; 8-byte aligned, each
					 * readable for 48 + its commit bytes */
	const uint64_t *lost;		/* events lost before each page (overrun +
					 * dropped), or NULL: the page header's lost */
	const uint64_t *transit;	/* of lost[]: events lost in the capture (frames
					 * missing; decoder only), or NULL: none */
};

/* The header's last lines: the columns, drawn as ftrace's legend is. */
#define TRACE_TEXT_LEGEND							\
	"# TASK-PID: <context>/<cpu>-<pid>, pid = 1 + 4 * cpu + context (task 0, "	\
	"softirq 1, irq 2, nmi 3), as in the trace.dat\n"				\
	"#                         _----=> '.' (ftrace: irqs-off)\n"			\
	"#                        / _---=> '.' (ftrace: need-resched)\n"		\
	"#                       | / _--=> '.' task, 's' softirq, 'h' irq, 'z' NMI\n"	\
	"#                       || / _-=> 'U' clock untrusted (ftrace: preempt-depth)\n" \
	"#                       ||| /\n"						\
	"#      TASK-PID   CPU#  ||||       TIMESTAMP  FUNCTION\n"			\
	"#         | |      |    ||||           |      |\n"

/* After it when function_graph lines are printed: their columns, as ftrace's. */
#define TRACE_TEXT_GRAPH_LEGEND							\
	"#   TIME           CPU    TASK/PID          DURATION     FUNCTION CALLS\n"	\
	"#        |          |      |    |            |    |      |   |   |   |\n"

/* Selections. */
struct trace_text_opts {
	uint64_t last;			/* only the last N events of the merged order; 0: all */
	uint32_t cpu;			/* only this CPU id; TRACE_TEXT_ALL_CPUS: every one */
	const struct trace_catalog *catalog; /* the events described; NULL: built-in */
	const struct trace_symbols *syms; /* for code addresses; NULL: none */
	const uint8_t *enabled;		/* events recording, by id; NULL: the catalog's flags */
	bool (*stop)(void *ctx);	/* asked before each line after the header: true ends
					 * the text there (summary's cut); NULL: never */
	void *stop_ctx;			/* its argument */
	const struct dump_calib *calib;	/* a disputed calibration, or NULL */
	bool mark_order;		/* an ORDER UNDECIDED line before each event whose
					 * order with the one before is not decided */
	const char *damaged;		/* a "# damaged: <it>" header line (decoder: what
					 * the capture lost), or NULL */
};

/*
 * Parse one selection argument, "last=N" (0: all) or "cpu=N", into *opts
 * (start from { .last = 0, .cpu = TRACE_TEXT_ALL_CPUS }).  Returns 0 if
 * taken, -1 if it is a selection with a bad number (opts untouched), 1 if
 * it is no selection at all.  The kernel's `dump text` and the decoder
 * read their selections with it.
 */
int trace_text_parse_arg(const char *arg, struct trace_text_opts *opts);

/* What was written, for callers and tests. */
struct trace_text_summary {
	uint64_t events;		/* events on the selected CPUs' pages */
	uint64_t printed;		/* event lines written */
	uint64_t unknown;		/* ... of them as "unknown" */
	uint64_t lost_lines;		/* LOST lines written */
	uint64_t lost_events;		/* events those lines count */
	uint64_t malformed;		/* MALFORMED PAGE lines written */
	uint64_t shown;			/* events of the selection written (last=, cut) */
	bool cut;			/* opts->stop ended the text early */
	uint64_t undecided;		/* printed events on a trusted clock whose order with
					 * the event printed before, of another CPU on a
					 * trusted clock, the skew bounds do not decide */
};

/* Scratch bytes trace_text_write() needs for nr_cpus CPUs. */
size_t trace_text_scratch_size(uint32_t nr_cpus);

/*
 * Write the text of the trace held in cpus[0 .. nr_cpus - 1] (one entry
 * per CPU id of the dump; "#P:" prints nr_cpus) through out.  scratch is
 * caller memory of at least trace_text_scratch_size(nr_cpus) bytes, 8-byte
 * aligned; nothing else is allocated, and nothing is kept after the call.
 * Pages are only read.  sum may be NULL.  Returns 0, or -1 (nothing
 * written) if scratch is too small or an entry has no clock.
 */
int trace_text_write(const struct trace_text_cpu *cpus, uint32_t nr_cpus,
		     const struct trace_text_opts *opts, void *scratch,
		     size_t scratch_size, const struct trace_sink *out,
		     struct trace_text_summary *sum);

#endif
