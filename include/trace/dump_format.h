/*
 * The binary trace dump: one definition shared by the kernel, which writes
 * it to the serial console, and the host decoder, which finds it again in a
 * capture of that console.
 *
 * A dump is a sequence of frames written raw into the console stream, with
 * ordinary text before and after it.  A frame is self-delimiting and
 * checksummed, so a reader finds frames anywhere in a capture and, after
 * damage (lost bytes, flipped bits, text written into the middle), finds
 * the next good one by looking for the magic again.
 *
 *   frame
 *    0      4    5    6        8            12           16             16+len
 *   +------+----+----+--------+------------+------------+--------------+--------+
 *   |magic |type|ver | dump   | len        | seq        | payload      | crc32  |
 *   |BA54 52CE   |    | id     | (payload)  | (in dump)  | (len bytes)  |        |
 *   +------+----+----+--------+------------+------------+--------------+--------+
 *   <------------------ header, 16 bytes ---------------->               <- 4 B ->
 *   crc32 = CRC-32 (IEEE) of the header and the payload, stored after them.
 *
 *   dump:  BEGIN  [CALIB]  CLOCK x nr_cpus  [TRUST ...]  PAGE ...  STATS x nr_cpus  END
 *   seq:     0                                                                     last
 *   (EVENTS, SYMS and PRINTK frames follow BEGIN; CALIB and TRUST only when
 *   there is something to say, so a dump without them reads in older readers)
 *
 * Key: all integers little-endian; frames are not aligned in the stream
 * (readers copy before use); payloads are the structs below, byte for byte.
 * The magic bytes 0xBA 'T' 'R' 0xCE: two bytes above 0x7F that are not a
 * valid UTF-8 sequence start, around two letters, so console text does not
 * contain it by accident.  The CRC sits last so a writer streams a frame
 * in one pass without buffering it.
 *
 * Every frame of one dump carries the same dump id; the frame sequence
 * number starts at 0 with BEGIN and counts every frame.  A reader detects
 * missing frames from gaps in seq, and the END frame lets it check that
 * nothing at all is missing: it counts the frames and pages before it and
 * chains their CRCs.
 *
 * PAGE frames carry ring pages exactly as the ring buffer recorded them
 * (raw cycle stamps, see <trace/ring_format.h>): the 48-byte page header
 * and the commit bytes of records after it.  The rest of a page is padding
 * or unused and is not sent.  Conversion to ns happens in the reader, with
 * the CLOCK frame of the page's CPU.
 *
 * docs/dump-format.md has the rationale and the cost per event.
 */
#ifndef TRACE_DUMP_FORMAT_H
#define TRACE_DUMP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <trace/clock.h>
#include <trace/events.h>
#include <trace/rb_counters.h>
#include <trace/ring_format.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "dump structs are written as they are in memory: little-endian");

#define DUMP_MAGIC0		0xbau
#define DUMP_MAGIC1		0x54u	/* 'T' */
#define DUMP_MAGIC2		0x52u	/* 'R' */
#define DUMP_MAGIC3		0xceu
#define DUMP_VERSION		1u	/* of the frame layout and payloads below */

/*
 * Version of the event payload header (<trace/events.h>: id, ctx, words).
 * What each id means travels in the dump itself, one EVENTS frame per
 * event, so adding or changing events needs no version.  A dump without
 * EVENTS frames (from an older kernel) is read with the decoder's
 * built-in list, whose first nine events are the ones those kernels had.
 */
#define DUMP_EVENTS_VERSION	1u

#define DUMP_MAX_CPUS		4096u	/* CPU ids a dump may describe */
#define DUMP_HEADER_SIZE	16u
#define DUMP_CRC_SIZE		4u
#define DUMP_FRAME_OVERHEAD	(DUMP_HEADER_SIZE + DUMP_CRC_SIZE)

enum dump_frame_type {
	DUMP_FRAME_BEGIN = 1,	/* struct dump_begin */
	DUMP_FRAME_CLOCK = 2,	/* struct dump_clock, one per CPU */
	DUMP_FRAME_PAGE = 3,	/* struct dump_page_info + page bytes */
	DUMP_FRAME_STATS = 4,	/* struct dump_stats, one per CPU */
	DUMP_FRAME_END = 5,	/* struct dump_end */
	DUMP_FRAME_EVENTS = 6,	/* one event's description, below */
	DUMP_FRAME_SYMS = 7,	/* part of the kernel's symbol table, below */
	DUMP_FRAME_PRINTK = 8,	/* trace_printk formats, as SYMS with formats for names */
	DUMP_FRAME_TRUST = 9,	/* struct dump_trust: when a CPU's clock stopped being trusted */
	DUMP_FRAME_CALIB = 10,	/* struct dump_calib: the calibration's vote was disputed */
	DUMP_FRAME_PACK = 11,	/* another frame's payload, coded: <trace/dump_pack.h> */
};

/*
 * SYMS frame: up to DUMP_SYMS_PER_FRAME symbols of the kernel's table, in
 * ascending address order across frames (each symbol runs up to the next;
 * the last up to end), for code addresses in events (F_SYM):
 *
 *	u64 end, u32 count, then count times: u64 addr, str name
 *
 * Sent after the EVENTS frames.  A reader that finds addresses out of
 * order drops the table (and says so) rather than name addresses wrongly.
 */
#define DUMP_SYMS_PER_FRAME	256u
#define DUMP_SYM_NAME_MAX	127u	/* printable ASCII, e.g. "send_icr.part.0" */

/*
 * PRINTK frame: the same layout as SYMS (end unused, 0), each entry a
 * trace_printk format's address and its text (printable ASCII, tab and
 * newline too, at most DUMP_PRINTK_FMT_MAX bytes), in any order.
 */
#define DUMP_PRINTK_FMT_MAX	512u

/*
 * EVENTS frame: the description of one event (struct trace_event_def),
 * byte-packed, little-endian, strings as u16 length + bytes (no NUL):
 *
 *	u16 id, u16 fixed, u8 nfields, u8 flags
 *	str system, str name, str fmt
 *	per field:  str name, u8 kind, u8 display, u8 is_signed, u8 0,
 *	            u16 offset, u16 size, u16 max, u16 nenums,
 *	            per enum entry: u64 value, str name
 *
 * flags bit 0 (TRACE_EVENT_DISABLED): the event was disabled when the
 * dump was taken; other bits are 0 (a reader ignores the ones it does not
 * know).  Sent after BEGIN and before any PAGE, one frame per event the kernel
 * has.  Names are C identifiers of at most DUMP_NAME_MAX bytes; a reader
 * refuses a description that breaks a rule of <trace/event_fmt.h>'s
 * parser (and reports it) rather than read pages with it.
 */
#define DUMP_NAME_MAX		63u
#define DUMP_FMT_MAX		512u
#define DUMP_EVENTS_MAX_PAYLOAD	65536u	/* far above any real description */

struct dump_frame_header {
	uint8_t magic[4];	/* DUMP_MAGIC0 .. DUMP_MAGIC3 */
	uint8_t type;		/* enum dump_frame_type */
	uint8_t version;	/* DUMP_VERSION */
	uint16_t dump_id;	/* the same in every frame of one dump */
	uint32_t len;		/* payload bytes between header and CRC */
	uint32_t seq;		/* frame number in the dump, BEGIN = 0 */
};

_Static_assert(sizeof(struct dump_frame_header) == DUMP_HEADER_SIZE, "frame header");
_Static_assert(offsetof(struct dump_frame_header, len) == 8, "frame header");
_Static_assert(offsetof(struct dump_frame_header, seq) == 12, "frame header");

/* BEGIN: what the reader needs before anything else. */
struct dump_begin {
	uint32_t ring_version;	/* RB_FORMAT_VERSION of the pages */
	uint32_t events_version; /* DUMP_EVENTS_VERSION of their payloads */
	uint32_t nr_cpus;	/* CPU ids 0 .. nr_cpus - 1 are described */
	uint32_t page_size;	/* ring page size, bytes */
	uint64_t tsc_hz;	/* calibrated counter frequency, 0 if unknown */
	uint64_t tsc_err_ppb;	/* its error bound, parts per billion */
	uint64_t start_cycles;	/* the dumping CPU's counter at BEGIN */
};

_Static_assert(sizeof(struct dump_begin) == 40, "dump_begin is a dump format");

#define DUMP_CLOCK_TRUSTED	0x1u	/* skew bounded, no warps: stamps mergeable */

/*
 * CLOCK: one CPU's cycles-to-ns conversion and how far to trust it.  A
 * CPU without a conversion (no calibrated frequency) sends conv all zero:
 * mult 0 means "none".  Readers check every frame (trace_clock_check()):
 * such a CPU, or one whose conversion or offset is impossible, is marked
 * clock=invalid and the decoder converts its stamps with a stand-in.
 */
struct dump_clock {
	uint32_t cpu;		/* CPU id */
	uint32_t flags;		/* DUMP_CLOCK_* */
	struct clock_conv conv;	/* as the CPU's clock latch held it */
	int64_t skew_cycles;	/* this CPU's counter minus the boot CPU's */
	int64_t skew_uncert_cycles; /* bound of that measurement */
};

_Static_assert(sizeof(struct dump_clock) == 80, "dump_clock is a dump format");
_Static_assert(offsetof(struct dump_clock, conv) == 8, "dump_clock is a dump format");

/* dump_trust.why: what the kernel found. */
enum {
	DUMP_TRUST_DRIFT = 1,	/* the clock watchdog saw the TSC's rate drift (every CPU) */
	DUMP_TRUST_SKEW = 2,	/* ... this AP's skew change */
	DUMP_TRUST_MOVED = 3,	/* ... the boot CPU's TSC move (every AP's skew changed alike) */
};

/*
 * TRUST: a CPU whose clock was trusted until an instant, then not (its
 * CLOCK frame has DUMP_CLOCK_TRUSTED clear).  Sent only for such CPUs,
 * after the CLOCK frames.  from_ns is the last check that found the clock
 * good, so the fault lies after it: events stamped before from_ns are as
 * trusted as any, those at or after it are not.  Both times are trace ns
 * on the boot CPU's clock, read before the fault it found.  A reader that
 * does not know this frame marks every event of the CPU untrusted, as
 * the CLOCK frame says: less precise, never wrong.
 */
struct dump_trust {
	uint32_t cpu;		/* CPU id */
	uint32_t why;		/* DUMP_TRUST_* */
	int64_t from_ns;	/* trusted before this instant, not from it on */
	int64_t found_ns;	/* when the kernel found the fault (>= from_ns) */
};

_Static_assert(sizeof(struct dump_trust) == 24, "dump_trust is a dump format");

#define DUMP_CALIB_DISPUTED	0x1u	/* some reference disagreed with the winner */
#define DUMP_CALIB_NAMES	32	/* bytes of each reference list, NUL included */

/*
 * CALIB: the calibration's vote was disputed (a reference was left out).
 * The vote assumes that a majority of the references is right; when two
 * are wrong alike, they win.  So the bound stated (err_ppb, the same as
 * BEGIN's tsc_err_ppb) covers every reference's figure, and vote_err_ppb
 * is the winner's own bound, which holds only under that assumption.
 * Strings are printable ASCII, NUL-terminated.
 */
struct dump_calib {
	uint32_t flags;		/* DUMP_CALIB_* */
	uint32_t reserved;	/* 0 */
	uint64_t hz;		/* the frequency used (BEGIN's tsc_hz) */
	uint64_t err_ppb;	/* its bound, covering every reference (+ tol_ppb) */
	uint64_t vote_err_ppb;	/* the winner's own bound: if a majority is right */
	uint64_t tol_ppb;	/* the winner's oscillator tolerance */
	uint64_t spread_ppb;	/* the largest difference of a reference's figure from hz */
	char ref[8];		/* the winner: "pit", "hpet", "pmtimer", "cpuid" */
	char used[DUMP_CALIB_NAMES];	/* the winning group, "pmtimer,cpuid" */
	char left_out[DUMP_CALIB_NAMES]; /* the references it outvoted, "pit,hpet" */
};

_Static_assert(sizeof(struct dump_calib) == 120, "dump_calib is a dump format");

/* PAGE: this struct, then data_len bytes of the page as recorded. */
struct dump_page_info {
	uint32_t cpu;		/* CPU the page belongs to (= page header cpu) */
	uint32_t data_len;	/* page bytes that follow: header + commit */
	uint64_t pos;		/* page sequence number (= page header pos) */
	uint64_t lost_overrun;	/* events overwritten before it (struct rb_read) */
	uint64_t lost_dropped;	/* events dropped before it (struct rb_read) */
};

_Static_assert(sizeof(struct dump_page_info) == 32, "dump_page_info is a dump format");

#define DUMP_MAX_PAYLOAD	(sizeof(struct dump_page_info) + RB_PAGE_SIZE_MAX)

/* dump_stats.state: the ring buffer's RB_STATE_* values. */
enum {
	DUMP_STATE_NONE = 0,	/* the CPU had no buffer */
	DUMP_STATE_OFF = 1,	/* recording off */
	DUMP_STATE_RECORDING = 2,
	DUMP_STATE_STOPPED = 3,	/* integrity stop; see stop_reason */
};

#define DUMP_STOP_REASON_MAX	64	/* bytes, NUL included */

/* STATS: one CPU's ring buffer counters (struct rb_stats) after the dump. */
struct dump_stats {
	uint32_t cpu;		/* CPU id */
	uint32_t state;		/* DUMP_STATE_* */
#define DUMP_STATS_FIELD(name, what) uint64_t name;	/* what: in RB_COUNTERS_DUMPED */
	RB_COUNTERS_DUMPED(DUMP_STATS_FIELD)	/* 19 counters, in the list's order */
#undef DUMP_STATS_FIELD
	char stop_reason[DUMP_STOP_REASON_MAX]; /* NUL-terminated, "" if none */
};

_Static_assert(sizeof(struct dump_stats) == 224, "dump_stats is a dump format");
_Static_assert(offsetof(struct dump_stats, written) == 8 &&
	       offsetof(struct dump_stats, read_raced) == 152 &&
	       offsetof(struct dump_stats, stop_reason) == 160, "dump_stats is a dump format");

/* END: lets the reader prove it received the whole dump. */
struct dump_end {
	uint32_t frames;	/* frames before END, BEGIN included (= END's seq) */
	uint32_t pages;		/* PAGE frames among them */
	uint64_t events;	/* data records on those pages (sum of entries) */
	uint32_t chain;		/* CRC-32 of the CRC fields of those frames, in order */
	uint32_t flags;		/* DUMP_END_*; was reserved (0) */
};

/* The writer stopped sending pages early (Ctrl-C); every frame it sent is here. */
#define DUMP_END_CUT	0x1u

_Static_assert(sizeof(struct dump_end) == 24, "dump_end is a dump format");

#endif
