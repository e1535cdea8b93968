/*
 * A damaged capture's summary for the decoder's outputs (tools/damage.h).
 *
 * Transit loss: the reader (trace/dump_read.c, count_lost()) sets a page's
 * lost count to what its PAGE frame reported (overrun + dropped, losses in
 * the ring) or, when frames of that CPU went missing, to the larger count
 * the page headers prove (seq and dropped against the previous page).  The
 * excess over the frame's report is what the capture lost, not the ring.
 */
#include <stdio.h>

#include "damage.h"

uint64_t dump_transit_lost(const struct dump_cpu *dc, uint32_t k)
{
	const struct dump_page_info *in = &dc->info[k];
	uint64_t reported = in->lost_overrun + in->lost_dropped;

	if (in->lost_overrun > UINT64_MAX - in->lost_dropped)
		reported = UINT64_MAX;
	return dc->lost[k] > reported ? dc->lost[k] - reported : 0;
}

bool dump_damage_note(const struct dump_result *r, char *out, size_t len)
{
	uint64_t transit = 0;
	uint32_t c, k, cpus = 0;
	int n = 0;

	out[0] = 0;
	for (c = 0; c < r->nr_cpus; c++) {
		uint64_t t = 0;

		for (k = 0; k < r->cpus[c].nr_pages; k++)
			t += dump_transit_lost(&r->cpus[c], k);
		transit += t;
		cpus += t != 0;
	}
	if (r->complete && !r->problems && !transit)
		return false;
	n = snprintf(out, len, "%u problem%s in the capture (the decoder's stderr: one line "
		     "each, with byte offsets)", r->problems, r->problems == 1 ? "" : "s");
	if (!r->has_begin && n >= 0 && (size_t)n < len)
		n += snprintf(out + n, len - n, "; no BEGIN frame");
	if (!r->has_end && n >= 0 && (size_t)n < len)
		n += snprintf(out + n, len - n, "; no END frame: the capture ends early");
	if (transit && n >= 0 && (size_t)n < len)
		n += snprintf(out + n, len - n, "; %llu events of %u CPU%s lost in transit "
			      "(IN TRANSIT lines)", (unsigned long long)transit, cpus,
			      cpus == 1 ? "" : "s");
	if (n >= 0 && (size_t)n < len)
		snprintf(out + n, len - n, "; the rest decoded as far as valid");
	return true;
}
