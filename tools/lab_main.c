/*
 * baretrace-decode --lab (tools/lab_summary.h): the command itself. It
 * refuses a damaged or partial dump, then has the lab's figures collected
 * (lab_collect(), tools/lab_summary.c), printed, and drawn if asked
 * (lab_plot(), tools/lab_plot.c). Kept apart from both, so that each of
 * them is called and calls nothing back.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lab_summary.h"

int lab_summary_main(const struct dump_result *r, int rc, const char *capture,
		     const char *plot_dir)
{
	struct lab_data d;
	char why[128], title[160];
	uint64_t lost = 0;
	int status = 0;

	for (uint32_t c = 0; c < r->nr_cpus; c++)
		for (uint32_t i = 0; i < r->cpus[c].nr_pages; i++)
			lost += r->cpus[c].lost[i];
	if (rc != DUMP_READ_OK) {
		fprintf(stderr, "baretrace-decode: --lab: %s: the dump is damaged or cut short "
			"(see above): no summary of a partial trace\n", capture);
		return 1;
	}
	if (!lab_collect(r, &d, why, sizeof(why))) {
		fprintf(stderr, "baretrace-decode: --lab: %s\n", why);
		return 2;
	}
	if (!d.events) {
		fprintf(stderr, "baretrace-decode: --lab: %s: no lab events (lab:hwlat_gap, "
			"lab:hwlat_cpu, lab:c2c, lab:timerlat) in dump %u: record them with "
			"run=hwlat|c2c|timerlat and trace.events=-*,lab:*\n", capture,
			r->index + 1);
		status = 3;
	} else if (lost) {
		fprintf(stderr, "baretrace-decode: --lab: %s: %llu events were lost before the "
			"dump (buffer overwritten): the figures would be of a part; no summary "
			"(a larger trace.pages=, or trace.events=-*,lab:*)\n", capture,
			(unsigned long long)lost);
		status = 1;
	}
	if (!status) {
		printf("lab: dump=%u cpus=%u events=%llu skipped=%llu\n", r->index + 1,
		       r->nr_cpus, (unsigned long long)d.events, (unsigned long long)d.skipped);
		if (lab_print(&d, stdout)) {
			fprintf(stderr, "baretrace-decode: stdout: write error\n");
			status = 2;
		}
	}
	if (!status && plot_dir) {
		const char *base = strrchr(capture, '/');

		snprintf(title, sizeof(title), "%s, dump %u, %u CPUs", base ? base + 1 : capture,
			 r->index + 1, r->nr_cpus);
		if (lab_plot(&d, plot_dir, title, stderr, stderr))
			status = 2;
	}
	lab_data_free(&d);
	return status;
}
