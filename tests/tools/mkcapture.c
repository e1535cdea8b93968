/*
 * mkcapture: write a serial-console capture holding a binary trace dump of
 * a simulated machine (tests/host/dump_sim.c: real ring buffers, several
 * CPUs with different clocks, overwrite and discard losses), plus the text
 * the kernel would print for the same buffers.  Input for the decoder's
 * tests and the fuzzer's seed corpus.
 *
 *   mkcapture CAPTURE TEXT [--seed N] [--cpus N] [--events N] [--page-size N]
 *             [--pages N] [--plain] [--skew NS] [--clock CPU:EDIT[,EDIT...]]...
 *   mkcapture --seeds DIR      a few small captures for the fuzzer
 *
 * --no-events-frames sends no EVENTS frame, as kernels before the event
 * descriptions did.  Built as mkcapture-extra (-DTRACE_EVENT_LIST_EXTRA,
 * tests/host/events_extra.h), --extra also records events of every field
 * kind that the decoder is not built with.
 *
 * --plain leaves out the unknown and malformed events; --no-pack writes
 * plain frames instead of PACK frames; --skew adds NS
 * (may be negative) to CPU 1's clock offset, e.g. to get negative times,
 * and as many cycles at its frequency to its measured skew, so that the
 * offset stays explained and the clock valid.
 *
 * --clock rewrites fields of one CPU's CLOCK frame after the run, to give
 * the decoder frames the kernel would never send.  EDIT is one of
 *   zero              every conversion field 0 (flags kept)
 *   frac_overflow     ns_frac = 2^shift, one past its range
 *   FIELD=VALUE       FIELD: shift, ns_frac, mult, hz, offset (offset_ns),
 *                     skew (skew_cycles), uncert (skew_uncert_cycles),
 *                     flags; VALUE in C syntax, may be negative
 * The TEXT written is what the kernel's formatter makes of the edited
 * frames as they are (no stand-in clocks: that is the decoder's part).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_sim.h"

#ifdef TRACE_EVENT_LIST_EXTRA
/*
 * A kernel's symbol table, made up: the extra events' code addresses fall
 * in 0x200000..0x200fff, so they print as these names plus offsets.
 */
static const uint64_t extra_addrs[] = { 0x200000, 0x200100, 0x200800 };
static const char *const extra_names[] = { "start", "main_loop", "idle.part.0" };
static const struct trace_symtab extra_syms = { extra_addrs, extra_names, 3, 0x200f00 };
static const struct trace_symbols extra_lookup = { trace_symtab_lookup, &extra_syms, NULL };
#endif

/* Apply one --clock argument, "CPU:EDIT[,EDIT...]", to s; -1 if malformed. */
static int edit_clock(struct sim *s, const char *arg)
{
	char buf[256], *cpu_end, *tok, *save = NULL;
	struct dump_clock *c;
	unsigned long cpu;

	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	cpu = strtoul(buf, &cpu_end, 10);
	if (cpu_end == buf || *cpu_end != ':' || cpu >= s->cfg.nr_cpus)
		return -1;
	c = &s->cpu[cpu].clock;
	for (tok = strtok_r(cpu_end + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		unsigned long long u;
		long long v;

		if (!strcmp(tok, "zero")) {
			memset(&c->conv, 0, sizeof(c->conv));
			continue;
		}
		if (!strcmp(tok, "frac_overflow")) {
			if (c->conv.shift > 63)
				return -1;
			c->conv.ns_frac = 1ull << c->conv.shift;
			continue;
		}
		if (!eq || !eq[1])
			return -1;
		*eq = 0;
		/* Both readings: VALUE may be a u64 above INT64_MAX or negative. */
		v = strtoll(eq + 1, &end, 0);
		if (*end)
			return -1;
		u = eq[1] == '-' ? (unsigned long long)v : strtoull(eq + 1, &end, 0);
		if (!strcmp(tok, "shift"))
			c->conv.shift = (uint32_t)u;
		else if (!strcmp(tok, "ns_frac"))
			c->conv.ns_frac = u;
		else if (!strcmp(tok, "mult"))
			c->conv.mult = (uint32_t)u;
		else if (!strcmp(tok, "hz"))
			c->conv.hz = u;
		else if (!strcmp(tok, "offset"))
			c->conv.offset_ns = v;
		else if (!strcmp(tok, "skew"))
			c->skew_cycles = v;
		else if (!strcmp(tok, "uncert"))
			c->skew_uncert_cycles = v;
		else if (!strcmp(tok, "flags"))
			c->flags = (uint32_t)u;
		else
			return -1;
	}
	return 0;
}

static int write_file(const char *path, const struct membuf *m)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(m->p, 1, m->len, f) != m->len || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

/* A made-up symbol table for the seeds: the trace_printk callers' addresses fall in it. */
static const uint64_t seed_addrs[] = { 0x200000, 0x200100, 0x200800 };
static const char *const seed_names[] = { "start", "main_loop", "idle.part.0" };
static const struct trace_symtab seed_syms = { seed_addrs, seed_names, 3, 0x200f00 };

/*
 * The fuzzer's seeds: small captures with every frame type, description
 * frames (EVENTS, SYMS, PRINTK) included, and with the extra events'
 * descriptions in mkcapture-extra's (named seedx-*, so both sets can share
 * a directory).
 */
static int seeds(const char *dir)
{
	static const struct sim_cfg cfgs[] = {
		{ .seed = 11, .nr_cpus = 1, .events = 60, .page_size = 2048, .nr_pages = 2 },
		{ .seed = 12, .nr_cpus = 2, .events = 300, .page_size = 2048, .nr_pages = 2,
		  .odd_events = true },
		{ .seed = 13, .nr_cpus = 3, .events = 500, .page_size = 2048, .nr_pages = 3,
		  .drain_every = 20, .odd_events = true },
		{ .seed = 14, .nr_cpus = 2, .events = 80, .page_size = 2048, .nr_pages = 2,
		  .syms = &seed_syms, .printk = true },
#ifdef TRACE_EVENT_LIST_EXTRA
		{ .seed = 15, .nr_cpus = 1, .events = 60, .page_size = 2048, .nr_pages = 2,
		  .syms = &seed_syms, .printk = true, .extra_events = true },
		{ .seed = 16, .nr_cpus = 2, .events = 200, .page_size = 2048, .nr_pages = 2,
		  .syms = &seed_syms, .extra_events = true, .odd_events = true },
#endif
	};
#ifdef TRACE_EVENT_LIST_EXTRA
	const char *name = "seedx";
#else
	const char *name = "seed";
#endif
	char path[4096];
	unsigned i, mode;

	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		struct sim s;
		struct membuf cap = { 0 };

		sim_run(&s, &cfgs[i]);
		/* The fuzz input's first byte picks its mode (see fuzz_dump.c). */
		for (mode = 0; mode < 2; mode++) {
			uint8_t m = (uint8_t)mode;

			cap.len = 0;
			membuf_write(&cap, &m, 1);
			sim_capture(&s, (uint16_t)(100 + i), &cap);
			snprintf(path, sizeof(path), "%s/%s-%u-%u", dir, name, i, mode);
			if (write_file(path, &cap))
				return 1;
		}
		membuf_free(&cap);
		sim_free(&s);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sim_cfg cfg = {
		.seed = 1, .nr_cpus = 4, .events = 5000, .page_size = 4096, .nr_pages = 4,
		.odd_events = true,
	};
	struct trace_text_opts o = { .cpu = TRACE_TEXT_ALL_CPUS };
	struct membuf cap = { 0 }, text = { 0 };
	struct sim s;
	const char *edits[16];
	unsigned nr_edits = 0, e;
	long long skew = 0;
	int i;

	if (argc == 3 && !strcmp(argv[1], "--seeds"))
		return seeds(argv[2]);
	if (argc < 3) {
		fprintf(stderr, "usage: mkcapture CAPTURE TEXT [--seed N] [--cpus N] "
				"[--events N] [--page-size N] [--pages N] [--plain] [--no-pack]\n"
				"                [--skew NS] [--clock CPU:EDIT[,EDIT...]]...\n"
				"       mkcapture --seeds DIR\n");
		return 2;
	}
	for (i = 3; i < argc; i++) {
		unsigned long v = i + 1 < argc ? strtoul(argv[i + 1], NULL, 0) : 0;

		if (!strcmp(argv[i], "--plain")) {
			cfg.odd_events = false;
			continue;
		}
		if (!strcmp(argv[i], "--no-pack")) {
			cfg.plain = true;	/* plain frames, as before PACK */
			continue;
		}
		if (!strcmp(argv[i], "--no-events-frames")) {
			cfg.no_events = true;	/* as an older kernel's dump */
			continue;
		}
#ifdef TRACE_EVENT_LIST_EXTRA
		if (!strcmp(argv[i], "--extra")) {
			cfg.extra_events = true;
			cfg.syms = &extra_syms;
			o.syms = &extra_lookup;
			continue;
		}
#endif
		if (i + 1 >= argc)
			goto usage;
		if (!strcmp(argv[i], "--seed"))
			cfg.seed = (uint32_t)v;
		else if (!strcmp(argv[i], "--cpus"))
			cfg.nr_cpus = (uint32_t)v;
		else if (!strcmp(argv[i], "--events"))
			cfg.events = (uint32_t)v;
		else if (!strcmp(argv[i], "--page-size"))
			cfg.page_size = (uint32_t)v;
		else if (!strcmp(argv[i], "--pages"))
			cfg.nr_pages = (uint32_t)v;
		else if (!strcmp(argv[i], "--skew"))
			skew = strtoll(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--clock") && nr_edits < 16)
			edits[nr_edits++] = argv[i + 1];
		else
			goto usage;
		i++;
	}
	sim_run(&s, &cfg);
	if (cfg.nr_cpus > 1) {
		/* As the kernel does: offset_ns = -skew_cycles * 1e9 / hz. */
		s.cpu[1].clock.conv.offset_ns += skew;
		s.cpu[1].clock.skew_cycles -= (int64_t)((__int128)skew * (__int128)s.cpu[1].hz /
							 (__int128)CLOCK_NSEC_PER_SEC);
	}
	for (e = 0; e < nr_edits; e++) {
		if (edit_clock(&s, edits[e])) {
			fprintf(stderr, "mkcapture: bad --clock %s\n", edits[e]);
			return 2;
		}
	}
	sim_capture(&s, 0x2a, &cap);
	if (sim_text(&s, &o, &text, NULL) || write_file(argv[1], &cap) ||
	    write_file(argv[2], &text))
		return 1;
	membuf_free(&cap);
	membuf_free(&text);
	sim_free(&s);
	return 0;
usage:
	fprintf(stderr, "mkcapture: bad option %s\n", argv[i]);
	return 2;
}
