/*
 * The lab's experiments (run=hwlat, run=c2c, run=timerlat; docs/lab.md):
 * the arithmetic they share, portable so that the host tests run it.
 *
 *   - inject.stall= lists: "<us>@<ms>" (every CPU) or "<us>@<ms>:<cpu>",
 *     comma-separated, parsed and checked once;
 *   - hwlat's machine-wide view: gaps of several CPUs, each widened by its
 *     CPU's skew bound, merged where they overlap (one stop of the machine
 *     seen by several cores: an SMI stops every core);
 *   - power-of-two histograms and percentiles of samples.
 */
#ifndef TRACE_LAB_H
#define TRACE_LAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LAB_STALLS_MAX		8	/* inject.stall= entries */
#define LAB_STALL_ALL		UINT32_MAX	/* a stall's cpu: every CPU */
#define LAB_STALL_US_MAX	1000000	/* 1 s: a stall longer is no test of anything */
#define LAB_STALL_MS_MAX	600000	/* 10 min into the job */
#define LAB_HIST_BUCKETS	48	/* 2^47 ns (39 h): longer goes in the last */

/* One injected stall: a busy wait of us microseconds, ms into the job. */
struct lab_stall {
	uint64_t us;			/* its length */
	uint64_t ms;			/* when, from the job's common start */
	uint32_t cpu;			/* the CPU, or LAB_STALL_ALL */
};

/*
 * Parse an inject.stall= value into out[0 .. *n). True if every entry is
 * well formed and within bounds (cpu not checked against the CPUs online:
 * the job does); else false, *n untouched, and why (one line) names the
 * entry and what is accepted.
 */
bool lab_stall_parse(const char *s, struct lab_stall *out, unsigned max, unsigned *n,
		     char *why, size_t cap);

/*
 * Parse a CPU list ("all", or comma-separated numbers and ranges "0,2-4",
 * each 0..255) into mask (256 bits). False, mask untouched, and why if not.
 */
bool lab_cpulist_parse(const char *s, uint64_t mask[4], char *why, size_t cap);

/* One gap a CPU saw, on the skew-corrected timeline (ns). */
struct lab_gap {
	int64_t start;			/* the last TSC read before the gap */
	int64_t end;			/* the first after it */
	int64_t uncert;			/* its CPU's skew bound: either end may be off by this */
	uint32_t cpu;			/* who saw it */
	uint32_t group;			/* set by lab_gaps_merge(): its machine gap */
};

/* What lab_gaps_merge() found. */
struct lab_merge {
	uint64_t groups;		/* machine gaps: sets of gaps that overlap */
	uint64_t coincident;		/* ... of which seen by two CPUs or more */
	uint64_t all_cpus;		/* ... of which seen by every CPU sampled */
	uint64_t max_ns;		/* the longest machine gap (first start to last end) */
};

/*
 * Merge gaps[0 .. n) of ncpus CPUs into machine gaps. Two gaps belong to
 * one machine gap when their intervals, each widened by its own bound at
 * both ends, overlap; the relation is closed transitively (a chain of
 * overlaps is one gap). Sorts gaps by widened start and numbers groups
 * from 0 in gap->group.
 */
void lab_gaps_merge(struct lab_gap *gaps, size_t n, unsigned ncpus, struct lab_merge *out);

/* The histogram bucket of v ns: k with 2^k <= v < 2^(k+1) (0 for v < 2). */
unsigned lab_log2_bucket(uint64_t v);

/*
 * The pct-th percentile of v[0 .. n) (nearest rank: the smallest sample
 * with at least pct% of the samples at or below it); sorts v in place.
 * 0 when n is 0.
 */
uint64_t lab_percentile(uint64_t *v, size_t n, unsigned pct);

/* lab_percentile() of signed samples (sorted in place). */
int64_t lab_percentile_s64(int64_t *v, size_t n, unsigned pct);

/*
 * Does a one-way latency of one_way ns, known to within +-bound ns, mean
 * anything? Yes when the bound is smaller than the figure: its sign and
 * its order of magnitude are then known (run=c2c's meaningful=).
 */
bool lab_c2c_meaningful(int64_t one_way, uint64_t bound);

/*
 * Format a histogram as " <k>:<count>" for each non-empty bucket into buf
 * (cut, never overrun); returns buf.
 */
char *lab_hist_format(char *buf, size_t cap, const uint64_t *hist, unsigned buckets);

#endif
