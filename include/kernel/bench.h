/* run=bench: the benchmarks chosen by bench= (kernel/tracer/bench.c). */
#ifndef KERNEL_BENCH_H
#define KERNEL_BENCH_H

#include <stdbool.h>
#include <stdint.h>

bool bench_job(void);

/* bench tracepoint: a generated writer's call site, enabled and disabled
 * (kernel/tracer/bench_tracepoint.c); prints two bench: lines. */
int bench_tracepoint(void);

#define BENCH_HIST_BUCKETS 16

/*
 * bench event's per-event latencies (cycles), gathered by the stamped loops
 * of kernel/tracer/bench_writer.c outside the window each pair of rdtsc brackets.
 * hist[0] counts 0; hist[b] counts [2^(b-1), 2^b), the last bucket the rest.
 */
struct bench_lat {
	uint64_t overhead;	/* in: the rdtsc pair's own cost, subtracted */
	uint64_t n, first, last, min, max, sum;
	unsigned __int128 sq;	/* sum of squares */
	uint64_t hist[BENCH_HIST_BUCKETS];
};

static inline void bench_lat_add(struct bench_lat *l, uint64_t d)
{
	unsigned b;

	d = d > l->overhead ? d - l->overhead : 0;
	b = d ? 64 - (unsigned)__builtin_clzll(d) : 0;
	if (l->n++ == 0) {
		l->first = d;
		l->min = d;
	}
	l->last = d;
	l->min = d < l->min ? d : l->min;
	l->max = d > l->max ? d : l->max;
	l->sum += d;
	l->sq += (unsigned __int128)d * d;
	l->hist[b < BENCH_HIST_BUCKETS ? b : BENCH_HIST_BUCKETS - 1]++;
}

#endif
