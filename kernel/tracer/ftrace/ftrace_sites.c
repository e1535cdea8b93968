/*
 * The function tracer's site table and filters (contract in
 * <kernel/ftrace_sites.h>). Portable: compiled into the kernel and into
 * the host tests.
 *
 * The table is a few hundred entries, sorted once at boot: a heap sort
 * (in place, no allocation, O(n log n) whatever order the linker left).
 */
#include "kernel/ftrace_sites.h"

#define SITE_LEN	5

static void sift_down(uint64_t *a, unsigned root, unsigned n)
{
	for (;;) {
		unsigned child = 2 * root + 1;
		uint64_t t;

		if (child >= n)
			return;
		if (child + 1 < n && a[child + 1] > a[child])
			child++;
		if (a[root] >= a[child])
			return;
		t = a[root];
		a[root] = a[child];
		a[child] = t;
		root = child;
	}
}

static void heap_sort(uint64_t *a, unsigned n)
{
	for (unsigned i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (unsigned end = n; end > 1; end--) {
		uint64_t t = a[0];

		a[0] = a[end - 1];
		a[end - 1] = t;
		sift_down(a, 0, end - 1);
	}
}

unsigned ftrace_sites_prepare(uint64_t *loc, unsigned n, uint64_t text_lo, uint64_t text_hi,
			      unsigned *dropped)
{
	unsigned m = 0;

	heap_sort(loc, n);
	for (unsigned i = 0; i < n; i++) {
		uint64_t a = loc[i];

		if (!a || a < text_lo || text_hi < SITE_LEN || a > text_hi - SITE_LEN)
			continue;
		if (m && loc[m - 1] == a)
			continue;
		loc[m++] = a;
	}
	if (dropped)
		*dropped = n - m;
	return m;
}

int ftrace_sites_find(const uint64_t *sites, unsigned n, uint64_t addr)
{
	unsigned lo = 0, hi = n;

	while (lo < hi) {	/* invariant: the answer, if any, is in [lo, hi) */
		unsigned mid = lo + (hi - lo) / 2;

		if (sites[mid] == addr)
			return (int)mid;
		if (sites[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void append_item(char *out, size_t len, size_t *at, const char *item, size_t n)
{
	if (!out || !len)
		return;
	if (*at && *at + 1 < len)
		out[(*at)++] = ',';
	for (size_t i = 0; i < n && *at + 1 < len; i++)
		out[(*at)++] = item[i];
	out[*at < len ? *at : len - 1] = 0;
}

unsigned ftrace_filter_apply(const char *list, unsigned n, ftrace_name_fn name, void *arg,
			     uint8_t *flags, uint8_t bit, char *unknown, size_t unknown_len)
{
	char item[FTRACE_LIST_MAX];
	unsigned missing = 0;
	size_t at = 0;

	if (unknown && unknown_len)
		unknown[0] = 0;
	for (unsigned i = 0; i < n; i++)
		flags[i] &= (uint8_t)~bit;
	while (list && *list) {
		size_t len = 0;
		unsigned hits = 0;

		while (list[len] && list[len] != ',')
			len++;
		if (len && len < sizeof(item)) {
			for (size_t k = 0; k < len; k++)
				item[k] = list[k];
			item[len] = 0;
			for (unsigned i = 0; i < n; i++) {
				const char *s = name(i, arg);

				if (s && trace_glob_match(item, s)) {
					flags[i] |= bit;
					hits++;
				}
			}
		}
		if (len && !hits) {
			append_item(unknown, unknown_len, &at, list, len);
			missing++;
		}
		list += len;
		if (*list == ',')
			list++;
	}
	return missing;
}
