/*
 * Peer "lttng-ust": the same event through LTTng-UST 2.13 from Debian.
 *
 * lttng_ust_tracepoint() is a macro expanded at the call site, like the
 * kernel's trace_bench(): a test of the event's enabled state, then a call
 * to the probe, which reserves on the calling CPU's sub-buffer (per-UID
 * buffers), stamps with LTTng's clock (CLOCK_MONOTONIC through the vDSO),
 * writes a compact event header and the two fields, and commits.
 *
 * The session, the channel and the event are the benchmark script's
 * business (lttng CLI); this binary only refuses to measure when nobody
 * enabled the event, since a disabled tracepoint costs one load.
 */
#include <baretrace/compiler.h>

#include "bench_host.h"
#include "lttng_tp.h"

/* The writer's context level, as the kernel keeps it per CPU. */
static __thread unsigned bench_level;

__noinline static void lttng_run(struct bench_thread *t, uint64_t n)
{
	uint64_t i;

	(void)t;
	for (i = 0; i < n; i++)
		lttng_ust_tracepoint(baretrace_bench, event1,
				     bench_ent_word(TEV_bench, bench_level, 1), (uint32_t)i);
}

static int lttng_setup(const struct bench_opts *o)
{
	(void)o;
	if (!lttng_ust_tracepoint_enabled(baretrace_bench, event1)) {
		fprintf(stderr, "lttng-ust: event baretrace_bench:event1 is not enabled: "
				"no LTTng session is recording it (is lttng-sessiond running, "
				"and was the session started?)\n");
		return -1;
	}
	return 0;
}

static int lttng_thread_init(struct bench_thread *t, const struct bench_opts *o)
{
	(void)t;
	(void)o;
	bench_level = 0;
	return 0;
}

/* Counts are checked from the trace by the script (babeltrace2). */
static int lttng_check(struct bench_thread *t, unsigned n, const struct bench_opts *o,
		       uint64_t expected, FILE *out)
{
	(void)t;
	(void)o;
	fprintf(out, "bench-host-check: peer=lttng-ust threads=%u events_written=%llu "
		"(counted in the trace by the script)\n",
		n, (unsigned long long)expected * n);
	return 0;
}

static const struct bench_peer bench_peer_lttng = {
	.name = "lttng-ust",
	.setup = lttng_setup,
	.thread_init = lttng_thread_init,
	.run = lttng_run,
	.check = lttng_check,
};

const struct bench_peer *const bench_peers[] = {
	&bench_peer_lttng,
	NULL,
};
