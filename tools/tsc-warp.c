/*
 * tsc-warp: does the host's TSC, read the way QEMU reads it, go back
 * between CPUs?
 *
 *   build/tools/tsc-warp [READS]        (make tsc-warp)
 *
 * For every pair of online host CPUs, two threads pinned to them take
 * turns under a spinlock: read the TSC, compare with the last reading the
 * pair made (on either CPU), store it.  The lock orders the turns, so a
 * reading below the last one is a warp.  Two ways of reading:
 *
 *   read=fenced  lfence; rdtsc   the read cannot start before the lock is
 *                                taken: a warp means the CPUs' counters
 *                                really differ
 *   read=plain   rdtsc           as QEMU's cpu_get_ticks() reads the host
 *                                TSC under its spinlock: rdtsc is not
 *                                serializing and may execute before the
 *                                locked exchange that takes the lock, so
 *                                it can return a value older than the
 *                                previous holder's
 *
 * One line per pair and way, then a summary, stable for scripts:
 *
 *   tsc-warp: cpus=<a>,<b> read=<fenced|plain> reads=<n> warps=<n> max_warp_cycles=<n>
 *   tsc-warp: fenced_max_warp_cycles=<n> plain_max_warp_cycles=<n> plain_warps_per_million=<n>
 *
 * Why it matters to baretrace.  Under plain TCG (no icount) QEMU's guest
 * TSC is the host's TSC plus an offset, and QEMU never lets it go back: a
 * reading below the previous one raises the offset by the difference, for
 * good.  Every plain warp is therefore a permanent gain of the guest's TSC
 * on QEMU's timers (HPET, PM timer, PIT, LAPIC timer), which follow the
 * host's monotonic clock.  With several vCPU threads reading the TSC often
 * on different host CPUs the gains add up to a drift of the guest's TSC
 * against its references, a real one that the clock watchdog reports
 * (docs/clock.md).  Under -icount the guest TSC is derived from the
 * instruction count and none of this applies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#define DEFAULT_READS	1000000ul	/* per thread */

struct pair {
	int cpu[2];
	int fenced;			/* lfence before rdtsc */
	unsigned long reads;		/* per thread */
	volatile int lock;
	uint64_t last, warps, max_warp, n;
	const char *err;
};

struct arg {
	struct pair *p;
	int cpu;
};

static void *reader(void *v)
{
	struct arg *a = v;
	struct pair *p = a->p;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		p->err = "cannot pin a thread to its CPU";
		return NULL;
	}
	for (unsigned long i = 0; i < p->reads; i++) {
		uint64_t t;

		while (__atomic_exchange_n(&p->lock, 1, __ATOMIC_ACQUIRE))
			;
		if (p->fenced)
			_mm_lfence();	/* the read happens inside the lock */
		t = __rdtsc();
		if (t < p->last) {
			p->warps++;
			if (p->last - t > p->max_warp)
				p->max_warp = p->last - t;
		}
		p->last = t;
		p->n++;
		__atomic_store_n(&p->lock, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int run_pair(struct pair *p)
{
	pthread_t th[2];
	struct arg a[2];

	for (int i = 0; i < 2; i++) {
		a[i] = (struct arg){ p, p->cpu[i] };
		if (pthread_create(&th[i], NULL, reader, &a[i])) {
			fprintf(stderr, "tsc-warp: cannot start a thread: %s\n", strerror(errno));
			return -1;
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	if (p->err) {
		fprintf(stderr, "tsc-warp: cpus=%d,%d: %s\n", p->cpu[0], p->cpu[1], p->err);
		return -1;
	}
	printf("tsc-warp: cpus=%d,%d read=%s reads=%llu warps=%llu max_warp_cycles=%llu\n",
	       p->cpu[0], p->cpu[1], p->fenced ? "fenced" : "plain", (unsigned long long)p->n, (unsigned long long)p->warps,
	       (unsigned long long)p->max_warp);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long reads = DEFAULT_READS;
	cpu_set_t online;
	int cpus[CPU_SETSIZE], n = 0, rc = 0;
	uint64_t worst[2] = { 0, 0 }, warps[2] = { 0, 0 }, total[2] = { 0, 0 };

	if (argc > 2 || (argc == 2 && !strcmp(argv[1], "--help"))) {
		fprintf(stderr, "usage: tsc-warp [READS]  (readings per thread and pair, "
				"default %lu)\n", DEFAULT_READS);
		return 2;
	}
	if (argc == 2) {
		char *end;

		errno = 0;
		reads = strtoul(argv[1], &end, 10);
		if (errno || *end || !reads || argv[1][0] == '-') {
			fprintf(stderr, "tsc-warp: READS must be a positive integer, not '%s'\n",
				argv[1]);
			return 2;
		}
	}
	if (sched_getaffinity(0, sizeof(online), &online)) {
		fprintf(stderr, "tsc-warp: cannot read the CPUs this process may use: %s\n",
			strerror(errno));
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &online))
			cpus[n++] = c;
	if (n < 2) {
		printf("tsc-warp: one CPU only: nothing to compare\n");
		return 0;
	}
	for (int fenced = 1; fenced >= 0; fenced--) {
		for (int i = 0; i < n; i++) {
			for (int j = i + 1; j < n; j++) {
				struct pair *p = calloc(1, sizeof(*p));

				if (!p) {
					fprintf(stderr, "tsc-warp: out of memory\n");
					return 1;
				}
				p->cpu[0] = cpus[i];
				p->cpu[1] = cpus[j];
				p->fenced = fenced;
				p->reads = reads;
				if (run_pair(p)) {
					rc = 1;
				} else {
					if (p->max_warp > worst[fenced])
						worst[fenced] = p->max_warp;
					warps[fenced] += p->warps;
					total[fenced] += p->n;
				}
				free(p);
			}
		}
	}
	printf("tsc-warp: fenced_max_warp_cycles=%llu plain_max_warp_cycles=%llu "
	       "plain_warps_per_million=%llu\n", (unsigned long long)worst[1],
	       (unsigned long long)worst[0],
	       (unsigned long long)(total[0] ? warps[0] * 1000000 / total[0] : 0));
	return rc;
}
