/*
 * The counters a CPU's ring buffer reports, listed once. struct rb_stats
 * (ring_buffer_stats()) holds them all; struct dump_stats, the STATS
 * frame, holds RB_COUNTERS_DUMPED in this order, each a uint64_t, so the
 * order of that list is a dump format: append, never reorder.
 *
 * X(name, what): what the counter counts, the field's comment.
 */
#ifndef TRACE_RB_COUNTERS_H
#define TRACE_RB_COUNTERS_H

#define RB_COUNTERS_DUMPED(X)							\
	X(written,	  "events writers tried to record: entries + dropped")	\
	X(entries,	  "events stored")					\
	X(overrun,	  "stored events overwritten before being read")	\
	X(dropped,	  "events not stored for lack of room")		\
	X(commit_overrun, "... of dropped: the tail met uncommitted data")	\
	X(busy,		  "... of dropped: nested during a page switch")	\
	X(read,		  "events on pages the reader took")			\
	X(in_buffer,	  "stored, not read, not overwritten")			\
	X(bytes,	  "record bytes on completed pages")			\
	X(read_bytes,	  "record bytes on pages the reader took")		\
	X(lost,		  "events reported lost to the reader, page by page")	\
	X(pages_read,	  "pages the reader took")				\
	X(rejected,	  "reserves with a bad size")				\
	X(refused,	  "calls refused: no buffer, stopped, nesting")		\
	X(recursion,	  "... of refused: recursion or nesting limit")		\
	X(voided,	  "reservations voided by an interrupt and retried")	\
	X(clock_backwards, "clock steps back: write_backwards + read_backwards") \
	X(claim_raced,	  "writer's slot claims that lost to the reader")	\
	X(read_raced,	  "reader's takes that lost to the writer")

/* Kept by the ring buffer, not sent in STATS frames. */
#define RB_COUNTERS_LOCAL(X)							\
	X(write_backwards, "... of clock_backwards: stamps below the page base, clamped at write") \
	X(read_backwards, "... of clock_backwards: stamps the reader found below the one before") \
	X(bad_pages,	  "pages the reader took, found malformed and skipped")

#endif
