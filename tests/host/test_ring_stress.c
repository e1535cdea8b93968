/*
 * Stress test of the per-CPU ring buffer on the host.
 *
 * Each simulated CPU is a writer thread with two interval timers of its
 * own, delivering SIGUSR1 ("IRQ", context level 2) every IRQ_PERIOD_NS and
 * SIGUSR2 ("NMI", level 3, which may interrupt the IRQ handler but not the
 * other way round) every NMI_PERIOD_NS, asynchronously, from the kernel.
 * The handlers write events too, so writes nest three deep at random points
 * of the ring buffer code; now and then an NMI writes more than the whole
 * ring holds, running the tail onto the page of the writer it interrupted.  A reader thread takes pages from every
 * CPU while all this goes on.  The CPUs cover both modes and both
 * reservation methods; the writers' clocks jump now and then to force time
 * extends and absolute stamps.
 *
 * The run has two phases.  First only RACE_CPU writes: the smallest ring
 * (2 pages, overwrite) and a flush after every event, so its writer
 * switches pages every few hundred nanoseconds while the reader, running in
 * parallel, takes the very page the writer is about to reclaim: the
 * reader's CAS and the writer's CAS on one slot race.  This phase lasts
 * until both sides have lost such a race (15% to 40% of the time).  Then
 * the other CPUs write, with interrupts, for the rest of the time.
 *
 * Checked: every payload (magic, CPU, level, length, sequence number,
 * checksum, every filler byte), the event's stamp lies between clock reads
 * the writer took around its reserve, stamps never decrease in one CPU's
 * buffer order, sequence numbers of each (CPU, level) strictly increase, the
 * counters agree with what writers and reader counted themselves (attempts,
 * accepted, dropped, decoded), nothing is left in the buffer after the
 * drain, every event not decoded is a sequence gap and the lost counts on
 * the pages add up to exactly those gaps; statistics read while the
 * writers run agree with what the reader took so far.
 *
 * Usage: test_ring_stress [seconds]   (default 3)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRACE_ARCH_HOST_DEFINE
#include <arch/trace_arch.h>
#include <trace/ring_buffer.h>

#define NR_CPUS		5
#define RACE_CPU	(NR_CPUS - 1)	/* 2 pages, flushes after every event */
#define NR_PAGES	8		/* ring pages; RACE_CPU has only 2 */
#define PAGE_SIZE	4096u
#define MAGIC		0xb7u
#define HEAD_SIZE	40u		/* struct ev_head */
#define MAX_ABS_JUMPS	4		/* clock jumps past 2^54, per writer */
#define IRQ_PERIOD_NS	50000		/* SIGUSR1 timer, per writer */
#define NMI_PERIOD_NS	130000		/* SIGUSR2 timer, per writer */
#define STORM_EVERY	64		/* every so many NMIs write a storm ... */
#define STORM_EVENTS	(NR_PAGES * 48)	/* ... of more than a ring's worth */

enum method { XADD, CMPXCHG };

/* The fixed start of every payload; filler bytes follow up to len. */
struct ev_head {
	uint32_t magic;		/* MAGIC << 24 | cpu << 8 | level */
	uint32_t len;		/* payload bytes the writer asked for */
	uint64_t seq;		/* per (cpu, level), from 0 */
	uint64_t t_before;	/* clock before the reserve */
	uint64_t t_after;	/* clock after it returned */
	uint32_t sum;		/* checksum of the fields above */
	uint32_t zero;		/* always 0 */
};
_Static_assert(sizeof(struct ev_head) == HEAD_SIZE, "payload head");

struct sim_cpu {
	struct rb_cpu_buffer *cb;		/* its buffer */
	void *pages[NR_PAGES + 1];		/* its pages */
	pthread_t thread;			/* its writer */
	timer_t timers[2];			/* its IRQ and NMI sources */
	uint32_t id;				/* CPU number */
	uint32_t mode;				/* enum rb_mode */
	uint32_t nr_pages;			/* ring pages */
	enum method method;			/* how it reserves */
	int armed;				/* handlers may write */
	int stop;				/* the writer should finish */
	uint32_t flush_every;			/* events between flushes */

	/* Writer side: each level's fields are touched by that level only. */
	uint64_t next_seq[RB_NEST_MAX];		/* attempts (ok or dropped) */
	uint64_t stored[RB_NEST_MAX];		/* reserve succeeded */
	uint64_t dropped[RB_NEST_MAX];		/* reserve said -RB_EFULL */
	uint64_t unexpected[RB_NEST_MAX];	/* any other error */
	uint64_t rng[RB_NEST_MAX];		/* xorshift state */
	uint64_t handled[RB_NEST_MAX];		/* signals handled per level */
	uint64_t rejected;			/* bad sizes tried (task level) */
	uint64_t flushes;			/* successful flushes */
	uint64_t unpublished;			/* commit_pos behind the tail when idle */
	uint64_t final_flush_fail;		/* final flush never succeeded */

	/* Reader side: the reader thread only. */
	uint64_t got[RB_NEST_MAX];		/* events received */
	uint64_t last_seq[RB_NEST_MAX];		/* last seq + 1, 0 = none */
	uint64_t last_ts;			/* last stamp seen */
	uint64_t last_pos;			/* last page sequence number + 1 */
	uint64_t last_base;			/* base stamp of the last page */
	uint64_t lost;				/* sum of the pages' lost counts */
	uint64_t taken;				/* pages taken */
	uint64_t bad_payload, bad_order, bad_ts, bad_seq, bad_page;
	uint64_t bad_live;			/* live statistics that did not add up */
	uint64_t live_checks;			/* live statistics read */
	struct rb_stats live_prev;		/* the previous live statistics */
};

static struct sim_cpu cpus[NR_CPUS];
static __thread struct sim_cpu *this_cpu;	/* set by each writer thread */
static int stop_read;			/* the reader should drain and end */

static int checks_passed, checks_failed;

static void check(int ok, const char *what, uint32_t cpu)
{
	if (ok) {
		checks_passed++;
		return;
	}
	checks_failed++;
	printf("FAIL cpu %u: %s\n", cpu, what);
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static uint8_t fill_byte(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131u + i * 7u + (seq >> 8));
}

static uint32_t head_sum(const struct ev_head *h)
{
	uint64_t x = h->magic ^ (uint64_t)h->len << 32;

	x ^= h->seq * 0x9e3779b97f4a7c15ull;
	x ^= h->t_before * 0xc2b2ae3d27d4eb4full;
	x ^= h->t_after * 0x165667b19e3779f9ull;
	return (uint32_t)(x ^ x >> 32);
}

static int reserve(struct sim_cpu *c, uint32_t len, void **data)
{
	return c->method == CMPXCHG ? ring_buffer_reserve_cmpxchg(c->cb, len, data)
				    : ring_buffer_reserve_xadd(c->cb, len, data);
}

/* Write one event at the current level; safe in a signal handler. */
static void emit(struct sim_cpu *c, unsigned level)
{
	uint64_t r = rnd(&c->rng[level]);
	uint32_t len, i;
	struct ev_head h;
	uint8_t *p;
	void *data;
	int rc;

	if (r % 97 == 0)
		len = RB_MAX_PAYLOAD;
	else
		len = HEAD_SIZE + (uint32_t)(r >> 8) % 160u;
	h.t_before = arch_read_cycles();
	rc = reserve(c, len, &data);
	h.t_after = arch_read_cycles();
	h.seq = c->next_seq[level]++;
	if (rc == -RB_EFULL) {
		c->dropped[level]++;
		return;
	}
	if (rc != 0) {
		c->next_seq[level]--;
		c->unexpected[level]++;
		return;
	}
	h.magic = MAGIC << 24 | c->id << 8 | level;
	h.len = len;
	h.zero = 0;
	h.sum = head_sum(&h);
	p = data;
	memcpy(p, &h, sizeof(h));
	for (i = HEAD_SIZE; i < len; i++)
		p[i] = fill_byte(h.seq, i);
	ring_buffer_commit(c->cb);
	c->stored[level]++;
}

static void on_signal(int sig)
{
	struct sim_cpu *c = this_cpu;
	unsigned level = sig == SIGUSR2 ? 3 : 2;
	unsigned saved, n, k;
	int saved_errno = errno;

	if (!c || !__atomic_load_n(&c->armed, __ATOMIC_RELAXED))
		return;
	c->handled[level]++;
	saved = host_trace_level;
	host_trace_level = level;
	if (level == 2)
		n = 1 + (unsigned)(c->next_seq[2] % 3);
	else	/* now and then wrap the ring onto the interrupted writer */
		n = c->handled[3] % STORM_EVERY == 0 ? STORM_EVENTS : 1;
	for (k = 0; k < n; k++)
		emit(c, level);
	host_trace_level = saved;
	errno = saved_errno;
}

static void block_signals(int block)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

static void sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	nanosleep(&ts, NULL);
}

/* Interrupt sources aimed at the calling thread only. */
static void start_timers(struct sim_cpu *c)
{
	const int signo[2] = { SIGUSR1, SIGUSR2 };
	const long period[2] = { IRQ_PERIOD_NS, NMI_PERIOD_NS };
	struct sigevent sev;
	struct itimerspec its;
	unsigned i;

	for (i = 0; i < 2; i++) {
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = signo[i];
		sev._sigev_un._tid = gettid();
		if (timer_create(CLOCK_MONOTONIC, &sev, &c->timers[i]) != 0) {
			perror("timer_create");
			exit(2);
		}
		its.it_interval.tv_sec = 0;
		its.it_interval.tv_nsec = period[i];
		its.it_value = its.it_interval;
		timer_settime(c->timers[i], 0, &its, NULL);
	}
}

/* Phase 1 wants the reader and the race writer truly in parallel. */
static void pin_to(unsigned host_cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(host_cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void unpin(void)
{
	cpu_set_t set;
	long i, n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	for (i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *writer(void *arg)
{
	struct sim_cpu *c = arg;
	unsigned abs_jumps = 0;
	uint64_t n = 0;
	void *data;
	int rc, tries;

	this_cpu = c;
	if (c->id == RACE_CPU)
		pin_to(1);
	host_trace_level = 0;
	__atomic_store_n(&c->armed, 1, __ATOMIC_RELAXED);
	start_timers(c);
	block_signals(0);
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		emit(c, 0);
		n++;
		if (n % 4096 == 0)	/* a long gap: time extends */
			__atomic_store_n(&host_clock_skew, host_clock_skew + (1ull << 28),
					 __ATOMIC_RELAXED);
		if (n % 200000 == 0 && abs_jumps < MAX_ABS_JUMPS) {	/* absolute stamps */
			__atomic_store_n(&host_clock_skew, host_clock_skew + (1ull << 55),
					 __ATOMIC_RELAXED);
			abs_jumps++;
		}
		if (n % 64 == 0) {
			/* Between writes every finished page is published (I8);
			 * no interrupt may run between the two reads. */
			block_signals(1);
			if (__atomic_load_n(&c->cb->commit_pos, __ATOMIC_RELAXED) !=
			    c->cb->tail_pos)
				c->unpublished++;
			block_signals(0);
		}
		if (n % c->flush_every == 0 && ring_buffer_flush(c->cb) == 0)
			c->flushes++;
		if (n % 5000 == 1) {	/* bad sizes: refused, counted */
			if (reserve(c, 0, &data) == -RB_EINVAL)
				c->rejected++;
			if (reserve(c, RB_MAX_PAYLOAD + 1, &data) == -RB_EINVAL)
				c->rejected++;
		}
	}
	/* Quiesce: no more nested writers, then hand over the last page. */
	block_signals(1);
	__atomic_store_n(&c->armed, 0, __ATOMIC_RELAXED);
	timer_delete(c->timers[0]);
	timer_delete(c->timers[1]);
	for (tries = 0; tries < 20000; tries++) {
		rc = ring_buffer_flush(c->cb);
		if (rc == 0)
			break;
		sleep_us(100);	/* discard mode: wait for the reader */
	}
	if (tries == 20000)
		c->final_flush_fail = 1;
	return NULL;
}

static uint64_t sum(const uint64_t *v);

/* Check one page the reader took from c. */
static void take(struct sim_cpu *c, const struct rb_read *rd)
{
	const struct rb_page_header *hdr = rd->page;
	struct rb_page_iter it;
	struct rb_event ev = { 0 };
	uint32_t count = 0, level, i;
	struct ev_head h;
	int rc;

	c->taken++;
	c->lost += hdr->lost;
	if (hdr->cpu != c->id || hdr->pos + 1 <= c->last_pos ||
	    hdr->lost != rd->lost_overrun + rd->lost_dropped ||
	    rb_page_iter_init(&it, rd->page, rd->page_size) != RB_ITER_END) {
		c->bad_page++;
		return;
	}
	/* Bases order pages in time: not below anything stamped before. */
	if (hdr->base_ts < c->last_base || hdr->base_ts < c->last_ts)
		c->bad_order++;
	c->last_base = hdr->base_ts;
	c->last_pos = hdr->pos + 1;
	while ((rc = rb_page_iter_next(&it, &ev)) == RB_ITER_EVENT) {
		count++;
		if (ev.len < HEAD_SIZE) {
			c->bad_payload++;
			continue;
		}
		memcpy(&h, ev.data, sizeof(h));
		level = h.magic & 0xff;
		if (h.magic >> 24 != MAGIC || (h.magic >> 8 & 0xffff) != c->id ||
		    level >= RB_NEST_MAX || ev.len != rb_payload_round(h.len) ||
		    h.zero != 0 || h.sum != head_sum(&h)) {
			c->bad_payload++;
			continue;
		}
		for (i = HEAD_SIZE; i < ev.len; i++)
			if (ev.data[i] != (i < h.len ? fill_byte(h.seq, i) : 0))
				break;
		if (i != ev.len)
			c->bad_payload++;
		if (ev.ts < h.t_before || ev.ts > h.t_after)
			c->bad_ts++;
		if (ev.ts < c->last_ts)
			c->bad_order++;
		c->last_ts = ev.ts;
		if (h.seq + 1 <= c->last_seq[level])
			c->bad_seq++;
		c->last_seq[level] = h.seq + 1;
		c->got[level]++;
	}
	if (rc != RB_ITER_END || count != hdr->entries || count != rd->entries)
		c->bad_page++;
}

/*
 * Statistics read by the reader while the writers run.  What the reader
 * itself has taken is exact at this moment (only this thread reads): the
 * events and pages it counted and the lost counts it summed.  The writers'
 * counters may only grow.  (Entries may not: stored events are summed from
 * live pages and finalised ones, which a publish may move between during
 * the call.)
 */
static void live_stats(struct sim_cpu *c)
{
	struct rb_stats st;

	ring_buffer_stats(c->cb, &st);
	if (st.read != sum(c->got) + c->bad_payload || st.pages_read != c->taken ||
	    st.lost != c->lost)
		c->bad_live++;
	if (st.dropped < c->live_prev.dropped || st.overrun < c->live_prev.overrun ||
	    st.voided < c->live_prev.voided || st.commit_overrun < c->live_prev.commit_overrun ||
	    st.busy < c->live_prev.busy)
		c->bad_live++;
	c->live_prev = st;
	c->live_checks++;
}

static void *reader(void *arg)
{
	struct rb_read rd;
	uint64_t rounds = 0;
	int idle, rc, pinned = 1;
	unsigned k;

	(void)arg;
	block_signals(1);
	pin_to(0);
	for (;;) {
		int final = __atomic_load_n(&stop_read, __ATOMIC_ACQUIRE);

		if (pinned && __atomic_load_n(&cpus[RACE_CPU].stop, __ATOMIC_RELAXED)) {
			unpin();
			pinned = 0;
		}
		idle = 1;
		for (k = 0; k < NR_CPUS; k++) {
			while ((rc = ring_buffer_read_page(cpus[k].cb, &rd)) == 1) {
				take(&cpus[k], &rd);
				idle = 0;
			}
			if (rc < 0 && rc != -RB_EAGAIN)
				cpus[k].bad_page++;
			if (rc == -RB_EAGAIN)
				idle = 0;
		}
		if (++rounds % 256 == 0)	/* statistics from another CPU */
			for (k = 0; k < NR_CPUS; k++)
				live_stats(&cpus[k]);
		if (final && idle)
			break;
	}
	return NULL;
}

static void setup_cpu(struct sim_cpu *c, uint32_t id)
{
	struct rb_cpu_config cfg = {
		.cpu = id, .nr_pages = id == RACE_CPU ? 2 : NR_PAGES,
		.page_size = PAGE_SIZE,
		.mode = id % 2 ? RB_MODE_DISCARD : RB_MODE_OVERWRITE,
	};
	size_t size = ring_buffer_cpu_size(cfg.nr_pages);
	unsigned i;

	c->id = id;
	c->mode = cfg.mode;
	c->nr_pages = cfg.nr_pages;
	c->flush_every = id == RACE_CPU ? 1 : 1500;
	c->method = id / 2 % 2 ? CMPXCHG : XADD;
	for (i = 0; i < RB_NEST_MAX; i++)
		c->rng[i] = 0x9e3779b97f4a7c15ull * (id * RB_NEST_MAX + i + 1);
	c->cb = aligned_alloc(CACHELINE_SIZE, ALIGN_UP(size, CACHELINE_SIZE));
	for (i = 0; i <= c->nr_pages; i++)
		c->pages[i] = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	if (!c->cb || ring_buffer_cpu_init(c->cb, size, &cfg, c->pages) != 0) {
		fprintf(stderr, "test_ring_stress: setup failed\n");
		exit(2);
	}
}

static uint64_t sum(const uint64_t *v)
{
	uint64_t s = 0;
	unsigned i;

	for (i = 0; i < RB_NEST_MAX; i++)
		s += v[i];
	return s;
}

static void verify(struct sim_cpu *c)
{
	uint64_t written = sum(c->next_seq), stored = sum(c->stored);
	uint64_t dropped = sum(c->dropped), got = sum(c->got), missing = 0;
	struct rb_stats st;
	unsigned l;

	ring_buffer_stats(c->cb, &st);
	for (l = 0; l < RB_NEST_MAX; l++)
		missing += c->next_seq[l] - c->got[l];
	printf("cpu %u %u pages %-9s %-7s written %9llu read %9llu overrun %9llu dropped %9llu "
	       "commit_overrun %llu busy %llu voided %llu raced %llu/%llu | irq/nmi "
	       "signals %llu/%llu events read %llu/%llu | not decoded %llu, pages' lost %llu\n",
	       c->id, c->nr_pages, c->mode == RB_MODE_DISCARD ? "discard" : "overwrite",
	       c->method == CMPXCHG ? "cmpxchg" : "xadd",
	       (unsigned long long)written, (unsigned long long)got,
	       (unsigned long long)st.overrun, (unsigned long long)st.dropped,
	       (unsigned long long)st.commit_overrun, (unsigned long long)st.busy,
	       (unsigned long long)st.voided, (unsigned long long)st.read_raced,
	       (unsigned long long)st.claim_raced, (unsigned long long)c->handled[2],
	       (unsigned long long)c->handled[3], (unsigned long long)c->got[2],
	       (unsigned long long)c->got[3], (unsigned long long)missing,
	       (unsigned long long)c->lost);

	check(st.state == RB_STATE_RECORDING, "recording was stopped", c->id);
	if (st.stop_reason)
		printf("  stop reason: %s\n", st.stop_reason);
	check(sum(c->unexpected) == 0, "a reserve failed unexpectedly", c->id);
	check(!c->final_flush_fail, "final flush never succeeded", c->id);
	check(c->unpublished == 0, "finished pages left unpublished", c->id);
	check(c->bad_page == 0, "malformed page or reader error", c->id);
	check(c->bad_payload == 0, "payload corrupt", c->id);
	check(c->bad_ts == 0, "stamp outside the writer's clock reads", c->id);
	check(c->bad_order == 0, "stamps decreased in buffer order", c->id);
	check(c->bad_seq == 0, "sequence numbers not increasing per level", c->id);
	check(st.written == written, "buffer's written differs from the writers'", c->id);
	check(st.entries == stored, "buffer's entries differ from the writers'", c->id);
	check(st.dropped == dropped, "buffer's dropped differs from the writers'", c->id);
	check(st.read == got, "buffer's read differs from the reader's", c->id);
	check(st.in_buffer == 0, "events left in the buffer after draining", c->id);
	check(c->lost == st.overrun + st.dropped, "lost counts on pages do not add up", c->id);
	check(st.lost == c->lost, "buffer's lost differs from the pages'", c->id);
	check(st.rejected == c->rejected && c->rejected > 0, "bad sizes not counted", c->id);
	/*
	 * Parallel threads make the race; one host CPU only preempts.  Under
	 * ThreadSanitizer (several times slower, there to find data races)
	 * a run without it is only noted.
	 */
	if (c->id == RACE_CPU && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
#ifdef __SANITIZE_THREAD__
		if (!st.read_raced || !st.claim_raced)
			printf("note: reader and writer raced for a slot only %llu/%llu times\n",
			       (unsigned long long)st.read_raced,
			       (unsigned long long)st.claim_raced);
#else
		check(st.read_raced > 0 && st.claim_raced > 0,
		      "reader and writer never raced for a slot", c->id);
#endif
	}
	check(st.refused == 0, "calls refused", c->id);
	for (l = 0; l < RB_NEST_MAX; l++)
		check(c->got[l] <= c->next_seq[l] && c->last_seq[l] <= c->next_seq[l],
		      "a level received more than it wrote", c->id);
	/* Each event not decoded is a sequence gap, covered by a lost count. */
	check(missing == st.overrun + st.dropped, "missing events != overrun + dropped", c->id);
	check(missing == c->lost, "sequence gaps != the pages' lost counts", c->id);
	check(c->bad_live == 0 && c->live_checks > 0, "live statistics inconsistent", c->id);
	if (c->mode == RB_MODE_DISCARD)
		check(st.overrun == 0, "overrun in discard mode", c->id);
	check(c->handled[2] > 0 && c->handled[3] > 0, "no nested writers ran", c->id);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 3.0, elapsed;
	struct sigaction sa;
	struct rb_stats st;
	pthread_t read_thread;
	unsigned k;

	if (seconds <= 0 || seconds > 600) {
		fprintf(stderr, "usage: %s [seconds]\n", argv[0]);
		return 2;
	}
	host_warn_quiet = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);		/* an IRQ may take an NMI */
	sigaction(SIGUSR1, &sa, NULL);
	sigaddset(&sa.sa_mask, SIGUSR1);	/* an NMI may not take an IRQ */
	sigaction(SIGUSR2, &sa, NULL);

	block_signals(1);	/* threads unblock when ready */
	for (k = 0; k < NR_CPUS; k++)
		setup_cpu(&cpus[k], k);
	pthread_create(&read_thread, NULL, reader, NULL);

	/* Phase 1: the reader against one fast-lapping writer. */
	pthread_create(&cpus[RACE_CPU].thread, NULL, writer, &cpus[RACE_CPU]);
	for (elapsed = 0; elapsed < seconds * 0.4; elapsed += 0.01) {
		ring_buffer_stats(cpus[RACE_CPU].cb, &st);
		if (elapsed >= seconds * 0.15 && st.read_raced && st.claim_raced)
			break;
		sleep_us(10000);
	}
	__atomic_store_n(&cpus[RACE_CPU].stop, 1, __ATOMIC_RELAXED);
	pthread_join(cpus[RACE_CPU].thread, NULL);

	/* Phase 2: everyone else, with interrupts. */
	for (k = 0; k < NR_CPUS; k++)
		if (k != RACE_CPU)
			pthread_create(&cpus[k].thread, NULL, writer, &cpus[k]);
	sleep_us((long)((seconds - elapsed) * 1e6));
	for (k = 0; k < NR_CPUS; k++)
		__atomic_store_n(&cpus[k].stop, 1, __ATOMIC_RELAXED);
	for (k = 0; k < NR_CPUS; k++)
		if (k != RACE_CPU)
			pthread_join(cpus[k].thread, NULL);
	__atomic_store_n(&stop_read, 1, __ATOMIC_RELEASE);
	pthread_join(read_thread, NULL);

	for (k = 0; k < NR_CPUS; k++)
		verify(&cpus[k]);
	for (k = 0; k < NR_CPUS; k++) {
		unsigned i;

		for (i = 0; i <= cpus[k].nr_pages; i++)
			free(cpus[k].pages[i]);
		free(cpus[k].cb);
	}
	printf("test_ring_stress: %d passed, %d failed\n", checks_passed, checks_failed);
	return checks_failed ? 1 : 0;
}
