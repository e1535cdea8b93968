/*
 * baretrace-decode --lab-plot DIR (tools/lab_summary.h): the lab's
 * pictures as plain SVG, written by hand (no library, any browser shows
 * them):
 *
 *   hwlat_gaps.svg  gap lengths, a bar per CPU in each power-of-two bucket
 *                   (the summary's hist), counts on a log scale
 *   timerlat.svg    timer latencies, the same form
 *   c2c.svg         the one-way latency matrix (rows: from, columns: to),
 *                   each cell coloured by one_way_ns and labelled with it,
 *                   its bound (+-) and rtt_half; a cell whose bound is not
 *                   smaller than its figure (meaningful=no) is hatched
 *
 *   histogram layout (px):  margin 70 left, 40 top, 60 bottom
 *     +---------------------------------------------+
 *     | title                                       |
 *     |  count (log)  |#  #|   |##|  ...            |
 *     |               2^k ns buckets, low to high    |
 *     +---------------------------------------------+
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lab_summary.h"

#define W		760	/* picture width, px */
#define H		460	/* histogram height, px */
#define ML		70	/* left margin: the count axis */
#define MT		50	/* top margin: title */
#define MB		110	/* bottom margin: bucket labels, legend */
#define MR		20

static const char *const colour[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
				       "#9467bd", "#8c564b", "#e377c2", "#7f7f7f" };

/* "2^k ns" as people read it: 64 ns, 16 us, 2 ms. */
static void si(char *buf, size_t cap, uint64_t ns)
{
	if (ns >= 1000000000ull && ns % 1000000000ull == 0)
		snprintf(buf, cap, "%llu s", (unsigned long long)(ns / 1000000000ull));
	else if (ns >= 1000000)
		snprintf(buf, cap, "%.3g ms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, cap, "%.3g us", ns / 1e3);
	else
		snprintf(buf, cap, "%llu ns", (unsigned long long)ns);
}

static FILE *open_svg(const char *dir, const char *name, int h, char *path, size_t cap,
		      FILE *err)
{
	FILE *f;

	snprintf(path, cap, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(err, "baretrace-decode: --lab-plot: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, h, W, h);
	return f;
}

static int close_svg(FILE *f, const char *path, FILE *info, FILE *err)
{
	fprintf(f, "</svg>\n");
	if (ferror(f) | fclose(f)) {
		fprintf(err, "baretrace-decode: --lab-plot: %s: write error\n", path);
		return -1;
	}
	fprintf(info, "baretrace-decode: --lab-plot: wrote %s\n", path);
	return 0;
}

/*
 * Bars: hist[c][k] for the CPUs in cpus[0 .. n), buckets lo..hi; counts on
 * a log10 axis (1 at the bottom line, so that a bucket of one shows).
 */
static void bars(FILE *f, const char *title, const char *what, uint64_t (*hist)[LAB_HIST_BUCKETS],
		 const uint32_t *cpus, unsigned n)
{
	unsigned lo = LAB_HIST_BUCKETS, hi = 0;
	uint64_t top = 1;
	double decades, pw, bw;
	int ph = H - MT - MB;
	char a[32];

	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < LAB_HIST_BUCKETS; k++)
			if (hist[i][k]) {
				lo = k < lo ? k : lo;
				hi = k > hi ? k : hi;
				top = hist[i][k] > top ? hist[i][k] : top;
			}
	if (lo > hi)
		lo = hi = 0;
	decades = ceil(log10((double)top + 0.5));
	if (decades < 1)
		decades = 1;
	pw = (double)(W - ML - MR) / (hi - lo + 1);	/* one bucket's width */
	bw = pw * 0.8 / n;				/* one CPU's bar in it */
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\">%s</text>\n", ML, title);
	for (int e = 0; e <= (int)decades; e++) {	/* the count axis: 1, 10, 100 ... */
		double y = MT + ph - ph * e / decades;

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n",
			ML, y, W - MR, y, ML - 6, y + 4, pow(10, e));
	}
	fprintf(f, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" "
		"text-anchor=\"middle\">count (log scale)</text>\n", MT + ph / 2, MT + ph / 2);
	for (unsigned k = lo; k <= hi; k++) {
		double x0 = ML + pw * (k - lo);

		si(a, sizeof(a), 1ull << k);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" font-size=\"11\" "
			"transform=\"rotate(-35 %.1f %d)\">&#8805;%s</text>\n", x0 + pw / 2 + 4,
			MT + ph + 14, x0 + pw / 2 + 4, MT + ph + 14, a);
		for (unsigned i = 0; i < n; i++) {
			uint64_t v = hist[i][k];
			double h = v ? ph * (log10((double)v) + 0.15) / (decades + 0.15) : 0;
			double x = x0 + pw * 0.1 + bw * i;

			if (!v)
				continue;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"><title>cpu %u: %llu</title></rect>\n"
				"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
				"font-size=\"10\">%llu</text>\n", x, MT + ph - h, bw, h,
				colour[i % 8], cpus[i], (unsigned long long)v, x + bw / 2,
				MT + ph - h - 3, (unsigned long long)v);
		}
	}
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
		ML, MT + ph, W - MR, MT + ph);
	fprintf(f, "<text x=\"%d\" y=\"%d\">%s, power-of-two buckets (as the summary's "
		"hist)</text>\n", ML, MT + ph + 74, what);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">cpu %u</text>\n", ML + 70 * (int)i, H - 18,
			colour[i % 8], ML + 70 * (int)i + 14, H - 9, cpus[i]);
}

static int plot_hist(struct lab_data *d, const char *dir, const char *name, const char *title,
		     const char *what, bool tl, FILE *info, FILE *err)
{
	uint64_t (*hist)[LAB_HIST_BUCKETS] = calloc(d->nr_cpus, sizeof(*hist));
	uint32_t *cpus = calloc(d->nr_cpus, sizeof(*cpus));
	char path[4096];
	unsigned n = 0;
	int rc = -1;
	FILE *f;

	if (!hist || !cpus) {
		fprintf(err, "baretrace-decode: --lab-plot: out of memory\n");
		goto out;
	}
	for (uint32_t c = 0; c < d->nr_cpus; c++) {
		struct lab_tl_figures t;

		if (tl && d->tl[c].n) {
			lab_timerlat_figures(&d->tl[c], &t);
			memcpy(hist[n], t.hist, sizeof(t.hist));
		} else if (!tl && (d->hw[c].ran || d->hw[c].gaps)) {
			memcpy(hist[n], d->hw[c].hist, sizeof(d->hw[c].hist));
		} else {
			continue;
		}
		cpus[n++] = c;
	}
	rc = 0;
	if (!n)
		goto out;	/* not this job's capture */
	f = open_svg(dir, name, H, path, sizeof(path), err);
	if (!f) {
		rc = -1;
		goto out;
	}
	bars(f, title, what, hist, cpus, n);
	rc = close_svg(f, path, info, err);
out:
	free(hist);
	free(cpus);
	return rc;
}

/* Pale yellow (0) to red (the largest figure), straight between the two. */
static void heat(char *buf, size_t cap, double t)
{
	static const unsigned lo[3] = { 255, 245, 224 }, hi[3] = { 214, 39, 40 };
	unsigned c[3];

	t = t < 0 ? 0 : t > 1 ? 1 : t;
	for (int i = 0; i < 3; i++)
		c[i] = (unsigned)(lo[i] + (hi[i] - (double)lo[i]) * t + 0.5) & 0xff;
	snprintf(buf, cap, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static int plot_c2c(struct lab_data *d, const char *dir, const char *title, FILE *info, FILE *err)
{
	uint32_t n = 0;
	int64_t top = 1;
	int cell, h;
	char path[4096], fill[16];
	FILE *f;

	for (size_t k = 0; k < d->npairs; k++) {
		const struct lab_c2c *p = &d->pairs[k];

		n = p->from + 1 > n ? p->from + 1 : n;
		n = p->to + 1 > n ? p->to + 1 : n;
		top = p->one_way_ns > top ? p->one_way_ns : top;
	}
	if (!n)
		return 0;
	cell = (W - 2 * ML) / (int)n > 130 ? 130 : (W - 2 * ML) / (int)n;
	h = MT + 30 + cell * (int)n + 90;
	f = open_svg(dir, "c2c.svg", h, path, sizeof(path), err);
	if (!f)
		return -1;
	fprintf(f, "<defs><pattern id=\"hatch\" width=\"8\" height=\"8\" "
		"patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
		"<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#888\" stroke-width=\"2\"/>"
		"</pattern></defs>\n");
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\">%s</text>\n", ML, title);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">to CPU</text>\n",
		ML + cell * (int)n / 2, MT);
	fprintf(f, "<text x=\"20\" y=\"%d\" transform=\"rotate(-90 20 %d)\" "
		"text-anchor=\"middle\">from CPU</text>\n", MT + 30 + cell * (int)n / 2,
		MT + 30 + cell * (int)n / 2);
	for (uint32_t i = 0; i < n; i++) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%u</text>\n",
			ML + cell * (int)i + cell / 2, MT + 22, i);
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%u</text>\n", ML - 8,
			MT + 30 + cell * (int)i + cell / 2 + 4, i);
	}
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			const struct lab_c2c *p = NULL;
			int x = ML + cell * (int)j, y = MT + 30 + cell * (int)i;

			for (size_t k = 0; k < d->npairs; k++)
				if (d->pairs[k].from == i && d->pairs[k].to == j)
					p = &d->pairs[k];
			if (!p) {
				fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
					"fill=\"#eee\" stroke=\"white\"/>\n", x, y, cell, cell);
				continue;
			}
			heat(fill, sizeof(fill), p->one_way_ns > 0 ?
			     (double)p->one_way_ns / (double)top : 0);
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
				"stroke=\"white\"/>\n", x, y, cell, cell, fill);
			if (!lab_c2c_meaningful(p->one_way_ns, p->bound_ns))
				fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
					"fill=\"url(#hatch)\" opacity=\"0.35\"/>\n", x, y, cell,
					cell);
			fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
				"font-size=\"16\">%lld ns</text>\n"
				"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">&#177;%llu</text>\n"
				"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">"
				"rtt/2 %llu</text>\n", x + cell / 2, y + cell / 2 - 6,
				(long long)p->one_way_ns, x + cell / 2, y + cell / 2 + 12,
				(unsigned long long)p->bound_ns, x + cell / 2, y + cell / 2 + 28,
				(unsigned long long)p->rtt_half_ns);
		}
	for (int k = 0; k <= 10; k++) {	/* the colour scale, 0 to the largest */
		heat(fill, sizeof(fill), k / 10.0);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"%d\" fill=\"%s\"/>\n",
			ML + cell * (int)n + 30, MT + 30 + cell * (int)n * (10 - k) / 11,
			cell * (int)n / 11 + 1, fill);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\">%lld ns</text>\n<text x=\"%d\" y=\"%d\">0</text>\n",
		ML + cell * (int)n + 50, MT + 42, (long long)top, ML + cell * (int)n + 50,
		MT + 30 + cell * (int)n - 2);
	fprintf(f, "<text x=\"%d\" y=\"%d\">one-way latency of a cache line (median), "
		"&#177; the pair's skew bound; rtt/2: half the</text>\n"
		"<text x=\"%d\" y=\"%d\">median CAS round trip. Hatched: bound &#8805; "
		"|one-way| (meaningful=no: trust rtt/2).</text>\n",
		ML, h - 52, ML, h - 36);
	return close_svg(f, path, info, err);
}

int lab_plot(struct lab_data *d, const char *dir, const char *title, FILE *info, FILE *err)
{
	char t[256];

	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(err, "baretrace-decode: --lab-plot: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	snprintf(t, sizeof(t), "hwlat: gap lengths per CPU (%s)", title);
	if (plot_hist(d, dir, "hwlat_gaps.svg", t, "gap length", false, info, err))
		return -1;
	snprintf(t, sizeof(t), "timerlat: timer IRQ latency per CPU (%s)", title);
	if (plot_hist(d, dir, "timerlat.svg", t, "latency", true, info, err))
		return -1;
	snprintf(t, sizeof(t), "c2c: one-way latency matrix (%s)", title);
	return plot_c2c(d, dir, t, info, err);
}
