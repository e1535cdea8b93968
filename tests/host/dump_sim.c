/*
 * The simulated machine of dump_sim.h.
 *
 * Time: one global clock in ns.  CPU c's counter reads
 * cycle_base_c + now * hz_c / 1e9, and its conversion is clock_conv_init
 * (hz_c, cycle_base_c, 0) plus a small offset_ns standing for its measured
 * skew, so converted times of different CPUs interleave as real ones would
 * and the merge has work to do.  CPU 2 (when there is one) is flagged
 * untrusted.  The ring buffer reads the counter through the host shim's
 * fake clock, set before every write.
 *
 * Loss: CPU 0 and 1 rings overwrite, CPU 2 discards (drops), CPU 3 is
 * drained often and loses nothing.  With cfg->drain_every the reader also
 * takes pages while events are written, as a streaming dump would.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_ARCH_HOST_DEFINE
#include <arch/trace_arch.h>

#include "dump_sim.h"
#include <trace/dump_rb.h>


static void die(const char *why)
{
	fprintf(stderr, "dump_sim: %s\n", why);
	abort();
}

void membuf_write(void *ctx, const void *buf, size_t len)
{
	struct membuf *m = ctx;

	if (m->len + len > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;

		while (cap < m->len + len)
			cap *= 2;
		m->p = realloc(m->p, cap);
		if (!m->p)
			die("out of memory");
		m->cap = cap;
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
}

void membuf_puts(struct membuf *m, const char *s)
{
	membuf_write(m, s, strlen(s));
}

void membuf_free(struct membuf *m)
{
	free(m->p);
	memset(m, 0, sizeof(*m));
}

static uint32_t rnd(struct sim *s)
{
	/* xorshift64*: deterministic for a seed, good enough for tests. */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return (uint32_t)((s->rng * 2685821657736338717ull) >> 32);
}

static uint64_t cycles_at(const struct sim_cpu *c, uint64_t ns)
{
	return c->cycle_base + (uint64_t)((unsigned __int128)ns * c->hz / CLOCK_NSEC_PER_SEC);
}

/* Take every readable page of c, keeping a copy of each. */
static void drain(struct sim *s, struct sim_cpu *c)
{
	struct rb_read rd;
	int rc;

	while ((rc = ring_buffer_read_page(c->cb, &rd)) == 1) {
		void *copy;

		if (c->nr_taken == c->cap_taken) {
			c->cap_taken = c->cap_taken ? 2 * c->cap_taken : 64;
			c->taken = realloc(c->taken, c->cap_taken * sizeof(void *));
			c->lost_overrun = realloc(c->lost_overrun, c->cap_taken * 8);
			c->lost_dropped = realloc(c->lost_dropped, c->cap_taken * 8);
			c->lost = realloc(c->lost, c->cap_taken * 8);
			if (!c->taken || !c->lost_overrun || !c->lost_dropped || !c->lost)
				die("out of memory");
		}
		copy = aligned_alloc(64, s->cfg.page_size);
		if (!copy)
			die("out of memory");
		memcpy(copy, rd.page, rd.page_size);
		c->taken[c->nr_taken] = copy;
		c->lost_overrun[c->nr_taken] = rd.lost_overrun;
		c->lost_dropped[c->nr_taken] = rd.lost_dropped;
		c->lost[c->nr_taken] = rd.lost_overrun + rd.lost_dropped;
		c->nr_taken++;
	}
	if (rc < 0)
		die("ring_buffer_read_page failed");
}

#ifdef TRACE_EVENT_LIST_EXTRA
/*
 * The kernel's generated writers, on the simulated CPU's ring: what a
 * kernel built with the extra events records (mkcapture-extra only).
 */
static struct rb_cpu_buffer *sim_cb;
#define this_cpu_rb()	sim_cb
static inline uint32_t trace_ent_word(uint16_t id, unsigned words)
{
	return trace_ent_pack(id, trace_ent_ctx(host_trace_level), words);
}
static inline uint64_t trace_ent_head(uint16_t id, unsigned words, uint32_t len)
{
	return rb_head_word(len, trace_ent_pack(id, 0, words));
}
static inline uint64_t trace_ent_head_ctx(uint64_t head)
{
	return head | (uint64_t)trace_ent_ctx(host_trace_level) << 32;
}
#define trace_event_enabled(name)	1	/* every event on */
#include "kernel/event_writers.h"

static const char *const sim_paths[] = {
	"/", "/boot/grub", "/a/path/much/longer/than/sixteen", "", "tab\there",
};

/* One of the extra events, values from the run's random sequence. */
static void write_extra(struct sim *s, struct rb_cpu_buffer *cb, uint32_t serial)
{
	uint32_t r = rnd(s);

	sim_cb = cb;
	if (r & 1)
		(void)trace_ints((uint8_t)serial, (int8_t)(r >> 8), (uint16_t)(r >> 4),
				 (int16_t)(r >> 12), r, (int32_t)(r * 2654435761u),
				 (uint64_t)r << 33 | serial, -(int64_t)((uint64_t)r << 31) - 1);
	else
		(void)trace_mixed((r >> 1) & 1, (uint64_t)r << 20, (const void *)(uintptr_t)(0x200000 + r % 4096),
				  (r >> 2) % 9, (r >> 5) & 1 ? "tagged" : "t6789abc",
				  sim_paths[serial % 5], sim_paths[(serial + 2) % 5], (uint8_t)r);
}
#endif

/*
 * trace_printk formats with every kind of argument.  Some hold digits
 * next to a character one bit flip away from '%' ('5' is 0x35, '%' 0x25),
 * so that a damaged format asks for a width of ten digits.
 */
const char *const sim_printk_fmts[SIM_PRINTK_FMTS] = {
	"tick %u of %u\n",
	"cpu %d: %08llx after %3u ms: %s\n",
	"build 59876543210u: %c%%\n",
	"%-*d|%.*s|%#o|%p\n",
};

const char *sim_printk_format(const void *ctx, uint64_t addr)
{
	(void)ctx;
	for (uint32_t i = 0; i < SIM_PRINTK_FMTS; i++)
		if (SIM_PRINTK_FMT_ADDR(i) == addr)
			return sim_printk_fmts[i];
	return NULL;
}

static uint32_t sim_bprint_encode(uint8_t *buf, uint32_t cap, const char *fmt, ...)
{
	va_list ap;
	uint32_t n;

	va_start(ap, fmt);
	n = trace_bprint_encode(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}

/* A trace_printk record of format k, as the kernel's __trace_printk() makes it. */
static uint32_t sim_bprint(struct sim *s, uint32_t k, uint32_t serial, uint32_t ctx,
			   uint8_t *rec)
{
	static const char *const words[] = { "", "idle", "a string longer than most" };
	struct trace_ev_bprint ev;
	uint8_t *args = rec + sizeof(ev);
	const uint32_t cap = TRACE_BPRINT_ARGS_MAX;
	uint32_t r = rnd(s), n = 0;

	switch (k) {
	case 0:
		n = sim_bprint_encode(args, cap, sim_printk_fmts[0], serial, r);
		break;
	case 1:
		n = sim_bprint_encode(args, cap, sim_printk_fmts[1], (int)r, (unsigned long long)r << 29,
				      serial % 1000, words[r % 3]);
		break;
	case 2:
		n = sim_bprint_encode(args, cap, sim_printk_fmts[2], 'a' + (int)(r % 26));
		break;
	default:
		n = sim_bprint_encode(args, cap, sim_printk_fmts[3], (int)(r % 9), -(int)serial,
				      (int)(r % 5), words[2], r, (void *)(uintptr_t)r);
		break;
	}
	ev.hdr = trace_ent_pack(TEV_bprint, trace_ent_ctx(ctx), TRACE_ENT_WORDS(bprint));
	ev.ip = s->cfg.syms ? s->cfg.syms->addrs[0] + r % 4096 : 0xffff800000100000ull + r % 4096;
	ev.fmt = SIM_PRINTK_FMT_ADDR(k);
	ev.args = (uint32_t)sizeof(ev) | n << 16;
	memcpy(rec, &ev, sizeof(ev));
	return (uint32_t)sizeof(ev) + n;
}

/* Write payload (NULL: one extra event) on c at level ctx, at the current time. */
static void sim_write(struct sim *s, struct sim_cpu *c, uint32_t ctx, const void *payload,
		      uint32_t len, uint32_t serial)
{
	host_trace_level = ctx;
	host_fake_now = cycles_at(c, s->now_ns);
	host_fake_step = 0;
	c->attempts++;
	if (payload)
		(void)ring_buffer_write(c->cb, payload, len);
#ifdef TRACE_EVENT_LIST_EXTRA
	else
		write_extra(s, c->cb, serial);
#endif
	(void)serial;
	host_trace_level = 0;
}

/* One event on CPU ci at the current time. */
static void write_event(struct sim *s, uint32_t ci, uint32_t serial)
{
	struct sim_cpu *c = &s->cpu[ci];
	uint32_t payload[(sizeof(struct trace_ev_bprint) + TRACE_BPRINT_ARGS_MAX) / 4 + 1];
	struct trace_ent_hdr h;
	uint32_t kind = rnd(s) % (s->cfg.odd_events ? 10 : 8), len, i;

	h.ctx = (uint8_t)(rnd(s) % 4);
	if (s->cfg.printk && serial % 4 == 1) {
		len = sim_bprint(s, kind % SIM_PRINTK_FMTS, serial, h.ctx, (uint8_t *)payload);
		sim_write(s, c, h.ctx, payload, len, serial);
		return;
	}
#ifdef TRACE_EVENT_LIST_EXTRA
	if (s->cfg.extra_events && kind < 4) {	/* typed events, through the writers */
		sim_write(s, c, h.ctx, NULL, 0, serial);
		return;
	}
#endif
	if (kind < 8) {
		h.id = (uint16_t)(TEV_lapic_tick + kind);
		h.words = (uint8_t)((trace_catalog_get(&trace_builtin_catalog, h.id)->fixed - 4) / 4);
	} else if (kind == 8) {
		h.id = (uint16_t)(TEV_MAX + rnd(s) % 100);	/* unknown id */
		h.words = (uint8_t)(rnd(s) % 3);
	} else {
		h.id = TEV_producer;				/* wrong field count */
		h.words = 1;
	}
	len = 4 + 4u * h.words;
	memcpy(&payload[0], &h, sizeof(h));
	for (i = 0; i < h.words; i++)
		payload[1 + i] = i == 0 ? serial : rnd(s) % 100000;
	sim_write(s, c, h.ctx, payload, len, serial);
}

static void setup_cpu(struct sim *s, uint32_t ci)
{
	static const uint64_t hz[SIM_MAX_CPUS] = {
		1000000000ull, 2445426081ull, 3000000000ull, 14318180ull,
	};
	static const int64_t offset[SIM_MAX_CPUS] = { 0, -49, 1234, 77 };
	struct sim_cpu *c = &s->cpu[ci];
	struct rb_cpu_config cfg = {
		.cpu = ci,
		.nr_pages = s->cfg.nr_pages,
		.page_size = s->cfg.page_size,
		.mode = ci == 2 ? RB_MODE_DISCARD : RB_MODE_OVERWRITE,
	};
	size_t size = ring_buffer_cpu_size(cfg.nr_pages);
	uint32_t i;

	c->hz = hz[ci];
	c->cycle_base = 1000000ull * (ci + 1) + 12345;
	c->trusted = ci != 2;
	c->cb = aligned_alloc(CACHELINE_SIZE, ALIGN_UP(size, CACHELINE_SIZE));
	c->ring = calloc(cfg.nr_pages + 1, sizeof(void *));
	if (!c->cb || !c->ring)
		die("out of memory");
	for (i = 0; i <= cfg.nr_pages; i++) {
		c->ring[i] = aligned_alloc(cfg.page_size, cfg.page_size);
		if (!c->ring[i])
			die("out of memory");
		memset(c->ring[i], 0xa5, cfg.page_size);
	}
	if (ring_buffer_cpu_init(c->cb, size, &cfg, c->ring))
		die("ring_buffer_cpu_init failed");

	memset(&c->clock, 0, sizeof(c->clock));
	c->clock.cpu = ci;
	c->clock.flags = c->trusted ? DUMP_CLOCK_TRUSTED : 0;
	if (clock_conv_init(&c->clock.conv, c->hz, c->cycle_base, 0))
		die("clock_conv_init failed");
	c->clock.conv.offset_ns = offset[ci];
	c->clock.skew_cycles = offset[ci] * 2;
	c->clock.skew_uncert_cycles = c->trusted ? 300 : 90000;
}

void sim_run(struct sim *s, const struct sim_cfg *cfg)
{
	struct rb_stats st;
	uint32_t i, ci;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->rng = 0x9e3779b97f4a7c15ull ^ cfg->seed;
	s->now_ns = 5000;
	if (cfg->nr_cpus == 0 || cfg->nr_cpus > SIM_MAX_CPUS)
		die("bad CPU count");
	host_fake_clock_on = 1;
	host_warn_quiet = 1;
	for (ci = 0; ci < cfg->nr_cpus; ci++)
		setup_cpu(s, ci);

	for (i = 0; i < cfg->events; i++) {
		/* Mostly small steps, some long quiet spells (extends, abs stamps). */
		uint32_t r = rnd(s) % 1000;

		s->now_ns += r < 990 ? rnd(s) % 3000 : r < 998 ? rnd(s) % 200000000u
							       : 900000000u + rnd(s) % 1000;
		ci = rnd(s) % cfg->nr_cpus;
		write_event(s, ci, i);
		if (ci == 3 || (cfg->drain_every && i % cfg->drain_every == 0))
			drain(s, &s->cpu[ci]);
	}
	/* End of recording: hand over the tail pages, take everything. */
	for (ci = 0; ci < cfg->nr_cpus; ci++) {
		struct sim_cpu *c = &s->cpu[ci];

		host_fake_now = cycles_at(c, s->now_ns);
		ring_buffer_record_off(c->cb);
		if (ring_buffer_flush(c->cb) == -RB_EFULL) {
			drain(s, c);	/* discard mode full: make room, then flush */
			if (ring_buffer_flush(c->cb))
				die("flush failed");
		}
		drain(s, c);
		if (ci == 1)
			ring_buffer_stop(c->cb, "simulated integrity stop");
		ring_buffer_stats(c->cb, &st);
		dump_stats_from_rb(&c->stats, ci, &st);
	}
}

void sim_free(struct sim *s)
{
	uint32_t ci, i;

	for (ci = 0; ci < s->cfg.nr_cpus; ci++) {
		struct sim_cpu *c = &s->cpu[ci];

		for (i = 0; i < c->nr_taken; i++)
			free(c->taken[i]);
		for (i = 0; i <= s->cfg.nr_pages; i++)
			free(c->ring[i]);
		free(c->ring);
		free(c->taken);
		free(c->lost_overrun);
		free(c->lost_dropped);
		free(c->lost);
		free(c->cb);
	}
	memset(s, 0, sizeof(*s));
}

int sim_text(const struct sim *s, const struct trace_text_opts *o, struct membuf *out,
	     struct trace_text_summary *sum)
{
	struct trace_text_cpu tc[SIM_MAX_CPUS];
	struct trace_sink sink = { membuf_write, out };
	struct trace_text_opts opts = *o;
	uint64_t scratch[1024];
	uint32_t ci;

	opts.calib = s->cfg.calib;	/* as the kernel passes its own */
	for (ci = 0; ci < s->cfg.nr_cpus; ci++) {
		const struct sim_cpu *c = &s->cpu[ci];

		tc[ci] = (struct trace_text_cpu){
			.cpu = ci,
			.clock_state = trace_clock_state(&c->clock),
			.clock = &c->clock.conv,
			.trust = c->has_trust ? &c->trust : NULL,
			.clock_frame = &c->clock,
			.stats = &c->stats,
			.page_size = s->cfg.page_size,
			.nr_pages = c->nr_taken,
			.pages = (const void *const *)c->taken,
			.lost = c->lost,
		};
	}
	return trace_text_write(tc, s->cfg.nr_cpus, &opts, scratch, sizeof(scratch), &sink, sum);
}

static const char *sim_sym_at(const void *ctx, uint32_t i, uint64_t *addr)
{
	const struct trace_symtab *t = ctx;

	*addr = t->addrs[i];
	return t->names[i];
}

static const char *sim_fmt_at(const void *ctx, uint32_t i, uint64_t *addr)
{
	(void)ctx;
	*addr = SIM_PRINTK_FMT_ADDR(i);
	return sim_printk_fmts[i];
}

void sim_dump(const struct sim *s, uint16_t dump_id, struct membuf *out)
{
	struct trace_sink sink = { membuf_write, out };
	struct dump_begin b = {
		.nr_cpus = s->cfg.nr_cpus,
		.page_size = s->cfg.page_size,
		.tsc_hz = s->cpu[0].hz,
		.tsc_err_ppb = 10299,
		.start_cycles = cycles_at(&s->cpu[0], s->now_ns),
	};
	struct dump_writer w;
	uint32_t ci, i;

	static struct dump_pack pack;

	dump_write_begin(&w, &sink, dump_id, &b);
	w.pack = s->cfg.plain ? NULL : &pack;
	if (!s->cfg.no_events)
		dump_write_events(&w, s->cfg.catalog ? s->cfg.catalog : &trace_builtin_catalog, NULL);
	if (s->cfg.syms) {
		struct dump_syms_src src = { s->cfg.syms->count, s->cfg.syms->end, sim_sym_at,
					     s->cfg.syms };
		dump_write_symbols(&w, &src);
	}
	if (s->cfg.printk) {
		struct dump_syms_src src = { SIM_PRINTK_FMTS, 0, sim_fmt_at, NULL };

		dump_write_printk_formats(&w, &src);
	}
	if (s->cfg.calib)
		dump_write_calib(&w, s->cfg.calib);
	for (ci = 0; ci < s->cfg.nr_cpus; ci++)
		dump_write_clock(&w, &s->cpu[ci].clock);
	for (ci = 0; ci < s->cfg.nr_cpus; ci++)
		if (s->cpu[ci].has_trust)
			dump_write_trust(&w, &s->cpu[ci].trust);
	for (ci = 0; ci < s->cfg.nr_cpus; ci++) {
		const struct sim_cpu *c = &s->cpu[ci];

		for (i = 0; i < c->nr_taken; i++)
			dump_write_page(&w, ci, c->taken[i], s->cfg.page_size,
					c->lost_overrun[i], c->lost_dropped[i]);
	}
	for (ci = 0; ci < s->cfg.nr_cpus; ci++)
		dump_write_stats(&w, &s->cpu[ci].stats);
	dump_write_end(&w);
}

void sim_capture(const struct sim *s, uint16_t dump_id, struct membuf *out)
{
	membuf_puts(out, "[    0.140293] run: job=shell\r\nshell: type 'help' for commands\r\n"
			 "baretrace> dump\r\n");
	sim_dump(s, dump_id, out);
	membuf_puts(out, "\r\ndump: done\r\nbaretrace> ");
}

static void report_to_membuf(void *ctx, const char *line)
{
	membuf_puts(ctx, line);
	membuf_puts(ctx, "\n");
}

int sim_decode(const struct membuf *cap, int32_t which, struct dump_result *r, void **arena,
	       struct membuf *text, struct membuf *rep, const struct trace_text_opts *o,
	       struct trace_text_summary *sum)
{
	struct dump_read_opts ro = { .which = which, .report = report_to_membuf,
				     .report_ctx = rep };
	struct trace_text_opts all = { .cpu = TRACE_TEXT_ALL_CPUS }, opts;
	struct trace_sink sink = { membuf_write, text };
	struct trace_text_cpu *tc;
	void *scratch;
	int rc;

	rc = dump_read(cap->p, cap->len, &ro, NULL, 0, r);
	if (rc != DUMP_READ_ARENA)
		return rc;
	*arena = aligned_alloc(8, ALIGN_UP(r->arena_needed + 8, 8));
	if (!*arena)
		die("out of memory");
	rc = dump_read(cap->p, cap->len, &ro, *arena, r->arena_needed, r);
	if (rc != DUMP_READ_OK && rc != DUMP_READ_DAMAGED)
		die("dump_read failed with the arena it asked for");
	if (!text)
		return rc;
	tc = calloc(r->nr_cpus + 1, sizeof(*tc));
	scratch = aligned_alloc(8, ALIGN_UP(trace_text_scratch_size(r->nr_cpus) + 8, 8));
	if (!tc || !scratch)
		die("out of memory");
	dump_text_cpus(r, tc);
	opts = o ? *o : all;
	opts.calib = dump_calib(r);	/* as the decoder does */
	if (trace_text_write(tc, r->nr_cpus, &opts, scratch,
			     trace_text_scratch_size(r->nr_cpus), &sink, sum))
		die("trace_text_write refused a decoded dump");
	free(tc);
	free(scratch);
	return rc;
}
