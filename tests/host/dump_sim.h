/*
 * A simulated machine for the dump tests: several "CPUs", each with a real
 * ring buffer (trace/ring_buffer.c through the host shim's fake clock) and
 * its own counter frequency, base and skew.  Events of every kind are
 * written in a global time order on random CPUs at random context levels;
 * the reader takes pages as the kernel's dump would (copying each one, as
 * a take is only valid until the next) and the counters are read last.
 *
 * The result is what the kernel has at hand when it dumps: per CPU the
 * pages taken with their lost counts, the clock, the stats.  From it the
 * tests build the text directly (as `dump text` would) and the binary dump
 * (as `dump` would), and compare with what the decoder makes of the dump.
 *
 * Used by the cmocka tests, the capture generator for the tool tests and
 * the fuzzer's seed corpus; it aborts on setup failures instead of using
 * cmocka so that all three can link it.
 */
#ifndef TESTS_DUMP_SIM_H
#define TESTS_DUMP_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trace/dump_read.h>
#include <trace/dump_write.h>
#include <trace/ring_buffer.h>
#include <trace/text.h>

#define SIM_MAX_CPUS	4

struct sim_cfg {
	uint32_t seed;		/* random sequence */
	uint32_t nr_cpus;	/* 1 .. SIM_MAX_CPUS */
	uint32_t events;	/* write attempts in all */
	uint32_t page_size;	/* ring page size */
	uint32_t nr_pages;	/* ring pages per CPU */
	uint32_t drain_every;	/* take pages every this many writes (0: only at the end) */
	bool odd_events;	/* also write unknown ids and malformed payloads */
	const struct trace_catalog *catalog; /* EVENTS frames sent; NULL: the built-in */
	bool no_events;		/* send no EVENTS frame (an older kernel's dump) */
	bool extra_events;	/* write the extra events too (mkcapture-extra) */
	const struct trace_symtab *syms; /* sent in SYMS frames; NULL: none */
	bool printk;		/* also write trace_printk events, formats in PRINTK frames */
	const struct dump_calib *calib;	/* sent in a CALIB frame, and in the text; NULL: none */
	bool plain;		/* plain frames, as before PACK frames (default: packed) */
};

struct sim_cpu {
	struct rb_cpu_buffer *cb;	/* its ring */
	void **ring;			/* its ring's pages */
	uint64_t hz;			/* counter frequency */
	uint64_t cycle_base;		/* counter at time 0 */
	bool trusted;			/* clock flagged trusted */
	struct dump_clock clock;	/* what the dump says of it */
	bool has_trust;			/* a TRUST frame is sent (set after sim_run()) */
	struct dump_trust trust;	/* ... this one */
	uint32_t nr_taken;		/* pages taken */
	uint32_t cap_taken;		/* room in the arrays below */
	void **taken;			/* copies of the pages taken, in order */
	uint64_t *lost_overrun;		/* per page, from its take */
	uint64_t *lost_dropped;		/* per page, from its take */
	uint64_t *lost;			/* their sums */
	uint64_t attempts;		/* writes attempted on this CPU */
	struct dump_stats stats;	/* counters after the last take */
};

struct sim {
	struct sim_cfg cfg;			/* as run */
	struct sim_cpu cpu[SIM_MAX_CPUS];	/* the CPUs */
	uint64_t rng;				/* random state */
	uint64_t now_ns;			/* global time */
};

/* Growable memory buffer, usable as a trace sink. */
struct membuf {
	uint8_t *p;		/* contents */
	size_t len;		/* bytes used */
	size_t cap;		/* bytes allocated */
};

void membuf_write(void *ctx, const void *buf, size_t len);
void membuf_puts(struct membuf *m, const char *s);
void membuf_free(struct membuf *m);

/*
 * The trace_printk formats a run with cfg.printk records (sim_printk_fmts[i]
 * at address SIM_PRINTK_FMT_ADDR(i)), and trace_symbols' format lookup
 * over them (ctx unused).
 */
#define SIM_PRINTK_FMTS		4
#define SIM_PRINTK_FMT_ADDR(i)	(0x300000ull + 0x40u * (i))
extern const char *const sim_printk_fmts[SIM_PRINTK_FMTS];
const char *sim_printk_format(const void *ctx, uint64_t addr);

/* Record, drain and count: fills s. */
void sim_run(struct sim *s, const struct sim_cfg *cfg);
void sim_free(struct sim *s);

/* The text straight from the pages taken, as the kernel's `dump text`. */
int sim_text(const struct sim *s, const struct trace_text_opts *o, struct membuf *out,
	     struct trace_text_summary *sum);

/* The binary dump of s (frames only), as the kernel's `dump`. */
void sim_dump(const struct sim *s, uint16_t dump_id, struct membuf *out);

/* A console capture: text, the dump, more text. */
void sim_capture(const struct sim *s, uint16_t dump_id, struct membuf *out);

/*
 * Decode cap as the host decoder does: dump which (-1: the last) into *r,
 * in an arena allocated to fit (*arena, for the caller to free); problems
 * reported into rep, one line each; the text of the result (selections o,
 * NULL: all) into text if not NULL.  Returns dump_read()'s result.
 */
int sim_decode(const struct membuf *cap, int32_t which, struct dump_result *r, void **arena,
	       struct membuf *text, struct membuf *rep, const struct trace_text_opts *o,
	       struct trace_text_summary *sum);

#endif
