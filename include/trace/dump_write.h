/*
 * Writing a binary trace dump (format: <trace/dump_format.h>).
 *
 * Generic and freestanding: no allocation, no floating point, no libc.
 * Every frame goes out through the sink in at most four writes (header,
 * payload in up to two pieces, CRC) as soon as it is complete; nothing is
 * buffered between calls.  One writer per dump, used from one context.
 *
 *   struct dump_writer w;
 *   dump_write_begin(&w, &sink, id, &begin);      seq 0
 *   dump_write_events(&w, &trace_builtin_catalog, on); one per event
 *   dump_write_calib(&w, &calib);                 only if the vote was disputed
 *   dump_write_clock(&w, &clock);                 one per CPU id
 *   dump_write_trust(&w, &trust);                 one per CPU whose trust ended
 *   dump_write_page(&w, cpu, page, size, ov, dr); each page, any order of CPUs
 *   dump_write_stats(&w, &stats);                 one per CPU id, after its pages
 *   dump_write_end(&w);                           counts and chain checksum
 */
#ifndef TRACE_DUMP_WRITE_H
#define TRACE_DUMP_WRITE_H

#include <stdbool.h>
#include <stdint.h>

#include <trace/dump_format.h>
#include <trace/dump_pack.h>
#include <trace/sink.h>

struct dump_writer {
	struct trace_sink sink;	/* where the frames go */
	uint16_t dump_id;	/* in every frame header */
	uint32_t seq;		/* seq of the next frame */
	uint32_t pages;		/* PAGE frames written */
	uint64_t events;	/* entries on those pages */
	uint32_t chain;		/* running CRC over the frames' CRC fields */
	bool cut;		/* set by the caller: END says the pages stopped early */
	struct dump_pack *pack;	/* set by the caller after BEGIN: the compact
				   encoding (PACK frames); NULL: plain frames */
};

/*
 * Start a dump: set up w and write the BEGIN frame.  begin->ring_version
 * and events_version are filled in here; the caller sets nr_cpus,
 * page_size, the TSC figures and start_cycles.
 */
void dump_write_begin(struct dump_writer *w, const struct trace_sink *sink,
		      uint16_t dump_id, const struct dump_begin *begin);

/*
 * The description of every event cat has (one EVENTS frame each), before
 * any page.  enabled[id] (or NULL: each description's own flags) sets the
 * TRACE_EVENT_DISABLED flag each frame carries.
 */
void dump_write_events(struct dump_writer *w, const struct trace_catalog *cat,
		       const uint8_t *enabled);

/* A symbol table to send: symbol i's name and address, ascending by address. */
struct dump_syms_src {
	uint32_t count;
	uint64_t end;			/* past the last symbol */
	const char *(*get)(const void *ctx, uint32_t i, uint64_t *addr);
	const void *ctx;
};

/* The symbol table, DUMP_SYMS_PER_FRAME symbols per SYMS frame, after the EVENTS frames. */
void dump_write_symbols(struct dump_writer *w, const struct dump_syms_src *src);

/* trace_printk's formats (PRINTK frames): entry i's text and address; end unused. */
void dump_write_printk_formats(struct dump_writer *w, const struct dump_syms_src *src);

/* One CPU's clock (CLOCK frame). */
void dump_write_clock(struct dump_writer *w, const struct dump_clock *clock);

/* When a CPU's clock stopped being trusted (TRUST frame), after the CLOCK frames. */
void dump_write_trust(struct dump_writer *w, const struct dump_trust *trust);

/* The calibration's disputed vote (CALIB frame), before the CLOCK frames. */
void dump_write_calib(struct dump_writer *w, const struct dump_calib *calib);

/*
 * One ring page of cpu as the reader took it (PAGE frame): page_size is
 * the ring's page size, lost_overrun/lost_dropped come from the struct
 * rb_read of that take.  The page header and its commit bytes of records
 * are sent; if the header is inconsistent (commit past the page), the
 * whole page is sent and the decoder reports it.
 */
void dump_write_page(struct dump_writer *w, uint32_t cpu, const void *page,
		     uint32_t page_size, uint64_t lost_overrun, uint64_t lost_dropped);

/*
 * A frame whose payload is already made (type, len bytes), e.g. from
 * another capture: packed when w->pack is set and the type is one that
 * packs; a PAGE counts for END as dump_write_page()'s do.
 */
void dump_write_frame(struct dump_writer *w, uint32_t type, const void *payload, uint32_t len);

/* One CPU's counters (STATS frame). */
void dump_write_stats(struct dump_writer *w, const struct dump_stats *stats);

/* Finish the dump (END frame).  w may then start another dump. */
void dump_write_end(struct dump_writer *w);

/* Bytes the frame of a page with commit bytes of records takes in the stream. */
static inline uint32_t dump_page_frame_size(uint32_t commit)
{
	return DUMP_FRAME_OVERHEAD + (uint32_t)sizeof(struct dump_page_info) +
	       RB_PAGE_HEADER_SIZE + commit;
}

#endif
