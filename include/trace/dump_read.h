/*
 * Reading binary trace dumps back out of a console capture (format:
 * <trace/dump_format.h>).
 *
 * Generic and freestanding like the writer: the caller hands in the whole
 * capture and an arena; nothing else is allocated.  Damage never stops the
 * reader: every frame that checks out is used, and every problem is
 * reported through the caller's report function as one line of text, e.g.
 *
 *   frame seq 7 (PAGE) at byte offset 5120: bad CRC (stored 0x1a2b3c4d,
 *       computed 0x99887766); skipped 4168 bytes to byte offset 9288
 *   missing frames seq 7..7
 *   capture ends inside frame seq 12 (PAGE) at byte offset 40960: 1000 of 4168 bytes present
 *   no END frame: the last frame received is seq 11, ending at byte offset 40960
 *
 * A capture may hold several dumps (frames of one dump share a dump id
 * and the first is BEGIN); one of them is decoded per call.
 */
#ifndef TRACE_DUMP_READ_H
#define TRACE_DUMP_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trace/dump_format.h>
#include <trace/text.h>

/* Bytes of dump_cpu.clock_note, NUL included. */
#define DUMP_CLOCK_NOTE_MAX	256	/* the longest note is about 230 */

/* One CPU of the decoded dump. */
struct dump_cpu {
	uint32_t cpu;			/* CPU id (its index in dump_result.cpus) */
	uint32_t clock_state;		/* enum trace_clock_state */
	bool has_clock;			/* its CLOCK frame arrived */
	bool has_stats;			/* its STATS frame arrived */
	bool has_trust;			/* a TRUST frame arrived and is used */
	struct dump_trust trust;	/* as received: trusted before trust.from_ns */
	struct dump_clock clock;	/* as received; its conv a stand-in when
					 * clock_state is MISSING or INVALID */
	char clock_note[DUMP_CLOCK_NOTE_MAX]; /* INVALID: "<what is wrong>; its
					 * times <the stand-in>"; else "" */
	struct dump_stats stats;	/* as received; zero if not */
	uint32_t nr_pages;		/* its pages received */
	const void **pages;		/* copies, 8-byte aligned, in the order sent;
					 * each holds 48 + commit bytes */
	uint64_t *lost;			/* events lost before each page: the frame's
					 * overrun + dropped, or more if frames of
					 * this CPU went missing in the capture */
	struct dump_page_info *info;	/* each page's PAGE frame info */
	uint64_t events;		/* data records on its pages */
};

struct dump_result {
	uint32_t nr_dumps;		/* dumps found in the capture */
	uint32_t index;			/* the one decoded (0 = first) */
	uint16_t dump_id;		/* its id */
	bool has_begin;			/* its BEGIN frame arrived and made sense */
	bool has_end;			/* its END frame arrived */
	bool complete;			/* END confirms every frame arrived */
	struct dump_begin begin;	/* as received; zero if not */
	struct dump_end end;		/* as received; zero if not */
	bool has_calib;			/* a CALIB frame arrived: the vote was disputed */
	struct dump_calib calib;	/* as received; zero if not */
	uint32_t nr_cpus;		/* entries in cpus: from BEGIN, else highest id + 1 */
	uint32_t page_size;		/* from BEGIN, else the smallest that fits */
	struct dump_cpu *cpus;		/* in the arena */
	uint32_t frames;		/* frames received with a good CRC */
	uint32_t pages;			/* pages accepted */
	uint64_t events;		/* data records on them */
	uint32_t problems;		/* lines reported */
	uint32_t console_lines;		/* lines of console text between its frames */
	size_t console_bytes;		/* their bytes, line ends included */
	uint32_t bad_clocks;		/* CPUs whose CLOCK is INVALID (not counted
					 * as problems: the frames are intact) */
	size_t start_off;		/* byte range of the dump in the capture */
	size_t end_off;			/* (start_off .. end_off - 1) */
	size_t arena_needed;		/* arena bytes this dump needs */
	const struct trace_catalog *catalog; /* the events it describes (EVENTS
					 * frames); the built-in ones if none */
	const struct trace_symtab *syms; /* the kernel's symbols (SYMS frames), or NULL */
	const uint64_t *fmt_addrs;	/* trace_printk formats (PRINTK frames) */
	const char *const *fmt_texts;
	uint32_t nr_fmts;
};

/* r's symbols and trace_printk formats, for the text formatter (r must outlive it). */
struct trace_symbols dump_symbols(const struct dump_result *r);

/* The catalog to read r's events with. */
static inline const struct trace_catalog *dump_catalog(const struct dump_result *r)
{
	return r->catalog ? r->catalog : &trace_builtin_catalog;
}

/* r's disputed calibration for the text, or NULL. */
static inline const struct dump_calib *dump_calib(const struct dump_result *r)
{
	return r->has_calib ? &r->calib : 0;
}

struct dump_read_opts {
	int32_t which;				/* dump to decode: 0, 1, ...; -1 the last */
	void (*report)(void *ctx, const char *line); /* problems, one line each; may be NULL */
	void *report_ctx;			/* its argument, and console's */
	/*
	 * Console text between two good frames of the dump (a line another CPU
	 * printed while a stream was open: trace.record=serial), not damage:
	 * each line without its line end, with its byte offset.  May be NULL.
	 */
	void (*console)(void *ctx, size_t off, const char *line, size_t len);
};

enum {
	DUMP_READ_ARENA = -1,		/* arena too small: see arena_needed, call again */
	DUMP_READ_OK = 0,		/* the whole dump, verified by its END frame */
	DUMP_READ_DAMAGED = 1,		/* decoded as far as valid; problems reported */
	DUMP_READ_NOTHING = 3,		/* no valid frame in the capture */
	DUMP_READ_NO_SUCH_DUMP = 4,	/* opts->which is past the last dump */
};

/*
 * Find the frames in capture[0 .. len), pick one dump and decode it into
 * *out, with its pages copied into arena (8-byte aligned, arena_size
 * bytes; NULL/0 to ask for the size).  Reports go out only from a call
 * that decodes, so asking for the size first reports nothing.
 * Returns one of DUMP_READ_*.  out->nr_dumps is always filled; with
 * DUMP_READ_ARENA so are arena_needed, nr_cpus and page_size.
 */
int dump_read(const void *capture, size_t len, const struct dump_read_opts *opts,
	      void *arena, size_t arena_size, struct dump_result *out);

/* The text formatter's view of a decoded dump: out[0 .. r->nr_cpus). */
void dump_text_cpus(const struct dump_result *r, struct trace_text_cpu *out);

/*
 * The earliest and latest converted time of r's events, each page's base
 * stamp counted too when bases is set: every event of every page whose
 * header is sound, not only first and last (a damaged page's stamps need
 * not grow). Both start at 0, so *min <= 0 <= *max.
 */
void dump_time_range(const struct dump_result *r, bool bases, int64_t *min, int64_t *max);

/* Name of a frame type for messages ("PAGE"), "type?" if unknown. */
const char *dump_frame_name(uint32_t type);

#endif
