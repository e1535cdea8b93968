/*
 * The lab's shared arithmetic (include/trace/lab.h): inject.stall= lists,
 * hwlat's machine-wide merge of gaps, histograms and percentiles.
 *
 * Merging. Each CPU's gap is the interval [start, end] between two of its
 * TSC reads, on its own corrected clock. That clock may be off the boot
 * CPU's by up to the CPU's skew bound u (cycles to ns, measured at
 * bring-up), so the true interval lies within [start - u, end + u]. Two
 * gaps of different CPUs are taken as one stop of the machine when those
 * widened intervals overlap: nothing the measurement knows can tell them
 * apart. Sorted by widened start, one pass keeps the furthest widened end
 * of the current group; a gap starting at or before it joins the group.
 * The group's length is taken on the unwidened ends (last end minus first
 * start): what the CPUs' own clocks saw, not the error bars.
 */
#include "lib/format.h"
#include "trace/lab.h"

static bool parse_dec(const char **p, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > max)
			return false;
	}
	*p = s;
	*out = v;
	return true;
}

bool lab_stall_parse(const char *s, struct lab_stall *out, unsigned max, unsigned *n,
		     char *why, size_t cap)
{
	struct lab_stall tmp[LAB_STALLS_MAX];
	unsigned k = 0;

	if (max > LAB_STALLS_MAX)
		max = LAB_STALLS_MAX;
	while (*s) {
		const char *e = s;
		uint64_t us, ms, cpu = LAB_STALL_ALL;
		size_t len = 0;

		while (e[len] && e[len] != ',')
			len++;
		if (k == max) {
			ksnprintf(why, cap, "more than %u stalls", max);
			return false;
		}
		if (!parse_dec(&e, LAB_STALL_US_MAX, &us) || us == 0 || *e++ != '@' ||
		    !parse_dec(&e, LAB_STALL_MS_MAX, &ms) ||
		    (*e == ':' && (e++, !parse_dec(&e, 255, &cpu))) || (*e && *e != ',')) {
			ksnprintf(why, cap, "'%.*s' is not <us>@<ms> or <us>@<ms>:<cpu> "
				  "(us 1..%u, ms 0..%u, cpu 0..255)", (int)len, s,
				  LAB_STALL_US_MAX, LAB_STALL_MS_MAX);
			return false;
		}
		tmp[k++] = (struct lab_stall){ us, ms, (uint32_t)cpu };
		s = *e ? e + 1 : e;
		if (*e && !*s) {
			ksnprintf(why, cap, "a stall is missing after the last comma");
			return false;
		}
	}
	for (unsigned i = 0; i < k; i++)
		out[i] = tmp[i];
	*n = k;
	return true;
}

bool lab_cpulist_parse(const char *s, uint64_t mask[4], char *why, size_t cap)
{
	uint64_t m[4] = { 0 };
	const char *p = s;

	if (p[0] == 'a' && p[1] == 'l' && p[2] == 'l' && !p[3]) {
		for (int i = 0; i < 4; i++)
			mask[i] = ~0ull;
		return true;
	}
	while (*p) {
		uint64_t lo, hi;

		if (!parse_dec(&p, 255, &lo))
			goto bad;
		hi = lo;
		if (*p == '-' && (p++, !parse_dec(&p, 255, &hi) || hi < lo))
			goto bad;
		if (*p && (*p != ',' || !p[1]))
			goto bad;
		for (uint64_t c = lo; c <= hi; c++)
			m[c / 64] |= 1ull << (c % 64);
		p += *p == ',';
	}
	if (p == s)
		goto bad;
	for (int i = 0; i < 4; i++)
		mask[i] = m[i];
	return true;
bad:
	ksnprintf(why, cap, "'%s' is not a CPU list; accepted: all, or numbers and ranges "
		  "0..255 (e.g. 0,2-4)", s);
	return false;
}

/* Insertion sort by widened start: n is a few hundred at most, and this runs once. */
static void sort_gaps(struct lab_gap *g, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct lab_gap x = g[i];
		size_t j = i;

		while (j > 0 && g[j - 1].start - g[j - 1].uncert > x.start - x.uncert) {
			g[j] = g[j - 1];
			j--;
		}
		g[j] = x;
	}
}

/* Close the group g[first .. end): count it, and whether several CPUs (or all) saw it. */
static void close_group(const struct lab_gap *g, size_t first, size_t end, unsigned ncpus,
			struct lab_merge *m)
{
	int64_t lo = g[first].start, hi = g[first].end;
	uint64_t seen[4] = { 0 };	/* CPU bitmap: 256 CPUs */
	unsigned cpus = 0;

	for (size_t i = first; i < end; i++) {
		uint32_t c = g[i].cpu & 255;

		if (!(seen[c / 64] & (1ull << (c % 64)))) {
			seen[c / 64] |= 1ull << (c % 64);
			cpus++;
		}
		if (g[i].start < lo)
			lo = g[i].start;
		if (g[i].end > hi)
			hi = g[i].end;
	}
	m->groups++;
	if (cpus >= 2)
		m->coincident++;
	if (cpus >= ncpus && ncpus >= 2)
		m->all_cpus++;
	if (hi > lo && (uint64_t)(hi - lo) > m->max_ns)
		m->max_ns = (uint64_t)(hi - lo);
}

void lab_gaps_merge(struct lab_gap *gaps, size_t n, unsigned ncpus, struct lab_merge *out)
{
	size_t first = 0;
	int64_t reach = 0;	/* the current group's furthest widened end */

	*out = (struct lab_merge){ 0 };
	sort_gaps(gaps, n);
	for (size_t i = 0; i < n; i++) {
		int64_t lo = gaps[i].start - gaps[i].uncert, hi = gaps[i].end + gaps[i].uncert;

		if (i > 0 && lo > reach) {
			close_group(gaps, first, i, ncpus, out);
			first = i;
		}
		if (i == first || hi > reach)
			reach = hi;
		gaps[i].group = (uint32_t)out->groups;
	}
	if (n)
		close_group(gaps, first, n, ncpus, out);
}

unsigned lab_log2_bucket(uint64_t v)
{
	unsigned k = v ? 63 - (unsigned)__builtin_clzll(v) : 0;

	return k < LAB_HIST_BUCKETS ? k : LAB_HIST_BUCKETS - 1;
}

/* Shell sort (Ciura's gaps): a few thousand samples, in place, no allocation. */
static void sort_u64(uint64_t *v, size_t n)
{
	static const size_t gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };

	for (size_t gi = 0; gi < sizeof(gaps) / sizeof(gaps[0]); gi++) {
		size_t h = gaps[gi];

		for (size_t i = h; i < n; i++) {
			uint64_t x = v[i];
			size_t j = i;

			while (j >= h && v[j - h] > x) {
				v[j] = v[j - h];
				j -= h;
			}
			v[j] = x;
		}
	}
}

uint64_t lab_percentile(uint64_t *v, size_t n, unsigned pct)
{
	size_t rank;

	if (!n)
		return 0;
	sort_u64(v, n);
	if (pct > 100)
		pct = 100;
	rank = (n * pct + 99) / 100;	/* ceil(n * pct / 100), the 1-based nearest rank */
	return v[rank ? rank - 1 : 0];
}

int64_t lab_percentile_s64(int64_t *v, size_t n, unsigned pct)
{
	uint64_t *u = (uint64_t *)v;
	uint64_t p;

	/* Flipping the sign bit maps signed order onto unsigned order, both ways. */
	for (size_t i = 0; i < n; i++)
		u[i] ^= 1ull << 63;
	p = lab_percentile(u, n, pct);
	for (size_t i = 0; i < n; i++)
		u[i] ^= 1ull << 63;
	return n ? (int64_t)(p ^ (1ull << 63)) : 0;
}

bool lab_c2c_meaningful(int64_t one_way, uint64_t bound)
{
	uint64_t mag = one_way < 0 ? 0 - (uint64_t)one_way : (uint64_t)one_way;

	return bound < mag;
}

char *lab_hist_format(char *buf, size_t cap, const uint64_t *hist, unsigned buckets)
{
	size_t len = 0;

	if (cap)
		buf[0] = '\0';
	for (unsigned k = 0; k < buckets && len < cap; k++)
		if (hist[k])
			len += (size_t)ksnprintf(buf + len, cap - len, " %u:%llu", k,
						 (unsigned long long)hist[k]);
	return buf;
}
