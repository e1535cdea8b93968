/*
 * Benchmarks of the write path, the bare-metal ring_buffer_benchmark.
 *
 *   bench ring  [options]   a producer writes for duration_ms, timing every
 *                           write_interval writes; optionally a reader on
 *                           another CPU takes pages (reader=page) or walks
 *                           every event (reader=event)
 *   bench event [options]   rdtsc around every single write: first, last,
 *                           min, max, avg, std and a histogram
 *   bench all               the matrix of variants, one table, then the
 *                           kernel's own writers (event=u32 .. printk)
 *
 * Options: reserve=xadd|cmpxchg stamp=rdtsc|rdtscp|lfence convert=no|yes
 * payload=<4..1024> reader=none|page|event write_interval=<n>
 * duration_ms=<n> cpu=<producer cpu> events=<n> (bench event);
 * event=raw|u32|u64|str16|printk (bench ring): raw is the loop of
 * bench_writer.c storing a header and one word; the others call the
 * kernel's writers (kernel/tracer/bench_events.c): trace_bench() (one
 * u32), trace_bench_u64(), trace_bench_str() with a 16-byte string, and
 * trace_printk() with two integer arguments, at their record's own size.
 *
 * Every figure is net of the loop's own cost: the same loop runs with
 * recording off first (loop_cycles: the loop plus the disabled check), and
 * the same loop around a null tracepoint (one instruction that refuses)
 * gives what the disabled check itself costs (off_cycles).  So the whole
 * write path, on/off check included, is cycles_per_event + off_cycles.
 * Under -icount shift=0 a cycle is an instruction, so the figures are
 * instruction counts, exact and repeatable.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/tsc.h>
#include "kernel/bench.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "lib/format.h"
#include "kernel/kstring.h"
#include "kernel/shell.h"
#include "kernel/tracing.h"

typedef uint64_t (*bench_loop_t)(struct rb_cpu_buffer *, uint64_t, int, uint32_t);
uint64_t bench_loop_rdtsc(struct rb_cpu_buffer *, uint64_t, int, uint32_t);
uint64_t bench_loop_rdtscp(struct rb_cpu_buffer *, uint64_t, int, uint32_t);
uint64_t bench_loop_lfence(struct rb_cpu_buffer *, uint64_t, int, uint32_t);
uint64_t bench_loop_convert(struct rb_cpu_buffer *, uint64_t, int, uint32_t);
uint64_t bench_loop_null(struct rb_cpu_buffer *, uint64_t, int, uint32_t);
uint64_t bench_ev_u32(struct rb_cpu_buffer *, uint64_t, int, uint32_t);
uint64_t bench_ev_u64(struct rb_cpu_buffer *, uint64_t, int, uint32_t);
uint64_t bench_ev_str16(struct rb_cpu_buffer *, uint64_t, int, uint32_t);
uint64_t bench_ev_printk(struct rb_cpu_buffer *, uint64_t, int, uint32_t);
typedef void (*bench_stamped_t)(struct rb_cpu_buffer *, uint64_t, int, uint32_t,
				struct bench_lat *);
void bench_stamped_rdtsc(struct rb_cpu_buffer *, uint64_t, int, uint32_t, struct bench_lat *);
void bench_stamped_rdtscp(struct rb_cpu_buffer *, uint64_t, int, uint32_t, struct bench_lat *);
void bench_stamped_lfence(struct rb_cpu_buffer *, uint64_t, int, uint32_t, struct bench_lat *);
void bench_stamped_convert(struct rb_cpu_buffer *, uint64_t, int, uint32_t, struct bench_lat *);

static const char *const stamp_names[] = { "rdtsc", "rdtscp", "lfence", NULL };
static const char *const reader_names[] = { "none", "page", "event", NULL };
static const char *const event_names[] = { "raw", "u32", "u64", "str16", "printk", NULL };

/* The kernel's writers by event_names index (raw: none), and their records' bytes. */
static const bench_loop_t event_loops[] = { NULL, bench_ev_u32, bench_ev_u64, bench_ev_str16,
					     bench_ev_printk };
static const uint32_t event_bytes[] = {
	0, sizeof(struct trace_ev_bench), sizeof(struct trace_ev_bench_u64),
	sizeof(struct trace_ev_bench_str) + 16,
	sizeof(struct trace_ev_bprint) + 2 * 8,	/* two integers, 8 bytes each */
};

struct bench_opts {
	int test;		/* 0 ring, 1 event */
	int cmpxchg;		/* reserve with cmpxchg */
	int stamp;		/* index in stamp_names */
	int convert;		/* ns on the write path */
	uint32_t payload;	/* bytes */
	int reader;		/* index in reader_names */
	int event;		/* index in event_names: 0 the raw loop */
	uint64_t interval;	/* writes between time checks */
	uint64_t duration_ms;	/* ring test length */
	uint64_t events;	/* event test count */
	unsigned cpu;		/* producer CPU */
};

static const char *const bench_choices[] = { "all", "ring", "event", "tracepoint", NULL };
static int bench_choice;		/* index in bench_choices; 0 = all */
CMDLINE_OPTION(bench, .name = "bench", .type = OPT_ENUM, .var = &bench_choice,
	       .choices = bench_choices, .help = "what run=bench runs: all, ring, event or tracepoint");

static bench_loop_t loop_for(const struct bench_opts *o)
{
	if (o->event)
		return event_loops[o->event];
	if (o->convert)
		return bench_loop_convert;
	return o->stamp == 1 ? bench_loop_rdtscp : o->stamp == 2 ? bench_loop_lfence
							    : bench_loop_rdtsc;
}

/* Print value/den with three decimals. */
static void dec3(char *buf, size_t cap, uint64_t num, uint64_t den)
{
	uint64_t milli = den ? (uint64_t)((unsigned __int128)num * 1000 / den) : 0;

	ksnprintf(buf, cap, "%llu.%03llu", (unsigned long long)(milli / 1000),
		  (unsigned long long)(milli % 1000));
}

/* ---- the reader on another CPU ---- */

static uint64_t reader_pages, reader_events;

/*
 * Read pages (kind 1) or walk every event (kind 2) of cb on the calling
 * CPU until the producer on cpu has finished its call.
 */
static void read_while_busy(struct rb_cpu_buffer *cb, int kind, unsigned cpu)
{
	struct rb_read rd;

	reader_pages = reader_events = 0;
	while (__atomic_load_n(&cpus[cpu]->call_fn, __ATOMIC_ACQUIRE)) {
		if (ring_buffer_read_page(cb, &rd) != 1) {
			cpu_relax();
			continue;
		}
		reader_pages++;
		if (kind == 2) {
			struct rb_page_iter it;
			struct rb_event ev;
			if (rb_page_iter_init(&it, rd.page, rd.page_size) == RB_ITER_END)
				while (rb_page_iter_next(&it, &ev) == RB_ITER_EVENT)
					reader_events++;
		} else {
			reader_events += rd.entries;
		}
	}
}

/* ---- the producer ---- */

struct ring_result {
	uint64_t events;	/* writes made */
	uint64_t cycles;	/* TSC cycles they took */
	uint64_t failed;	/* writes refused (off, full) */
};

static struct ring_result ring_res;
static const struct bench_opts *ring_opts;
static bool ring_off;		/* run with recording off */
static bool ring_empty;		/* run the loop around a null tracepoint */

static void producer_fn(void *arg)
{
	const struct bench_opts *o = ring_opts;
	struct rb_cpu_buffer *cb = this_cpu_rb();
	bench_loop_t loop = loop_for(o);
	uint64_t lim = tsc.hz / 1000 * o->duration_ms, t0, t;
	uint64_t events = 0, failed = 0;

	(void)arg;
	if (ring_off)
		ring_buffer_record_off(cb);
	t0 = rdtsc();
	do {
		failed += (ring_empty ? bench_loop_null : loop)(cb, o->interval, o->cmpxchg,
								   o->payload);
		events += o->interval;
		t = rdtsc();
	} while (t - t0 < lim);
	if (ring_off && tracing_on())
		ring_buffer_record_on(cb);
	ring_res = (struct ring_result){ events, t - t0, failed };
}

static bool run_on(unsigned cpu, void (*fn)(void *))
{
	if (!smp_call_async(cpu, fn, NULL))
		return false;
	return smp_call_wait(cpu, 120000);
}

static int bench_ring(const struct bench_opts *o)
{
	struct ring_result off, empty, on;
	uint64_t net, loop_per, off_per;
	char cpe[32], npe[32], lpe[32], ope[32];
	struct rb_stats st;
	uint32_t payload = o->event ? event_bytes[o->event] : o->payload;

	if (o->event && (o->cmpxchg || o->stamp || o->convert)) {
		cprintf("error: event=%s is the kernel's writer: xadd, rdtsc, raw cycles only\n",
			event_names[o->event]);
		return 1;
	}
	if (o->reader && o->cpu == this_cpu()->cpu) {
		cprintf("error: reader=%s reads on this CPU (%u): the producer must run on "
			"another (cpu=)\n", reader_names[o->reader], this_cpu()->cpu);
		return 1;
	}
	tracing_reconfigure(trace_pages, trace_mode);
	tracing_start();
	ring_opts = o;
	ring_empty = true, ring_off = false;
	if (!run_on(o->cpu, producer_fn))
		goto busy;
	empty = ring_res;
	ring_empty = false, ring_off = true;
	if (!run_on(o->cpu, producer_fn))
		goto busy;
	off = ring_res;
	ring_off = false;
	if (o->reader) {
		/* This CPU reads while the producer writes on its own. */
		if (!smp_call_async(o->cpu, producer_fn, NULL))
			goto busy;
		read_while_busy(ring_buffer_cpu(&trace_rb, o->cpu), o->reader, o->cpu);
	} else if (!run_on(o->cpu, producer_fn)) {
		goto busy;
	}
	on = ring_res;
	ring_buffer_stats(ring_buffer_cpu(&trace_rb, o->cpu), &st);

	loop_per = off.events ? off.cycles * 1000 / off.events : 0;	/* milli-cycles */
	off_per = empty.events ? empty.cycles * 1000 / empty.events : 0;
	net = on.events ? on.cycles * 1000 / on.events : 0;
	net = net > loop_per ? net - loop_per : 0;
	dec3(cpe, sizeof(cpe), net, 1000);
	dec3(npe, sizeof(npe), net * 1000000, tsc.hz / 1000 * 1000);	/* (milli-cycles/1000) * 1e9 / hz */
	dec3(lpe, sizeof(lpe), loop_per, 1000);
	dec3(ope, sizeof(ope), loop_per > off_per ? loop_per - off_per : 0, 1000);
	/* stored, not ftrace's entries (those still unread): status says why. */
	cprintf("bench ring: cpu=%u events=%llu stored=%llu overrun=%llu dropped=%llu read=%llu "
		"reader_pages=%llu events_per_ms=%llu failed=%llu\n", o->cpu,
		(unsigned long long)on.events, (unsigned long long)st.entries,
		(unsigned long long)st.overrun, (unsigned long long)st.dropped,
		(unsigned long long)(o->reader ? reader_events : 0),
		(unsigned long long)(o->reader ? reader_pages : 0),
		(unsigned long long)(on.cycles ? on.events * (tsc.hz / 1000) / on.cycles : 0),
		(unsigned long long)on.failed);
	cprintf("bench: test=ring reserve=%s stamp=%s convert=%s payload=%u reader=%s events=%llu "
		"cycles_per_event=%s ns_per_event=%s loop_cycles=%s off_cycles=%s "
		"write_interval=%llu event=%s\n", o->cmpxchg ? "cmpxchg" : "xadd",
		stamp_names[o->stamp], o->convert ? "yes" : "no", payload, reader_names[o->reader],
		(unsigned long long)on.events, cpe, npe, lpe, ope,
		(unsigned long long)o->interval, event_names[o->event]);
	return 0;
busy:
	cprintf("error: cpu %u did not run the benchmark\n", o->cpu);
	return 1;
}

/* ---- per-event latency ---- */

static bench_stamped_t stamped_for(const struct bench_opts *o)
{
	if (o->convert)
		return bench_stamped_convert;
	return o->stamp == 1 ? bench_stamped_rdtscp : o->stamp == 2 ? bench_stamped_lfence
								 : bench_stamped_rdtsc;
}

static int bench_event(const struct bench_opts *o)
{
	struct bench_lat lat = { .overhead = UINT64_MAX };
	uint64_t n = o->events;
	char avg[32], sd[32];

	if (o->cpu != this_cpu()->cpu) {
		cprintf("error: bench event runs on the shell's CPU (cpu=%u)\n", this_cpu()->cpu);
		return 1;
	}
	if (o->event) {
		cprintf("error: event= is for bench ring\n");
		return 1;
	}
	tracing_reconfigure(trace_pages, trace_mode);
	tracing_start();
	irq_disable();
	for (int i = 0; i < 64; i++) {	/* the cost of the two rdtsc themselves */
		uint64_t a = rdtsc(), b = rdtsc();
		if (b - a < lat.overhead)
			lat.overhead = b - a;
	}
	/* Each write inlined between its two stamps, sized at compile time. */
	stamped_for(o)(this_cpu_rb(), n, o->cmpxchg, o->payload, &lat);
	irq_enable();
	/* std = sqrt(E[d^2] - E[d]^2), integer square root in milli-cycles. */
	unsigned __int128 mean_m = (unsigned __int128)lat.sum * 1000 / n;
	unsigned __int128 var_m2 = lat.sq * 1000000 / n - mean_m * mean_m;
	uint64_t lo = 0, hi = 1ull << 40;
	while (lo < hi) {
		uint64_t mid = (lo + hi + 1) / 2;
		if ((unsigned __int128)mid * mid <= var_m2)
			lo = mid;
		else
			hi = mid - 1;
	}
	dec3(avg, sizeof(avg), lat.sum, n);
	dec3(sd, sizeof(sd), lo, 1000);
	cprintf("bench event: cycles first=%llu last=%llu min=%llu max=%llu avg=%s std=%s "
		"(rdtsc pair %llu subtracted)\n", (unsigned long long)lat.first,
		(unsigned long long)lat.last, (unsigned long long)lat.min,
		(unsigned long long)lat.max, avg, sd, (unsigned long long)lat.overhead);
	for (int b = 0; b < BENCH_HIST_BUCKETS; b++)
		if (lat.hist[b])
			cprintf("bench event: hist cycles=[%llu,%llu) count=%llu\n",
				(unsigned long long)(b ? 1ull << (b - 1) : 0),
				(unsigned long long)(1ull << b), (unsigned long long)lat.hist[b]);
	char cpe[32], npe[32];
	dec3(cpe, sizeof(cpe), lat.sum, n);
	dec3(npe, sizeof(npe), (uint64_t)((unsigned __int128)lat.sum * 1000000000 / tsc.hz), n);
	cprintf("bench: test=event reserve=%s stamp=%s convert=%s payload=%u reader=none events=%llu "
		"cycles_per_event=%s ns_per_event=%s loop_cycles=%llu\n",
		o->cmpxchg ? "cmpxchg" : "xadd", stamp_names[o->stamp], o->convert ? "yes" : "no",
		o->payload, (unsigned long long)n, cpe, npe, (unsigned long long)lat.overhead);
	return 0;
}

/* ---- options ---- */

static int pick(const char *const *names, const char *v)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], v))
			return i;
	return -1;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > UINT64_MAX / 10 - 9)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

static int parse_opts(int argc, char **argv, struct bench_opts *o)
{
	static const char *const yesno[] = { "no", "yes", NULL };
	static const char *const reserve[] = { "xadd", "cmpxchg", NULL };

	*o = (struct bench_opts){ .payload = 8, .interval = 1000, .duration_ms = 100,
				  .events = 10000, .cpu = cpus_online > 1 ? 1 : 0 };
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		uint64_t v = 0;
		int k = -2;
		if (!eq) {
			cprintf("error: bench option '%.32s' is not key=value\n", argv[i]);
			return -1;
		}
		*eq = '\0';
		const char *key = argv[i], *val = eq + 1;
		if (!strcmp(key, "reserve") && (k = pick(reserve, val)) >= 0)
			o->cmpxchg = k;
		else if (!strcmp(key, "stamp") && (k = pick(stamp_names, val)) >= 0)
			o->stamp = k;
		else if (!strcmp(key, "convert") && (k = pick(yesno, val)) >= 0)
			o->convert = k;
		else if (!strcmp(key, "reader") && (k = pick(reader_names, val)) >= 0)
			o->reader = k;
		else if (!strcmp(key, "event") && (k = pick(event_names, val)) >= 0)
			o->event = k;
		else if (!strcmp(key, "payload") && parse_u64(val, &v) && v >= 4 && v <= RB_MAX_PAYLOAD)
			o->payload = (uint32_t)(v + 3) / 4 * 4, k = 0;
		else if (!strcmp(key, "write_interval") && parse_u64(val, &v) && v >= 1 && v <= 1000000)
			o->interval = v, k = 0;
		else if (!strcmp(key, "duration_ms") && parse_u64(val, &v) && v >= 1 && v <= 60000)
			o->duration_ms = v, k = 0;
		else if (!strcmp(key, "events") && parse_u64(val, &v) && v >= 1 && v <= 10000000)
			o->events = v, k = 0;
		else if (!strcmp(key, "cpu") && parse_u64(val, &v) && v < cpu_count && cpus[v] &&
			 cpus[v]->online)
			o->cpu = (unsigned)v, k = 0;
		if (k < 0) {
			cprintf("error: bench %s=%.32s: not accepted (reserve=xadd|cmpxchg "
				"stamp=rdtsc|rdtscp|lfence convert=no|yes payload=4..%u "
				"reader=none|page|event write_interval=1..1000000 duration_ms=1..60000 "
				"events=1..10000000 cpu=<online cpu> event=raw|u32|u64|str16|printk)\n",
				key, val, RB_MAX_PAYLOAD);
			return -1;
		}
	}
	return 0;
}

/* Between two runs of bench all: a Ctrl-C ends it, said in one line. */
static bool cut_by_ctrl_c(void)
{
	if (!console_cancelled())
		return false;
	cprintf("bench: cut by Ctrl-C\n");
	return true;
}

static int bench_all(void)
{
	static const struct { int cmpxchg, stamp, convert, reader; } m[] = {
		{ 0, 0, 0, 0 }, { 1, 0, 0, 0 }, { 0, 1, 0, 0 }, { 0, 2, 0, 0 },
		{ 0, 0, 1, 0 }, { 0, 0, 0, 1 }, { 0, 0, 0, 2 },
	};
	struct bench_opts o;
	int rc = 0;
	char *noargs[2] = { "bench", "all" };

	cprintf("bench all: ring (100 ms each) and event (10000 writes) per variant, then ring "
		"through the kernel's writers\n");
	for (unsigned i = 0; i < ARRAY_SIZE(m); i++) {
		parse_opts(2, noargs, &o);
		o.cmpxchg = m[i].cmpxchg, o.stamp = m[i].stamp, o.convert = m[i].convert;
		o.reader = cpus_online > 1 ? m[i].reader : 0;
		if (m[i].reader && cpus_online < 2)
			continue;
		if (cut_by_ctrl_c())
			return 1;
		rc |= bench_ring(&o);
		if (!m[i].reader) {
			o.cpu = this_cpu()->cpu;
			rc |= bench_event(&o);
		}
	}
	for (int e = 1; event_names[e]; e++) {	/* the kernel's own writers */
		parse_opts(2, noargs, &o);
		o.event = e;
		if (cut_by_ctrl_c())
			return 1;
		rc |= bench_ring(&o);
	}
	if (cut_by_ctrl_c())
		return 1;
	rc |= bench_tracepoint();
	return rc;
}

static int cmd_bench(int argc, char **argv)
{
	struct bench_opts o;
	bool was_on = tracing_on();
	int rc;

	if (!tsc.hz) {
		cprintf("error: the TSC is not calibrated; benchmarks need a clock\n");
		return 1;
	}
	if (argc < 2 || (strcmp(argv[1], "ring") && strcmp(argv[1], "event") &&
			 strcmp(argv[1], "all") && strcmp(argv[1], "tracepoint"))) {
		cprintf("error: usage: bench ring|event|tracepoint|all [key=value ...]\n");
		return 1;
	}
	if (!strcmp(argv[1], "tracepoint")) {
		if (argc > 2) {
			cprintf("error: bench tracepoint takes no options\n");
			return 1;
		}
		rc = bench_tracepoint();
	} else if (!strcmp(argv[1], "all")) {
		if (argc > 2) {
			cprintf("error: bench all takes no options\n");
			return 1;
		}
		rc = bench_all();
	} else {
		if (parse_opts(argc, argv, &o))
			return 1;
		if (!strcmp(argv[1], "event"))
			o.cpu = this_cpu()->cpu;
		rc = !strcmp(argv[1], "ring") ? bench_ring(&o) : bench_event(&o);
	}
	tracing_reconfigure(trace_pages, trace_mode);	/* leave empty buffers */
	if (was_on)
		tracing_start();
	else
		tracing_stop();
	return rc;
}
SHELL_COMMAND(bench, .name = "bench", .usage = "ring|event|tracepoint|all [key=value...]",
	      .help = "write-path benchmarks (see docs/benchmarks.md)", .fn = cmd_bench);

bool bench_job(void)
{
	char line[32];

	ksnprintf(line, sizeof(line), "bench %s", bench_choices[bench_choice]);
	return shell_exec(line) == 0;
}
