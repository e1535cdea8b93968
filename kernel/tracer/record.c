/*
 * trace.record=usb: the trace streamed into TRACE.BIN while it is being
 * recorded, page by page, as trace-cmd record or LTTng's streaming mode
 * do (not a snapshot at the end).  A trace longer than the ring is kept
 * whole until the file is full; pages the writers overwrote or events
 * they dropped before the consumer came are counted, per page, as always.
 *
 * CONTRACT
 *   Consumer: the boot CPU at task level, in record_poll(), which the jobs
 *   that record call between their own work (run=demo's loop on cpu 0,
 *   run=record).  While a stream is open it is the buffers' only reader:
 *   those jobs take no dump meanwhile.  Polled USB: no interrupt needed.
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
#include "kernel/trace_ctl.h"
#include "kernel/tracing.h"
#include "trace/dump_rb.h"
#include "trace/dump_write.h"

static const char *const record_names[] = { "none", "usb", NULL };
static int record_to;		/* index into record_names */
CMDLINE_OPTION(trace_record, .name = "trace.record", .type = OPT_ENUM, .var = &record_to,
	       .choices = record_names,
	       .help = "stream every page into TRACE.BIN while run=demo or run=record "
		       "traces: usb, or none");

static struct {
	struct tracesave *s;	/* the open stream, or NULL */
	struct dump_writer w;	/* its frames */
	uint32_t nr_cpus;	/* CPUs it describes */
	uint64_t lost;		/* overrun + dropped, over its pages */
	uint64_t tail;		/* bytes kept back for STATS and END */
	long long t0;		/* when it began, ns */
	bool full;		/* it ended because TRACE.BIN was full */
	struct record_result last;	/* the last stream's, once ended */
} rec;

static struct dump_pack rec_pack;	/* the stream's packer: apart from dumps' */

static void sink_stream(void *ctx, const void *buf, size_t len)
{
	watchdog_touch();
	tracesave_put(ctx, buf, len);
}

bool record_enabled(void)
{
	return record_to == 1;
}

bool record_active(void)
{
	return rec.s != NULL;
}

bool record_begin(void)
{
	struct trace_sink sink;
	uint16_t id;

	if (!record_enabled())
		return true;
	if (rec.s)
		record_end(NULL);
	rec.last = (struct record_result){ 0 };
	rec.nr_cpus = cpu_count;
	rec.tail = (uint64_t)rec.nr_cpus * (DUMP_FRAME_OVERHEAD + sizeof(struct dump_stats)) +
		   DUMP_FRAME_OVERHEAD + sizeof(struct dump_end);
	id = dump_new_id();
	/* The head, the clocks and one page must fit, with the tail. */
	if (!(rec.s = usb_stream_begin(id, rec.tail + 65536 + RB_PAGE_SIZE_DEFAULT))) {
		printk("record: no stream to the stick; tracing goes on in memory only\n");
		return false;
	}
	rec.lost = 0;
	rec.full = false;
	rec.t0 = tsc_now_ns();
	sink = (struct trace_sink){ sink_stream, rec.s };
	dump_write_head(&rec.w, &sink, id, rec.nr_cpus, tsc.hz, tsc.err_ppb,
			trace_events_enabled(), dump_packer(&rec_pack));
	for (uint32_t c = 0; c < rec.nr_cpus; c++) {
		struct dump_clock clk;

		dump_cpu_clock(c, &clk);
		dump_write_clock(&rec.w, &clk);
	}
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
	bool ok;

	for (uint32_t c = 0; c < rec.nr_cpus; c++) {
		struct dump_stats ds;
		struct rb_stats st;

		ring_buffer_stats(ring_buffer_cpu(&trace_rb, c), &st);
		dump_stats_from_rb(&ds, c, &st);
		dump_write_stats(&rec.w, &ds);
	}
	dump_write_end(&rec.w);
	rec.s = NULL;
	ok = usb_stream_end(s, rec.w.dump_id);
	printk("record: %s dump_id=%u pages=%u events=%llu lost=%llu bytes=%llu ms=%lld\n",
	       ok ? why : "failed", rec.w.dump_id, rec.w.pages,
	       (unsigned long long)rec.w.events, (unsigned long long)rec.lost,
	       (unsigned long long)s->bytes, ms);
	rec.last = (struct record_result){ .saved = ok, .full = rec.full, .pages = rec.w.pages,
					   .events = rec.w.events, .lost = rec.lost,
					   .bytes = s->bytes };
	return ok;
}

/*
 * One CPU's complete pages into the stream: at most its ring's worth, so
 * that writers faster than the stick cannot keep the caller here.  False
 * once the stream ended (full, or the stick failed).
 */
static bool drain_cpu(uint32_t c)
{
	struct rb_cpu_buffer *cb = ring_buffer_cpu(&trace_rb, c);
	struct rb_read rd;

	for (uint32_t n = 0; n <= cb->nr_slots && ring_buffer_read_page(cb, &rd) == 1; n++) {
		const struct rb_page_header *h = rd.page;

		if (tracesave_free_bytes(rec.s) < dump_page_frame_size(h->commit) + rec.tail) {
			if (rec.s->err && rec.s->err != TRACESAVE_EFULL) {
				printk("record: writing to the stick failed after %u pages; the "
				       "stream ends at its last checkpoint, tracing goes on in "
				       "memory\n", rec.w.pages);
				usb_stream_end(rec.s, rec.w.dump_id);
				rec.s = NULL;
				rec.last = (struct record_result){ 0 };
				return false;
			}
			printk("record: TRACE.BIN is full after %u pages; recording to the stick "
			       "stops, the in-memory trace goes on\n", rec.w.pages);
			rec.full = true;
			finish("saved");
			return false;
		}
		dump_write_page(&rec.w, c, rd.page, rd.page_size, rd.lost_overrun,
				rd.lost_dropped);
		rec.lost += rd.lost_overrun + rd.lost_dropped;
	}
	return true;
}

void record_poll(void)
{
	for (uint32_t c = 0; rec.s && c < rec.nr_cpus; c++)
		if (!drain_cpu(c))
			return;
}

bool record_end(struct record_result *out)
{
	bool ok = !rec.full && rec.last.saved;

	if (rec.s) {
		tracing_flush_all();
		/* Writers may still be adding pages: a bounded number of rounds. */
		for (int i = 0; i < 4 && rec.s; i++)
			record_poll();
		ok = rec.s ? finish("saved") : false;
	}
	if (out)
		*out = rec.last;
	return ok;
}
