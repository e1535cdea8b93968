/*
 * Trace dumps: text (ftrace layout) and binary frames on the serial console,
 * and the same binary frames saved into TRACE.BIN on the USB stick.
 */
#ifndef KERNEL_DUMP_H
#define KERNEL_DUMP_H

#include <stdbool.h>
#include <stdint.h>

#define DUMP_ALL_CPUS	UINT32_MAX

/* What a dump selection option (dump=, panic.dump=, persist.dump=) lists:
 * "text", "bin", "usb", "none" (OPT_LIST choices, NULL-terminated). */
extern const char *const dump_choices[];

/*
 * Take what the buffers hold (once per call), then print it. A Ctrl-C
 * (console_cancelled()) cuts either dump short, at a line or a page, with a
 * last line saying so; a binary one still ends with STATS and an END frame
 * flagged DUMP_END_CUT.
 */
bool dump_text(uint32_t cpu, uint64_t last);
bool dump_bin(uint32_t cpu);
/* The frames dump_bin() sends, saved after the stick's earlier saves (<usb/stick.h>). */
bool dump_usb(uint32_t cpu);
/* dump=usb or panic.dump=usb: find the stick at boot, not at the first save. */
void dump_prepare(void);
/* The dumps dump= asks for, as run=demo does at its end. */
bool dump_default(void);
/* dump.last=: the events a text dump shows when not told (0: all). */
uint64_t dump_default_last(void);
/*
 * At a panic, the other CPUs stopped (each flushed its own tail page): the
 * same dumps, all CPUs, from a walk of the buffers (nothing taken: the next
 * boot finds the same events), asking no CPU for anything from then on.
 */
bool dump_panic(bool text, bool bin, bool usb, uint64_t last);
/* Does panic.dump= list item ("usb": the stick is looked for at boot)? */
bool panic_dump_has(const char *item);

/*
 * A dump's head into sink: BEGIN (nr_cpus, the clock rate), then the
 * events' descriptions (enabled: as dump_write_events()), the kernel's
 * symbols and trace_printk formats; PACK frames from then on with pack
 * (its caller's own memory), plain ones with NULL.  For the stream of trace.record=usb,
 * which then sends its own CLOCK, PAGE, STATS and END frames; its id from
 * dump_new_id(), which no snapshot shares.
 */
struct dump_writer;
struct trace_sink;
struct dump_pack;
void dump_write_head(struct dump_writer *w, const struct trace_sink *sink, uint16_t id,
		     uint32_t nr_cpus, uint64_t tsc_hz, uint64_t tsc_err_ppb,
		     const uint8_t *enabled, struct dump_pack *pack);

/* mem when dump.encoding= packs (the default), else NULL: the head's pack argument. */
struct dump_pack *dump_packer(struct dump_pack *mem);
uint16_t dump_new_id(void);

/* One CPU's clock as a dump describes it (conversion, skew, trust). */
struct dump_clock;
void dump_cpu_clock(uint32_t cpu, struct dump_clock *out);

/*
 * A snapshot built from walks (<trace/ring_walk.h>), e.g. of the previous
 * boot's buffers: begin (room for max_pages pages of nr_cpus CPUs, and the
 * clock rate of the boot that wrote them), then each CPU's pages oldest
 * first (dump_walk_page() is a persist_check() page callback) and its
 * counters and clock, then end; dump_walked() prints it as text and/or
 * binary, and/or saves it to the stick.  It replaces the last snapshot.
 */
struct rb_walk_page;
struct dump_stats;
bool dump_walk_begin(uint32_t nr_cpus, uint64_t max_pages, uint64_t tsc_hz, uint64_t err_ppb);
int dump_walk_page(void *ctx, uint32_t cpu, const struct rb_walk_page *pg);
void dump_walk_cpu(uint32_t cpu, const struct dump_stats *st, const struct dump_clock *clk);
void dump_walk_end(void);
bool dump_walked(bool text, bool bin, bool usb, uint64_t last, const uint8_t *enabled);

#endif
