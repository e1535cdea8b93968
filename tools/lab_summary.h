/*
 * baretrace-decode --lab: the lab's summaries (run=hwlat, run=c2c,
 * run=timerlat; docs/lab.md) computed on the host from a capture's lab
 * events, in the kernel's line forms (docs/output.md), and --lab-plot's
 * pictures of them (tools/lab_plot.c).
 *
 * Two layers, so that the host tests drive the arithmetic without a
 * capture: lab_data collects what the events say (lab_add_*() per event,
 * lab_collect() for a whole decoded dump), lab_print() and lab_plot()
 * compute and write from it.
 *
 * Computed here, not copied: hwlat's per-CPU gaps, max and histogram, the
 * machine-wide merge (each gap widened by its CPU's skew bound from the
 * capture's CLOCK frames) and the SMIs counted across gaps; c2c's
 * meaningful= and the pair's bound from the CLOCK frames (clock_bound_ns);
 * timerlat's samples, max, percentiles and histogram. Taken from the
 * events as recorded: hwlat's threshold, resolution and SMI counts at the
 * run's ends (lab:hwlat_cpu), c2c's medians (lab:c2c: the per-sample
 * stamps are not recorded).
 */
#ifndef TOOLS_LAB_SUMMARY_H
#define TOOLS_LAB_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <trace/dump_read.h>
#include <trace/lab.h>

/* One CPU's hwlat run, from its events. */
struct lab_hw_cpu {
	bool ran;			/* its lab:hwlat_cpu arrived: it sampled */
	uint64_t threshold_ns;		/* as it used (lab:hwlat_cpu) */
	uint64_t resolution_ns;		/* its loop's median turn (lab:hwlat_cpu) */
	int64_t smi_start, smi_end;	/* its SMI count at the run's ends, -1 unknown */
	uint32_t injected;		/* stalls made on it */
	uint32_t counted;		/* gaps it counted itself (lab:hwlat_cpu) */
	uint64_t gaps;			/* lab:hwlat_gap events of this CPU */
	uint64_t max_ns;		/* ... the longest */
	int64_t smi_in_gaps;		/* sum of smi_after - smi_before over its gaps */
	bool smi_gaps_unknown;		/* ... not known: a gap's count was not read */
	uint64_t hist[LAB_HIST_BUCKETS];	/* ... by lab_log2_bucket() */
};

/* One ordered pair's lab:c2c event. */
struct lab_c2c {
	uint32_t from, to;		/* the pair */
	int64_t one_way_ns;		/* median one-way, corrected timeline */
	uint64_t bound_ns;		/* its skew bound, as the kernel computed it */
	uint64_t rtt_half_ns;		/* half the median round trip */
	uint32_t samples;		/* samples taken */
};

/* One CPU's timerlat samples. */
struct lab_tl_cpu {
	uint64_t *lat;			/* latencies, ns, in the order recorded */
	size_t n, cap;			/* used, allocated */
};

/* What a capture's lab events say, and the clock facts they are read with. */
struct lab_data {
	uint32_t nr_cpus;		/* entries in the per-CPU arrays */
	struct lab_hw_cpu *hw;		/* hwlat, per CPU */
	int64_t *uncert_ns;		/* per CPU: its skew bound for the merge, ns */
	int64_t *bound_ns;		/* per CPU: c2c's bound, ns rounded up; -1 unknown */
	struct lab_gap *gaps;		/* every hwlat gap, for the machine view */
	size_t ngaps, gaps_cap;
	struct lab_c2c *pairs;		/* c2c events, in the order recorded */
	size_t npairs, pairs_cap;
	struct lab_tl_cpu *tl;		/* timerlat, per CPU */
	uint64_t events;		/* lab events taken */
	uint64_t skipped;		/* lab events whose fields were not as expected */
};

/* Empty data for nr_cpus CPUs (1..256); false if out of memory. */
bool lab_data_init(struct lab_data *d, uint32_t nr_cpus);
void lab_data_free(struct lab_data *d);

/*
 * A CPU's skew bound from its CLOCK frame's figures (cycles, at tsc_hz):
 * for the merge, uncert converted and rounded down plus 1 (as the kernel's
 * hwlat widens); for c2c, rounded up, plus |skew| for an AP whose skew was
 * not applied (trusted false). -1 when tsc_hz is 0.
 */
int64_t lab_merge_uncert_ns(int64_t uncert_cycles, uint64_t tsc_hz);
int64_t lab_c2c_cpu_bound_ns(uint32_t cpu, int64_t skew_cycles, int64_t uncert_cycles,
			     bool trusted, uint64_t tsc_hz);

/* One event each; false if out of memory or cpu out of range. */
bool lab_add_gap(struct lab_data *d, uint32_t cpu, int64_t start_ns, uint64_t len_ns,
		 int64_t smi_before, int64_t smi_after);
bool lab_add_hwlat_cpu(struct lab_data *d, uint32_t cpu, uint64_t threshold_ns,
		       uint64_t resolution_ns, int64_t smi_start, int64_t smi_end,
		       uint32_t injected, uint32_t counted);
bool lab_add_c2c(struct lab_data *d, const struct lab_c2c *p);
bool lab_add_timerlat(struct lab_data *d, uint32_t cpu, uint64_t latency_ns);

/*
 * Every lab event of a decoded dump into d (initialised here for its
 * CPUs), with the CLOCK frames' skew bounds. False, and one line in why,
 * if out of memory.
 */
bool lab_collect(const struct dump_result *r, struct lab_data *d, char *why, size_t cap);

/* The machine-wide view of d's hwlat gaps (sorts d->gaps). */
void lab_hwlat_machine(struct lab_data *d, struct lab_merge *m, unsigned *ncpus, int64_t *smi);

/* One CPU's timerlat figures (nearest-rank percentiles, as the kernel's). */
struct lab_tl_figures {
	uint64_t samples, max_ns, p99_ns, p50_ns;
	uint64_t hist[LAB_HIST_BUCKETS];	/* by lab_log2_bucket() */
};
void lab_timerlat_figures(const struct lab_tl_cpu *t, struct lab_tl_figures *f);

/* The summary lines (docs/output.md, "baretrace-decode --lab"); -1 on a write error. */
int lab_print(struct lab_data *d, FILE *out);

/*
 * The pictures into dir (created if missing): hwlat_gaps.svg,
 * timerlat.svg, c2c.svg, each only where d has the job's events; the
 * paths written are named on info. -1, with one line on err, on failure.
 */
int lab_plot(struct lab_data *d, const char *dir, const char *title, FILE *info, FILE *err);

/*
 * baretrace-decode's --lab: summarise r (rc: dump_read()'s result) from
 * capture, to stdout, and plot into plot_dir if not NULL. Returns the
 * decoder's exit status: 0, or nonzero with one line on stderr (a damaged
 * dump or lost events: figures would be wrong; no lab events).
 */
int lab_summary_main(const struct dump_result *r, int rc, const char *capture,
		     const char *plot_dir);

#endif
