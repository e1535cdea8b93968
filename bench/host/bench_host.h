/*
 * Host benchmark of the trace write path against its peers: the driver's
 * interface to each peer.
 *
 * One driver runs one peer per process: N writer threads,
 * each pinned to its own host CPU, each writing M events in a tight loop
 * between two clock_gettime() calls, after an untimed warm-up.  A peer
 * supplies set-up, the loop and an after-run check; the loop lives in the
 * peer's own file so the write path inlines into it, as it inlines into its
 * callers in the kernel.
 *
 * Every peer records the same event: the 8-byte payload of the kernel's
 * trace_bench() (the header word of <trace/events.h>, then one u32, here a
 * sequence number), stamped with the clock the peer stamps with.
 */
#ifndef BENCH_HOST_H
#define BENCH_HOST_H

#include <stdint.h>
#include <stdio.h>

#include <trace/events.h>

#define BENCH_MAX_THREADS	64

/* What the command line asked for. */
struct bench_opts {
	unsigned threads;	/* writer threads, one per CPU */
	uint64_t events;	/* timed events per thread per repetition */
	uint64_t warmup;	/* untimed events per thread before the first */
	unsigned reps;		/* timed repetitions */
	uint64_t buf_bytes;	/* ring (or array) bytes per thread */
};

/* One writer thread; the peer keeps its own state behind priv. */
struct bench_thread {
	unsigned idx;		/* 0 .. threads - 1 */
	int cpu;		/* host CPU it is pinned to */
	void *priv;		/* the peer's per-thread state */
	uint64_t ns;		/* last timed loop, wall ns */
	long minflt;		/* minor page faults in the last timed loop */
	long nivcsw;		/* involuntary context switches in it */
};

struct bench_peer {
	const char *name;	/* as printed: baretrace, floor, lttng-ust */
	/* Before any thread starts; 0 or an error printed by the peer. */
	int (*setup)(const struct bench_opts *o);
	/* On the thread, pinned, before the warm-up; 0 or an error. */
	int (*thread_init)(struct bench_thread *t, const struct bench_opts *o);
	/* Write n events: the timed loop. */
	void (*run)(struct bench_thread *t, uint64_t n);
	/* After all threads ended: print check lines; 0 if all is well. */
	int (*check)(struct bench_thread *t, unsigned n, const struct bench_opts *o,
		     uint64_t expected, FILE *out);
};

/* The peers this binary carries, NULL-terminated. */
extern const struct bench_peer *const bench_peers[];

/* The payload's first word at a context level (<trace/events.h>). */
static inline uint32_t bench_ent_word(uint16_t id, unsigned level, unsigned nfields)
{
	return trace_ent_pack(id, trace_ent_ctx(level), nfields);
}

#endif
