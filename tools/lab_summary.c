/*
 * baretrace-decode --lab (tools/lab_summary.h): the lab's summaries from a
 * capture's events.
 *
 * Events are found by name (lab:hwlat_gap, lab:hwlat_cpu, lab:c2c,
 * lab:timerlat) and their fields by name, through the capture's own
 * descriptions, so a capture of another kernel build reads the same. Each
 * event is taken on the CPU whose buffer holds it (the CPU that measured:
 * hwlat and timerlat record on their own CPU; c2c names its pair).
 *
 * The figures are computed here from the events, with arithmetic of this
 * file's own where the kernel's could hide a shared mistake (percentiles:
 * qsort and the nearest rank), and the kernel's trace/lab.c where the
 * method is defined once (the merge, tested against a model in
 * tests/host/test_lab.c; the histogram's buckets). What the comparison in
 * tests/qemu/test_lab.py then checks is that the events carry the whole
 * measurement: a gap not recorded, a skew bound sent wrong, a percentile
 * taken on other samples, all show as a difference.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <trace/event_fmt.h>
#include <trace/ring_format.h>

#include "lab_summary.h"

#define NS_PER_S	1000000000ull

bool lab_data_init(struct lab_data *d, uint32_t nr_cpus)
{
	*d = (struct lab_data){ .nr_cpus = nr_cpus };
	if (nr_cpus == 0 || nr_cpus > 256)
		return false;
	d->hw = calloc(nr_cpus, sizeof(*d->hw));
	d->uncert_ns = calloc(nr_cpus, sizeof(*d->uncert_ns));
	d->bound_ns = calloc(nr_cpus, sizeof(*d->bound_ns));
	d->tl = calloc(nr_cpus, sizeof(*d->tl));
	if (!d->hw || !d->uncert_ns || !d->bound_ns || !d->tl) {
		lab_data_free(d);
		return false;
	}
	for (uint32_t c = 0; c < nr_cpus; c++)
		d->bound_ns[c] = -1;
	return true;
}

void lab_data_free(struct lab_data *d)
{
	if (d->tl)
		for (uint32_t c = 0; c < d->nr_cpus; c++)
			free(d->tl[c].lat);
	free(d->hw);
	free(d->uncert_ns);
	free(d->bound_ns);
	free(d->tl);
	free(d->gaps);
	free(d->pairs);
	*d = (struct lab_data){ 0 };
}

int64_t lab_merge_uncert_ns(int64_t uncert_cycles, uint64_t tsc_hz)
{
	uint64_t u = uncert_cycles < 0 ? 0 - (uint64_t)uncert_cycles : (uint64_t)uncert_cycles;

	if (!tsc_hz)
		return -1;
	/* The kernel's hwlat: floor(uncert * 1e9 / hz), +1 for that rounding. */
	return (int64_t)((unsigned __int128)u * NS_PER_S / tsc_hz) + 1;
}

int64_t lab_c2c_cpu_bound_ns(uint32_t cpu, int64_t skew_cycles, int64_t uncert_cycles,
			     bool trusted, uint64_t tsc_hz)
{
	uint64_t c = uncert_cycles < 0 ? 0 - (uint64_t)uncert_cycles : (uint64_t)uncert_cycles;

	if (!tsc_hz)
		return -1;
	if (!trusted && cpu != 0)	/* no skew applied: the whole skew is error too */
		c += skew_cycles < 0 ? 0 - (uint64_t)skew_cycles : (uint64_t)skew_cycles;
	return (int64_t)(((unsigned __int128)c * NS_PER_S + tsc_hz - 1) / tsc_hz);
}

/* Room for one more of size sz in *v (n used, *cap allocated). */
static bool grow(void **v, size_t n, size_t *cap, size_t sz)
{
	void *p;

	if (n < *cap)
		return true;
	p = realloc(*v, (*cap ? *cap * 2 : 64) * sz);
	if (!p)
		return false;
	*v = p;
	*cap = *cap ? *cap * 2 : 64;
	return true;
}

bool lab_add_gap(struct lab_data *d, uint32_t cpu, int64_t start_ns, uint64_t len_ns,
		 int64_t smi_before, int64_t smi_after)
{
	struct lab_hw_cpu *h;

	if (cpu >= d->nr_cpus || !grow((void **)&d->gaps, d->ngaps, &d->gaps_cap,
				       sizeof(*d->gaps)))
		return false;
	h = &d->hw[cpu];
	h->gaps++;
	if (len_ns > h->max_ns)
		h->max_ns = len_ns;
	h->hist[lab_log2_bucket(len_ns)]++;
	if (smi_before < 0 || smi_after < 0)
		h->smi_gaps_unknown = true;	/* a count not read: the sum is not known */
	else
		h->smi_in_gaps += smi_after - smi_before;
	d->gaps[d->ngaps++] = (struct lab_gap){ start_ns, start_ns + (int64_t)len_ns,
						d->uncert_ns[cpu], cpu, 0 };
	return true;
}

bool lab_add_hwlat_cpu(struct lab_data *d, uint32_t cpu, uint64_t threshold_ns,
		       uint64_t resolution_ns, int64_t smi_start, int64_t smi_end,
		       uint32_t injected, uint32_t counted)
{
	struct lab_hw_cpu *h;

	if (cpu >= d->nr_cpus)
		return false;
	h = &d->hw[cpu];
	h->ran = true;
	h->threshold_ns = threshold_ns;
	h->resolution_ns = resolution_ns;
	h->smi_start = smi_start;
	h->smi_end = smi_end;
	h->injected = injected;
	h->counted = counted;
	return true;
}

bool lab_add_c2c(struct lab_data *d, const struct lab_c2c *p)
{
	if (p->from >= d->nr_cpus || p->to >= d->nr_cpus ||
	    !grow((void **)&d->pairs, d->npairs, &d->pairs_cap, sizeof(*d->pairs)))
		return false;
	d->pairs[d->npairs++] = *p;
	return true;
}

bool lab_add_timerlat(struct lab_data *d, uint32_t cpu, uint64_t latency_ns)
{
	struct lab_tl_cpu *t;

	if (cpu >= d->nr_cpus)
		return false;
	t = &d->tl[cpu];
	if (!grow((void **)&t->lat, t->n, &t->cap, sizeof(*t->lat)))
		return false;
	t->lat[t->n++] = latency_ns;
	return true;
}

/* The value of v's field name into *out; false if it has none. */
static bool field(const struct trace_event_view *v, const char *name, uint64_t *out)
{
	for (uint32_t i = 0; i < v->def->nfields; i++) {
		const struct trace_field_def *f = &v->def->fields[i];

		if (!strcmp(f->name, name) && f->kind == TRACE_FIELD_INT) {
			*out = trace_field_value(v, f);
			return true;
		}
	}
	return false;
}

/* One lab event of CPU cpu: true if taken or not a lab event; false if out of memory. */
static bool take(struct lab_data *d, uint32_t cpu, const struct trace_event_view *v)
{
	uint64_t a = 0, b = 0, c = 0, e = 0, f = 0, g = 0;
	const char *n = v->def->name;
	bool ok;

	if (strcmp(v->def->system, "lab"))
		return true;
	if (!strcmp(n, "hwlat_gap")) {
		ok = field(v, "start_ns", &a) && field(v, "len_ns", &b) &&
		     field(v, "smi_before", &c) && field(v, "smi_after", &e);
		if (ok && !lab_add_gap(d, cpu, (int64_t)a, b, (int64_t)c, (int64_t)e))
			return false;
	} else if (!strcmp(n, "hwlat_cpu")) {
		ok = field(v, "threshold_ns", &a) && field(v, "resolution_ns", &b) &&
		     field(v, "smi_start", &c) && field(v, "smi_end", &e) &&
		     field(v, "injected", &f) && field(v, "gaps", &g);
		if (ok)
			lab_add_hwlat_cpu(d, cpu, a, b, (int64_t)c, (int64_t)e, (uint32_t)f,
					  (uint32_t)g);
	} else if (!strcmp(n, "c2c")) {
		struct lab_c2c p;

		ok = field(v, "from", &a) && field(v, "to", &b) && field(v, "one_way_ns", &c) &&
		     field(v, "bound_ns", &e) && field(v, "rtt_half_ns", &f) &&
		     field(v, "samples", &g) && a < d->nr_cpus && b < d->nr_cpus;
		p = (struct lab_c2c){ (uint32_t)a, (uint32_t)b, (int64_t)c, e, f, (uint32_t)g };
		if (ok && !lab_add_c2c(d, &p))
			return false;
	} else if (!strcmp(n, "timerlat")) {
		ok = field(v, "latency_ns", &a);
		if (ok && !lab_add_timerlat(d, cpu, a))
			return false;
	} else {
		return true;	/* a lab event of a later kernel: not ours to read */
	}
	if (ok)
		d->events++;
	else
		d->skipped++;
	return true;
}

bool lab_collect(const struct dump_result *r, struct lab_data *d, char *why, size_t cap)
{
	const struct trace_catalog *cat = dump_catalog(r);
	uint64_t hz = r->begin.tsc_hz;

	if (!lab_data_init(d, r->nr_cpus)) {
		snprintf(why, cap, "out of memory, or %u CPUs (1..256)", r->nr_cpus);
		return false;
	}
	for (uint32_t c = 0; c < r->nr_cpus; c++) {
		const struct dump_clock *k = &r->cpus[c].clock;

		if (!r->cpus[c].has_clock)
			continue;	/* unknown: no widening, no c2c bound */
		d->uncert_ns[c] = lab_merge_uncert_ns(k->skew_uncert_cycles, hz);
		if (d->uncert_ns[c] < 0)
			d->uncert_ns[c] = 0;
		d->bound_ns[c] = lab_c2c_cpu_bound_ns(c, k->skew_cycles, k->skew_uncert_cycles,
						      k->flags & DUMP_CLOCK_TRUSTED, hz);
	}
	for (uint32_t c = 0; c < r->nr_cpus; c++) {
		const struct dump_cpu *dc = &r->cpus[c];

		for (uint32_t i = 0; i < dc->nr_pages; i++) {
			struct rb_page_iter it;
			struct rb_event ev;

			if (rb_page_iter_init(&it, dc->pages[i], r->page_size) != RB_ITER_END)
				continue;
			while (rb_page_iter_next(&it, &ev) == RB_ITER_EVENT) {
				struct trace_event_view v;

				if (!trace_event_parse(cat, ev.data, ev.len, &v))
					continue;
				if (!take(d, c, &v)) {
					snprintf(why, cap, "out of memory");
					lab_data_free(d);
					return false;
				}
			}
		}
	}
	return true;
}

void lab_hwlat_machine(struct lab_data *d, struct lab_merge *m, unsigned *ncpus, int64_t *smi)
{
	*ncpus = 0;
	*smi = 0;
	for (uint32_t c = 0; c < d->nr_cpus; c++) {
		const struct lab_hw_cpu *h = &d->hw[c];

		if (!h->ran)
			continue;
		(*ncpus)++;
		if (h->smi_start < 0 || h->smi_end < 0)
			*smi = -1;
		else if (*smi >= 0 && h->smi_end - h->smi_start > *smi)
			*smi = h->smi_end - h->smi_start;	/* the most any CPU took */
	}
	lab_gaps_merge(d->gaps, d->ngaps, *ncpus, m);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest rank: the smallest sample with at least pct% at or below it (v sorted). */
static uint64_t nearest_rank(const uint64_t *v, size_t n, unsigned pct)
{
	size_t k = (n * pct + 99) / 100;

	return n ? v[k ? k - 1 : 0] : 0;
}

void lab_timerlat_figures(const struct lab_tl_cpu *t, struct lab_tl_figures *f)
{
	uint64_t *s = t->n ? malloc(t->n * sizeof(*s)) : NULL;

	*f = (struct lab_tl_figures){ .samples = t->n };
	for (size_t i = 0; i < t->n; i++) {
		if (t->lat[i] > f->max_ns)
			f->max_ns = t->lat[i];
		f->hist[lab_log2_bucket(t->lat[i])]++;
	}
	if (!s)
		return;		/* no samples (or no memory: percentiles 0) */
	memcpy(s, t->lat, t->n * sizeof(*s));
	qsort(s, t->n, sizeof(*s), cmp_u64);
	f->p99_ns = nearest_rank(s, t->n, 99);
	f->p50_ns = nearest_rank(s, t->n, 50);
	free(s);
}

/* " k:count" for each non-empty bucket. */
static void put_hist(FILE *out, const uint64_t *hist)
{
	for (unsigned k = 0; k < LAB_HIST_BUCKETS; k++)
		if (hist[k])
			fprintf(out, " %u:%llu", k, (unsigned long long)hist[k]);
	fputc('\n', out);
}

static void put_count(FILE *out, const char *key, int64_t v)
{
	if (v < 0)
		fprintf(out, " %s=unknown", key);
	else
		fprintf(out, " %s=%lld", key, (long long)v);
}

static void print_hwlat(struct lab_data *d, FILE *out)
{
	struct lab_merge m;
	unsigned ncpus;
	int64_t smi;

	for (uint32_t c = 0; c < d->nr_cpus; c++) {
		const struct lab_hw_cpu *h = &d->hw[c];

		if (!h->ran && !h->gaps)
			continue;
		if (!h->ran)
			fprintf(out, "hwlat: cpu=%u has gaps but no lab:hwlat_cpu event: its run "
				"did not end, or the event was not recorded\n", c);
		fprintf(out, "hwlat: cpu=%u gaps=%llu max_ns=%llu threshold_ns=%llu "
			"resolution_ns=%llu injected=%u", c, (unsigned long long)h->gaps,
			(unsigned long long)h->max_ns, (unsigned long long)h->threshold_ns,
			(unsigned long long)h->resolution_ns, h->injected);
		put_count(out, "smi", h->smi_start < 0 || h->smi_end < 0 ? -1 :
				       h->smi_end - h->smi_start);
		if (h->smi_gaps_unknown)
			fputs(" smi_in_gaps=unknown\n", out);
		else
			fprintf(out, " smi_in_gaps=%lld\n", (long long)h->smi_in_gaps);
		if (h->ran && h->counted != h->gaps)
			fprintf(out, "hwlat: cpu=%u counted %u gaps, the capture holds %llu of "
				"them: the figures are of those\n", c, h->counted,
				(unsigned long long)h->gaps);
		fprintf(out, "hwlat: cpu=%u hist", c);
		put_hist(out, h->hist);
	}
	lab_hwlat_machine(d, &m, &ncpus, &smi);
	if (!ncpus)
		return;
	fprintf(out, "hwlat: machine gaps=%llu coincident=%llu max_ns=%llu",
		(unsigned long long)m.groups, (unsigned long long)m.coincident,
		(unsigned long long)m.max_ns);
	put_count(out, "smi", smi);
	fprintf(out, " all_cpus=%llu cpus=%u\n", (unsigned long long)m.all_cpus, ncpus);
}

/* A comma-separated matrix row of one figure; "-" on the diagonal and for pairs not measured. */
static void put_row(FILE *out, const struct lab_data *d, uint32_t from, int which)
{
	for (uint32_t to = 0; to < d->nr_cpus; to++) {
		const struct lab_c2c *p = NULL;

		for (size_t k = 0; k < d->npairs; k++)
			if (d->pairs[k].from == from && d->pairs[k].to == to)
				p = &d->pairs[k];
		fputs(to ? "," : "", out);
		if (!p)
			fputc('-', out);
		else if (which == 0)
			fprintf(out, "%lld", (long long)p->one_way_ns);
		else if (which == 1)
			fprintf(out, "%llu", (unsigned long long)p->bound_ns);
		else
			fprintf(out, "%llu", (unsigned long long)p->rtt_half_ns);
	}
}

static void print_c2c(const struct lab_data *d, FILE *out)
{
	if (!d->npairs)
		return;
	for (size_t k = 0; k < d->npairs; k++) {
		const struct lab_c2c *p = &d->pairs[k];
		int64_t bi = d->bound_ns[p->from], bj = d->bound_ns[p->to];

		fprintf(out, "c2c: from=%u to=%u one_way_ns=%lld bound_ns=%llu rtt_half_ns=%llu "
			"samples=%u meaningful=%s", p->from, p->to, (long long)p->one_way_ns,
			(unsigned long long)p->bound_ns, (unsigned long long)p->rtt_half_ns,
			p->samples, lab_c2c_meaningful(p->one_way_ns, p->bound_ns) ? "yes" : "no");
		put_count(out, "clock_bound_ns", bi < 0 || bj < 0 ? -1 : bi + bj);
		fputc('\n', out);
	}
	for (uint32_t from = 0; from < d->nr_cpus; from++) {
		fprintf(out, "c2c: matrix from=%u one_way_ns=", from);
		put_row(out, d, from, 0);
		fputs(" bound_ns=", out);
		put_row(out, d, from, 1);
		fputs(" rtt_half_ns=", out);
		put_row(out, d, from, 2);
		fputc('\n', out);
	}
}

static void print_timerlat(const struct lab_data *d, FILE *out)
{
	for (uint32_t c = 0; c < d->nr_cpus; c++) {
		struct lab_tl_figures f;

		if (!d->tl[c].n)
			continue;
		lab_timerlat_figures(&d->tl[c], &f);
		fprintf(out, "timerlat: cpu=%u samples=%llu max_ns=%llu p99_ns=%llu p50_ns=%llu\n",
			c, (unsigned long long)f.samples, (unsigned long long)f.max_ns,
			(unsigned long long)f.p99_ns, (unsigned long long)f.p50_ns);
		fprintf(out, "timerlat: cpu=%u hist", c);
		put_hist(out, f.hist);
	}
}

int lab_print(struct lab_data *d, FILE *out)
{
	print_hwlat(d, out);
	print_c2c(d, out);
	print_timerlat(d, out);
	return fflush(out) || ferror(out) ? -1 : 0;
}
