/*
 * trace.record=usb|serial: the trace streamed while it is being recorded,
 * page by page, as trace-cmd record or LTTng's streaming mode do (not a
 * snapshot at the end): into TRACE.BIN on the stick (usb), or over the
 * console (serial: one recorder, two sinks).  A trace longer than the
 * ring is kept whole while the sink keeps up (and TRACE.BIN has room);
 * pages the writers overwrote or events they dropped before the consumer
 * came are counted, per page, as always.  Over the console, the console
 * is held for each frame (or group of frames), so other CPUs' lines come
 * out between frames, never inside one.
 *
 * CONTRACT
 *   Consumer: the boot CPU at task level, in record_poll(), which the jobs
 *   that record call between their own work (run=demo's loop on cpu 0,
 *   run=record), and in record_idle(), which the shell calls while it
 *   waits for a key (a stream from the shell's `start` to its `stop`):
 *   RECORD_IDLE_PAGES a call, so that typing stays responsive.  While a
 *   stream is open it is the buffers' only reader: those jobs take no dump
 *   meanwhile, the shell refuses `dump`, and a rebuild of the buffers ends
 *   the stream first.  Polled USB: no interrupt needed.
 *   Writers: every CPU, as always; nothing here slows them.
 *
 * A stream is one dump in one streaming save (<block/tracesave.h>):
 *
 *   record_begin()        BEGIN, EVENTS, SYMS, PRINTK, CLOCK x cpus
 *   record_poll() ...     PAGE for each complete page of any CPU, with the
 *                         overrun and dropped counts the reader was told
 *   record_end()          each CPU's tail page ended, the rest drained,
 *                         STATS x cpus, END, the mark
 *
 * Room for the STATS and END frames is kept back from the start, so a
 * stream that fills TRACE.BIN still ends whole: the page that does not
 * fit ends it (one line), and the in-memory trace goes on without it.
 */
#include <stddef.h>
#include <arch/percpu.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include <block/tracesave.h>
#include <usb/stick.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/dump.h"
#include "kernel/record.h"
#include "kernel/shell.h"
#include "kernel/trace_ctl.h"
#include "kernel/tracing.h"
#include "trace/dump_rb.h"
#include "trace/dump_write.h"

static const char *const record_names[] = { "none", "usb", "serial", NULL };
enum { RECORD_NONE, RECORD_USB, RECORD_SERIAL };
static int record_to;		/* index into record_names */
CMDLINE_OPTION(trace_record, .name = "trace.record", .type = OPT_ENUM, .var = &record_to,
	       .choices = record_names,
	       .help = "stream every page while run=demo or run=record traces: into TRACE.BIN "
		       "(usb), over the console (serial), or none");

static struct {
	bool open;		/* a stream is open */
	struct tracesave *s;	/* its save on the stick (usb), else NULL */
	uint64_t sent;		/* serial: bytes of frames sent */
	struct dump_writer w;	/* its frames */
	uint32_t nr_cpus;	/* CPUs it describes */
	uint64_t lost;		/* overrun + dropped, over its pages */
	uint64_t tail;		/* bytes kept back for STATS and END */
	long long t0;		/* when it began, ns */
	bool full;		/* it ended because TRACE.BIN was full */
	struct record_result last;	/* the last stream's, once ended */
} rec;

static struct dump_pack rec_pack;	/* the stream's packer: apart from dumps' */

/*
 * Pages one idle step of the shell writes at most.  The shell wakes 1000
 * times a second, so 2 a step drain up to 2000 pages (8 MB) a second, far
 * more than an idle machine records; a step that flushes the staging
 * buffer is one 64 KiB write (a few ms on a USB 2 stick), and two pages
 * over a 115,200-baud line take about 0.2 s of PACK frames at most.
 */
#define RECORD_IDLE_PAGES	2

static void sink_stream(void *ctx, const void *buf, size_t len)
{
	watchdog_touch();
	tracesave_put(ctx, buf, len);
}

/* serial: raw onto the console, which the caller holds for whole frames. */
static void sink_serial(void *ctx, const void *buf, size_t len)
{
	*(uint64_t *)ctx += len;
	watchdog_touch();
	console_write_raw_held(buf, len);
}

/*
 * Hold the console around frames that go over it (serial), so that no
 * other CPU's line lands inside one; lines wait and come out between
 * frames.  Returns the flags for hold_end(); 0 and nothing for usb.
 */
static uint64_t hold_begin(void)
{
	return record_to == RECORD_SERIAL ? console_hold() : 0;
}

static void hold_end(uint64_t flags)
{
	if (record_to == RECORD_SERIAL)
		console_release(flags);
}

bool record_enabled(void)
{
	return record_to != RECORD_NONE;
}

bool record_to_usb(void)
{
	return record_to == RECORD_USB;
}

bool record_active(void)
{
	return rec.open;
}

bool record_begin(void)
{
	struct trace_sink sink;
	uint64_t flags;
	uint16_t id;

	if (!record_enabled())
		return true;
	if (rec.open)
		record_end(NULL);
	rec.last = (struct record_result){ 0 };
	rec.nr_cpus = cpu_count;
	rec.tail = (uint64_t)rec.nr_cpus * (DUMP_FRAME_OVERHEAD + sizeof(struct dump_stats)) +
		   DUMP_FRAME_OVERHEAD + sizeof(struct dump_end);
	id = dump_new_id();
	rec.s = NULL;
	rec.sent = 0;
	if (record_to == RECORD_SERIAL) {
		/* Said before the first frame: a line inside the dump is a gap in it. */
		printk("record: serial stream dump_id=%u\n", id);
		sink = (struct trace_sink){ sink_serial, &rec.sent };
	} else {
		/* The head, the clocks and one page must fit, with the tail. */
		rec.s = usb_stream_begin(id, rec.tail + 65536 + RB_PAGE_SIZE_DEFAULT);
		if (!rec.s) {
			printk("record: no stream to the stick; tracing goes on in memory "
			       "only\n");
			return false;
		}
		sink = (struct trace_sink){ sink_stream, rec.s };
	}
	rec.open = true;
	rec.lost = 0;
	rec.full = false;
	rec.t0 = tsc_now_ns();
	flags = hold_begin();
	dump_write_head(&rec.w, &sink, id, rec.nr_cpus, tsc.hz, tsc.err_ppb,
			trace_events_enabled(), dump_packer(&rec_pack));
	for (uint32_t c = 0; c < rec.nr_cpus; c++) {
		struct dump_clock clk;

		dump_cpu_clock(c, &clk);
		dump_write_clock(&rec.w, &clk);
	}
	hold_end(flags);
	if (rec.s)
		printk("record: usb stream dump_id=%u lba=%llu free_bytes=%llu\n", id,
		       (unsigned long long)rec.s->mark_lba,
		       (unsigned long long)tracesave_free_bytes(rec.s));
	return true;
}

/* The stream's STATS, END and mark; one line.  Ends it whatever happens. */
static bool finish(const char *why)
{
	struct tracesave *s = rec.s;
	long long ms = (tsc_now_ns() - rec.t0) / 1000000;
	uint64_t flags = hold_begin(), bytes;
	bool ok;

	for (uint32_t c = 0; c < rec.nr_cpus; c++) {
		struct dump_stats ds;
		struct rb_stats st;

		ring_buffer_stats(ring_buffer_cpu(&trace_rb, c), &st);
		dump_stats_from_rb(&ds, c, &st);
		dump_write_stats(&rec.w, &ds);
	}
	dump_write_end(&rec.w);
	if (!s)
		console_write_raw_held("\r\n", 2);	/* the next line starts a line */
	hold_end(flags);
	rec.s = NULL;
	rec.open = false;
	ok = s ? usb_stream_end(s, rec.w.dump_id) : true;
	bytes = s ? s->bytes : rec.sent;
	printk("record: %s dump_id=%u pages=%u events=%llu lost=%llu bytes=%llu ms=%lld\n",
	       ok ? why : "failed", rec.w.dump_id, rec.w.pages,
	       (unsigned long long)rec.w.events, (unsigned long long)rec.lost,
	       (unsigned long long)bytes, ms);
	rec.last = (struct record_result){ .saved = ok, .full = rec.full, .pages = rec.w.pages,
					   .events = rec.w.events, .lost = rec.lost,
					   .bytes = bytes };
	return ok;
}

/*
 * One CPU's complete pages into the stream: at most its ring's worth and
 * *budget (less those written), so that writers faster than the stick
 * cannot keep the caller here.  False once the stream ended (full, or the
 * stick failed).
 */
static bool drain_cpu(uint32_t c, uint32_t *budget)
{
	struct rb_cpu_buffer *cb = ring_buffer_cpu(&trace_rb, c);
	struct rb_read rd;

	for (uint32_t n = 0; n <= cb->nr_slots && *budget &&
	     ring_buffer_read_page(cb, &rd) == 1; n++) {
		const struct rb_page_header *h = rd.page;
		uint64_t flags;

		if (rec.s &&
		    tracesave_free_bytes(rec.s) < dump_page_frame_size(h->commit) + rec.tail) {
			if (rec.s->err && rec.s->err != TRACESAVE_EFULL) {
				printk("record: writing to the stick failed after %u pages; the "
				       "stream ends at its last checkpoint, tracing goes on in "
				       "memory\n", rec.w.pages);
				usb_stream_end(rec.s, rec.w.dump_id);
				rec.s = NULL;
				rec.open = false;
				rec.last = (struct record_result){ 0 };
				return false;
			}
			printk("record: TRACE.BIN is full after %u pages; recording to the stick "
			       "stops, the in-memory trace goes on\n", rec.w.pages);
			rec.full = true;
			finish("saved");
			return false;
		}
		flags = hold_begin();
		dump_write_page(&rec.w, c, rd.page, rd.page_size, rd.lost_overrun,
				rd.lost_dropped);
		hold_end(flags);
		rec.lost += rd.lost_overrun + rd.lost_dropped;
		(*budget)--;
	}
	return true;
}

void record_poll(void)
{
	uint32_t budget = UINT32_MAX;	/* each CPU's ring bounds it */

	for (uint32_t c = 0; rec.open && c < rec.nr_cpus; c++)
		if (!drain_cpu(c, &budget))
			return;
}

/*
 * The shell's idle step: at most RECORD_IDLE_PAGES pages, starting one CPU
 * further each call so that a busy CPU 0 does not starve the others.
 * notrace: with no stream open it is the shell's wait, which the function
 * tracers do not record.
 */
static notrace void record_idle(void)
{
	static uint32_t next;	/* the CPU the next step starts with */
	uint32_t budget = RECORD_IDLE_PAGES;

	if (!rec.open)
		return;
	next = (next + 1) % rec.nr_cpus;
	for (uint32_t i = 0; rec.open && budget && i < rec.nr_cpus; i++)
		if (!drain_cpu((next + i) % rec.nr_cpus, &budget))
			return;
}
SHELL_IDLE(record, .name = "record", .fn = record_idle);

bool record_end(struct record_result *out)
{
	bool ok = !rec.full && rec.last.saved;

	if (rec.open) {
		tracing_flush_all();
		/* Writers may still be adding pages: a bounded number of rounds. */
		for (int i = 0; i < 4 && rec.open; i++)
			record_poll();
		ok = rec.open ? finish("saved") : false;
	}
	if (out)
		*out = rec.last;
	return ok;
}
