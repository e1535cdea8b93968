/*
 * mkcapture: write a serial-console capture holding a binary trace dump of
 * a simulated machine (tests/host/dump_sim.c: real ring buffers, several
 * CPUs with different clocks, overwrite and discard losses), plus the text
 * the kernel would print for the same buffers.  Input for the decoder's
 * tests and the fuzzer's seed corpus.
 *
 *   mkcapture CAPTURE TEXT [--seed N] [--cpus N] [--events N] [--page-size N]
 *             [--pages N] [--plain] [--skew NS]
 *   mkcapture --seeds DIR      a few small captures for the fuzzer
 *
 * --plain leaves out the unknown and malformed events; --skew adds NS
 * (may be negative) to CPU 1's clock offset, e.g. to get negative times,
 * and as many cycles at its frequency to its measured skew, so that the
 * offset stays explained and the clock valid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_sim.h"

static int write_file(const char *path, const struct membuf *m)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(m->p, 1, m->len, f) != m->len || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

static int seeds(const char *dir)
{
	static const struct sim_cfg cfgs[] = {
		{ .seed = 11, .nr_cpus = 1, .events = 60, .page_size = 2048, .nr_pages = 2 },
		{ .seed = 12, .nr_cpus = 2, .events = 300, .page_size = 2048, .nr_pages = 2,
		  .odd_events = true },
		{ .seed = 13, .nr_cpus = 3, .events = 500, .page_size = 2048, .nr_pages = 3,
		  .drain_every = 20, .odd_events = true },
	};
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
			snprintf(path, sizeof(path), "%s/seed-%u-%u", dir, i, mode);
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
	long long skew = 0;
	int i;

	if (argc == 3 && !strcmp(argv[1], "--seeds"))
		return seeds(argv[2]);
	if (argc < 3) {
		fprintf(stderr, "usage: mkcapture CAPTURE TEXT [--seed N] [--cpus N] "
				"[--events N] [--page-size N] [--pages N] [--plain] [--skew NS]\n"
				"       mkcapture --seeds DIR\n");
		return 2;
	}
	for (i = 3; i < argc; i++) {
		unsigned long v = i + 1 < argc ? strtoul(argv[i + 1], NULL, 0) : 0;

		if (!strcmp(argv[i], "--plain")) {
			cfg.odd_events = false;
			continue;
		}
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
