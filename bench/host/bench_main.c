/*
 * Host benchmark driver: runs one peer's write loop on N pinned threads.
 *
 * Method (after the ring_buffer_benchmark of Linux, with its reader off):
 *   - thread i is pinned to the i-th CPU this process may run on, before it
 *     starts (so it never runs anywhere else);
 *   - each thread sets its peer up, writes `warmup` events untimed (caches,
 *     branch predictors, every page of its buffer touched), then for each
 *     repetition waits at a barrier and writes `events` events in one loop
 *     between two clock_gettime(CLOCK_MONOTONIC) calls;
 *   - ns per event = loop time / events.  No clock is read per event beyond
 *     the peer's own stamp: timing each event would add a clock read to
 *     every figure (Linux's write_interval lesson);
 *   - the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), minor faults and
 *     involuntary context switches of each timed loop are printed beside
 *     it: on a shared machine another process may take a writer's CPU, and
 *     the CPU time then shows the loop's own cost where the wall time does
 *     not.
 *
 * Output, one line per thread and repetition, then one per repetition (the
 * mean over threads), then the peer's checks:
 *   bench-host-rep: peer=P rep=R thread=T cpu=C events=M ns=.. ns_per_event=..
 *                   cpu_ns_per_event=.. minflt=.. nivcsw=..
 *   bench-host-run: peer=P threads=N events=M rep=R ns_per_event=..
 *   bench-host-check: peer=P ...
 *
 * Usage: bench-host --peer=NAME [--threads=N] [--events=M] [--warmup=W]
 *                   [--reps=R] [--buf-bytes=B]
 * Exit: 0 done and checks passed, 1 a check failed, 2 bad usage or set-up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_host.h"

static struct bench_opts opts = {
	.threads = 0,			/* 0: one per CPU we may run on */
	.events = 1000000,
	.warmup = 100000,
	.reps = 1,
	.buf_bytes = 64 * 4096,		/* the kernel's default ring: 64 pages */
};

static const struct bench_peer *peer;
static pthread_barrier_t barrier;
static int init_failed;			/* a thread's init failed: all skip */

/* One thread's timed loop in one repetition. */
struct rep_result {
	uint64_t ns;		/* wall time, CLOCK_MONOTONIC */
	uint64_t cpu_ns;	/* the thread's CPU time */
	long minflt;		/* minor page faults */
	long nivcsw;		/* involuntary context switches */
};

struct worker {
	struct bench_thread t;		/* what the peer sees */
	struct rep_result *res;		/* opts.reps entries */
	pthread_t thread;		/* its pthread */
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *writer(void *arg)
{
	struct worker *w = arg;
	struct bench_thread *t = &w->t;
	struct rusage r0, r1;
	uint64_t t0, t1, c0, c1;
	unsigned rep;

	if (peer->thread_init(t, &opts) != 0)
		__atomic_store_n(&init_failed, 1, __ATOMIC_RELAXED);
	pthread_barrier_wait(&barrier);
	if (__atomic_load_n(&init_failed, __ATOMIC_RELAXED))
		return NULL;
	peer->run(t, opts.warmup);
	for (rep = 0; rep < opts.reps; rep++) {
		pthread_barrier_wait(&barrier);	/* all threads start together */
		getrusage(RUSAGE_THREAD, &r0);
		c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		t0 = now_ns(CLOCK_MONOTONIC);
		peer->run(t, opts.events);
		t1 = now_ns(CLOCK_MONOTONIC);
		c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		getrusage(RUSAGE_THREAD, &r1);
		w->res[rep].ns = t1 - t0;
		w->res[rep].cpu_ns = c1 - c0;
		w->res[rep].minflt = r1.ru_minflt - r0.ru_minflt;
		w->res[rep].nivcsw = r1.ru_nivcsw - r0.ru_nivcsw;
	}
	return NULL;
}

static int parse_u64(const char *arg, const char *name, uint64_t min, uint64_t max,
		     uint64_t *out)
{
	size_t n = strlen(name);
	char *end;
	unsigned long long v;

	if (strncmp(arg, name, n) != 0 || arg[n] != '=')
		return 0;
	errno = 0;
	v = strtoull(arg + n + 1, &end, 0);
	if (errno || *end || end == arg + n + 1 || v < min || v > max) {
		fprintf(stderr, "bench-host: %s: expected an integer in %" PRIu64 "..%" PRIu64 "\n",
			arg, min, max);
		exit(2);
	}
	*out = v;
	return 1;
}

static void usage(void)
{
	unsigned i;

	fprintf(stderr, "usage: bench-host --peer=NAME [--threads=N] [--events=M] [--warmup=W]\n"
			"                  [--reps=R] [--buf-bytes=B]\npeers:");
	for (i = 0; bench_peers[i]; i++)
		fprintf(stderr, " %s", bench_peers[i]->name);
	fprintf(stderr, "\n");
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	uint64_t v;
	int i;
	unsigned k;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strncmp(a, "--peer=", 7) == 0) {
			for (k = 0; bench_peers[k]; k++)
				if (strcmp(bench_peers[k]->name, a + 7) == 0)
					peer = bench_peers[k];
			if (!peer) {
				fprintf(stderr, "bench-host: unknown peer '%s'\n", a + 7);
				usage();
			}
		} else if (parse_u64(a, "--threads", 1, BENCH_MAX_THREADS, &v)) {
			opts.threads = (unsigned)v;
		} else if (parse_u64(a, "--events", 0, 1ull << 40, &v)) {
			opts.events = v;
		} else if (parse_u64(a, "--warmup", 0, 1ull << 40, &v)) {
			opts.warmup = v;
		} else if (parse_u64(a, "--reps", 1, 1000, &v)) {
			opts.reps = (unsigned)v;
		} else if (parse_u64(a, "--buf-bytes", 8192, 1ull << 34, &v)) {
			opts.buf_bytes = v;
		} else {
			usage();
		}
	}
	if (!peer)
		usage();
}

/* The CPUs this process may run on, in order; returns how many. */
static unsigned allowed_cpus(int *list, unsigned max)
{
	cpu_set_t set;
	unsigned n = 0;
	int c;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	for (c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			list[n++] = c;
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int cpus[BENCH_MAX_THREADS];
	unsigned ncpus, i, rep;
	struct worker *ws;
	double *per_rep;
	int ret = 0;

	parse_args(argc, argv);
	ncpus = allowed_cpus(cpus, BENCH_MAX_THREADS);
	if (ncpus == 0) {
		fprintf(stderr, "bench-host: sched_getaffinity failed\n");
		return 2;
	}
	if (opts.threads == 0)
		opts.threads = ncpus;
	if (opts.threads > ncpus)
		fprintf(stderr, "bench-host: note: %u threads on %u CPUs: some share a CPU\n",
			opts.threads, ncpus);
	if (peer->setup(&opts) != 0)
		return 2;

	ws = calloc(opts.threads, sizeof(*ws));
	per_rep = calloc(opts.reps, sizeof(*per_rep));
	if (!ws || !per_rep)
		return 2;
	pthread_barrier_init(&barrier, NULL, opts.threads);
	for (i = 0; i < opts.threads; i++) {
		pthread_attr_t attr;
		cpu_set_t set;

		ws[i].t.idx = i;
		ws[i].t.cpu = cpus[i % ncpus];
		ws[i].res = calloc(opts.reps, sizeof(*ws[i].res));
		if (!ws[i].res)
			return 2;
		CPU_ZERO(&set);
		CPU_SET(ws[i].t.cpu, &set);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		if (pthread_create(&ws[i].thread, &attr, writer, &ws[i]) != 0) {
			fprintf(stderr, "bench-host: pthread_create failed\n");
			return 2;
		}
		pthread_attr_destroy(&attr);
	}
	for (i = 0; i < opts.threads; i++)
		pthread_join(ws[i].thread, NULL);
	if (init_failed)
		return 2;

	for (rep = 0; rep < opts.reps; rep++) {
		double sum = 0;

		for (i = 0; i < opts.threads; i++) {
			const struct rep_result *r = &ws[i].res[rep];
			double npe = opts.events ? (double)r->ns / (double)opts.events : 0;
			double cpe = opts.events ? (double)r->cpu_ns / (double)opts.events : 0;

			printf("bench-host-rep: peer=%s rep=%u thread=%u cpu=%d events=%" PRIu64
			       " ns=%" PRIu64 " ns_per_event=%.3f cpu_ns_per_event=%.3f"
			       " minflt=%ld nivcsw=%ld\n",
			       peer->name, rep + 1, i, ws[i].t.cpu, opts.events, r->ns, npe, cpe,
			       r->minflt, r->nivcsw);
			sum += npe;
		}
		per_rep[rep] = sum / opts.threads;
		printf("bench-host-run: peer=%s threads=%u events=%" PRIu64 " rep=%u"
		       " ns_per_event=%.3f\n", peer->name, opts.threads, opts.events, rep + 1,
		       per_rep[rep]);
	}
	if (opts.reps > 1) {
		qsort(per_rep, opts.reps, sizeof(*per_rep), cmp_double);
		printf("bench-host-summary: peer=%s threads=%u events=%" PRIu64 " reps=%u"
		       " ns_per_event=%.3f ns_min=%.3f ns_max=%.3f\n", peer->name, opts.threads,
		       opts.events, opts.reps,
		       opts.reps % 2 ? per_rep[opts.reps / 2]
				     : (per_rep[opts.reps / 2 - 1] + per_rep[opts.reps / 2]) / 2,
		       per_rep[0], per_rep[opts.reps - 1]);
	}
	if (peer->check) {
		struct bench_thread ts[BENCH_MAX_THREADS];

		for (i = 0; i < opts.threads; i++)
			ts[i] = ws[i].t;
		ret = peer->check(ts, opts.threads, &opts,
				  opts.warmup + opts.events * opts.reps, stdout);
	}
	fflush(stdout);
	return ret ? 1 : 0;
}
