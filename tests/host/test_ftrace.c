/*
 * Host tests of the function tracer's portable parts: the site table
 * (sorted, deduplicated, out-of-code entries dropped), globs, filters with
 * unknown names reported, and the function_graph text built from events
 * written to a real ring buffer with a fake 1 GHz clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#define TRACE_ARCH_HOST_DEFINE
#include <arch/trace_arch.h>
#include "kernel/ftrace_sites.h"
#include "trace/clock.h"
#include "trace/events.h"
#include "trace/event_fmt.h"
#include "trace/ring_buffer.h"
#include "trace/text.h"
#include "trace/text_ftrace.h"

/* ---- site table ---- */

static void test_prepare(void **state)
{
	uint64_t loc[] = { 0x3000, 0x1000, 0, 0x2000, 0x1000, 0x9000, 0x500, 0x2ffb, 0x2ffc };
	unsigned dropped = 0, n;

	(void)state;
	/* Code is [0x1000, 0x3000): 0x2ffb is the last address a 5-byte site fits at. */
	n = ftrace_sites_prepare(loc, 9, 0x1000, 0x3000, &dropped);
	assert_int_equal(n, 3);
	assert_int_equal(dropped, 6);	/* 0, a duplicate, 0x500, 0x2ffc, 0x3000, 0x9000 */
	assert_true(loc[0] == 0x1000 && loc[1] == 0x2000 && loc[2] == 0x2ffb);
	assert_int_equal(ftrace_sites_find(loc, n, 0x2000), 1);
	assert_int_equal(ftrace_sites_find(loc, n, 0x2ffb), 2);
	assert_int_equal(ftrace_sites_find(loc, n, 0x1000), 0);
	assert_int_equal(ftrace_sites_find(loc, n, 0x1001), -1);
	assert_int_equal(ftrace_sites_find(loc, 0, 0x1000), -1);
}

static void test_prepare_large_reversed(void **state)
{
	enum { N = 5000 };
	uint64_t *loc = malloc(N * sizeof(*loc));
	unsigned n;

	(void)state;
	for (unsigned i = 0; i < N; i++)
		loc[i] = 0x100000 + 16ull * (N - 1 - i / 2 * 2);	/* descending, each twice */
	n = ftrace_sites_prepare(loc, N, 0x100000, 0x200000, NULL);
	assert_int_equal(n, N / 2);
	for (unsigned i = 1; i < n; i++)
		assert_true(loc[i - 1] < loc[i]);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(ftrace_sites_find(loc, n, loc[i]), (int)i);
	free(loc);
}

static void test_glob(void **state)
{
	(void)state;
	assert_true(trace_glob_match("smp_*", "smp_init"));
	assert_true(trace_glob_match("*", ""));
	assert_true(trace_glob_match("*_init", "smp_init"));
	assert_true(trace_glob_match("s?p_*t", "smp_init"));
	assert_true(trace_glob_match("*a*b*", "xxaxxbxx"));
	assert_true(trace_glob_match("exact", "exact"));
	assert_false(trace_glob_match("exact", "exactly"));
	assert_false(trace_glob_match("smp_*", "tsc_init"));
	assert_false(trace_glob_match("?", ""));
	assert_false(trace_glob_match("*a*b", "xxaxxbxxc"));
	assert_false(trace_glob_match("", "x"));
}

static const char *const names[] = { "smp_init", "smp_call_async", "tsc_init", NULL, "main" };

static const char *name_at(unsigned i, void *arg)
{
	(void)arg;
	return names[i];
}

static void test_filter(void **state)
{
	uint8_t flags[5] = { 0x80, 0x80 | 0x01, 0, 0x01, 0 };
	char unknown[32];

	(void)state;
	assert_int_equal(ftrace_filter_apply("smp_*,main", 5, name_at, NULL, flags, 0x01,
					     unknown, sizeof(unknown)), 0);
	assert_string_equal(unknown, "");
	/* Exactly the named ones; other bits untouched; the nameless site never matches. */
	assert_true(flags[0] == 0x81 && flags[1] == 0x81 && flags[2] == 0 && flags[3] == 0 &&
		    flags[4] == 0x01);
	assert_int_equal(ftrace_filter_apply("tsc_init,,nosuch,x*,smp_init", 5, name_at, NULL,
					     flags, 0x02, unknown, sizeof(unknown)), 2);
	assert_string_equal(unknown, "nosuch,x*");
	assert_true(flags[0] == 0x83 && flags[2] == 0x02 && flags[1] == 0x81);
	/* An empty list clears the bit. */
	assert_int_equal(ftrace_filter_apply("", 5, name_at, NULL, flags, 0x01, unknown,
					     sizeof(unknown)), 0);
	assert_true(flags[0] == 0x82 && flags[1] == 0x80 && flags[4] == 0);
	/* The unknown list is cut to its buffer, NUL-terminated. */
	assert_int_equal(ftrace_filter_apply("aaaaaaaa,bbbbbbbb", 5, name_at, NULL, flags, 0x04,
					     unknown, 10), 2);
	assert_string_equal(unknown, "aaaaaaaa,");
}

/* ---- graph text ---- */

#define PAGES		4
#define PAGE_SIZE_T	4096
#define HZ		1000000000ull

static struct rb_cpu_buffer *cb;
static void *ring[PAGES + 1];

static const uint64_t sym_addrs[] = { 0x1000, 0x2000, 0x3000 };
static const char *const sym_names[] = { "outer", "inner", "leaf" };
static const struct trace_symtab symtab = { sym_addrs, sym_names, 3, 0x4000 };

static void setup_ring(void)
{
	struct rb_cpu_config cfg = { .cpu = 0, .nr_pages = PAGES, .page_size = PAGE_SIZE_T,
				     .mode = RB_MODE_OVERWRITE };
	size_t size = ring_buffer_cpu_size(PAGES);

	cb = aligned_alloc(64, ALIGN_UP(size, 64));
	for (unsigned i = 0; i <= PAGES; i++)
		ring[i] = aligned_alloc(PAGE_SIZE_T, PAGE_SIZE_T);
	host_fake_clock_on = 1;
	host_fake_step = 0;
	host_fake_now = 1000;
	assert_int_equal(ring_buffer_cpu_init(cb, size, &cfg, ring), 0);
}

static void put_entry(uint64_t now, uint64_t func, uint32_t depth, unsigned level)
{
	struct trace_ev_funcgraph_entry *e;

	host_fake_now = now;
	host_trace_level = level;
	assert_int_equal(ring_buffer_reserve(cb, sizeof(*e), (void **)&e), 0);
	e->hdr = trace_ent_pack(TEV_funcgraph_entry, trace_ent_ctx(level),
				TRACE_ENT_WORDS(funcgraph_entry));
	e->func = func;
	e->depth = depth;
	ring_buffer_commit(cb);
	host_trace_level = 0;
}

static void put_exit(uint64_t now, uint64_t func, uint64_t cycles, uint32_t depth, unsigned level)
{
	struct trace_ev_funcgraph_exit *e;

	host_fake_now = now;
	host_trace_level = level;
	assert_int_equal(ring_buffer_reserve(cb, sizeof(*e), (void **)&e), 0);
	e->hdr = trace_ent_pack(TEV_funcgraph_exit, trace_ent_ctx(level),
				TRACE_ENT_WORDS(funcgraph_exit));
	e->func = func;
	e->cycles = cycles;
	e->depth = depth;
	e->overrun = 0;
	ring_buffer_commit(cb);
	host_trace_level = 0;
}

static void put_function(uint64_t now, uint64_t ip, uint64_t parent)
{
	struct trace_ev_function *e;

	host_fake_now = now;
	assert_int_equal(ring_buffer_reserve(cb, sizeof(*e), (void **)&e), 0);
	e->hdr = trace_ent_pack(TEV_function, trace_ent_ctx(0), TRACE_ENT_WORDS(function));
	e->ip = ip;
	e->parent_ip = parent;
	ring_buffer_commit(cb);
}

static char out_buf[16384];
static size_t out_len;

static void sink_write(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	assert_true(out_len + len < sizeof(out_buf));
	memcpy(out_buf + out_len, buf, len);
	out_len += len;
}

/* The text of everything written so far; only the lines after the header. */
static const char *text_of(void)
{
	static void *pages[64];
	static uint64_t lost[64];
	struct rb_read rd;
	unsigned n = 0;
	struct clock_conv conv;
	struct trace_text_cpu c;
	struct trace_symbols syms = { trace_symtab_lookup, &symtab, NULL };
	struct trace_text_opts opts = { .cpu = TRACE_TEXT_ALL_CPUS, .syms = &syms };
	struct trace_sink sink = { sink_write, NULL };
	static uint64_t scratch[1024];
	char *p;

	assert_int_equal(ring_buffer_flush(cb), 0);	/* the writers' page becomes readable */
	while (ring_buffer_read_page(cb, &rd) == 1) {
		pages[n] = aligned_alloc(64, rd.page_size);
		memcpy(pages[n], rd.page, rd.page_size);
		lost[n++] = 0;
	}
	assert_int_equal(clock_conv_init(&conv, HZ, 0, 0), 0);
	c = (struct trace_text_cpu){ .cpu = 0, .clock_state = TRACE_CLOCK_TRUSTED, .clock = &conv,
				     .page_size = PAGE_SIZE_T, .nr_pages = n,
				     .pages = (const void *const *)pages, .lost = lost };
	out_len = 0;
	assert_int_equal(trace_text_write(&c, 1, &opts, scratch, sizeof(scratch), &sink, NULL), 0);
	out_buf[out_len] = 0;
	p = strstr(out_buf, "|      |\n");
	assert_non_null(p);
	return p + strlen("|      |\n");
}

static void test_graph_text(void **state)
{
	(void)state;
	setup_ring();
	/* outer { inner { leaf; leaf; [IRQ: leaf] } }, 1 ns per cycle. */
	put_entry(10000, 0x1000, 0, 0);
	put_entry(10100, 0x2000, 1, 0);
	put_entry(10200, 0x3000, 2, 0);
	put_exit(10450, 0x3000, 250, 2, 0);
	put_entry(11000, 0x3000, 2, 0);
	put_entry(11100, 0x3000, 0, 2);	/* an IRQ lands in leaf: not leaf's exit */
	put_exit(11200, 0x3000, 100, 0, 2);
	put_exit(11500, 0x3000, 500, 2, 0);
	put_exit(12000, 0x2000, 1900, 1, 0);
	put_exit(13000, 0x1000, 1234567, 0, 0);	/* longer than the time since boot: clamped */
	put_function(14000, 0x3000, 0x2010);
	put_function(14001, 0x5000, 0x1000);
	assert_string_equal(text_of(),
		TRACE_TEXT_GRAPH_LEGEND
		"    0.000010000 |   0)    task/0-1    |               |  outer() {\n"
		"    0.000010100 |   0)    task/0-1    |               |    inner() {\n"
		"    0.000010200 |   0)    task/0-1    |   0.250 us    |      leaf();\n"
		"    0.000011000 |   0)    task/0-1    |               |      leaf() {\n"
		"    0.000011100 |   0)    irq/0-3     |   0.100 us    |  leaf();\n"
		"    0.000011500 |   0)    task/0-1    |   0.500 us    |      }\n"
		"    0.000012000 |   0)    task/0-1    |   1.900 us    |    }\n"
		"    0.000013000 |   0)    task/0-1    | + 13.000 us   |  }\n"
		"     task/0-1     [000] ....     0.000014000: leaf <-inner+0x10\n"
		"     task/0-1     [000] ....     0.000014001: 0x5000 <-outer+0x0\n");
}

/*
 * Linux's duration column (trace_print_graph_duration(), trace_find_mark()):
 * a mark past each bound (strictly), microseconds with the nanosecond
 * digits that fit 7 digits, 12 characters in all. Kills: '>=' for '>',
 * marks of trace-cmd 3.1 ('#' for anything over 1 ms), rounding.
 */
static void test_graph_duration_marks(void **state)
{
	static const struct { uint64_t ns; const char *col; } want[] = {
		{ 10000, "  10.000 us   " }, { 10001, "+ 10.001 us   " },
		{ 100001, "! 100.001 us  " }, { 1000001, "# 1000.001 us " },
		{ 10000001, "* 10000.00 us " }, { 15938519, "* 15938.51 us " },
		{ 100000001, "@ 100000.0 us " }, { 136793119, "@ 136793.1 us " },
		{ 1000000001, "$ 1000000 us  " }, { 12345678999, "$ 12345678 us " },
	};
	struct trace_ev_funcgraph_exit e = { .hdr = trace_ent_pack(TEV_funcgraph_exit, 0,
						 TRACE_ENT_WORDS(funcgraph_exit)), .func = 0x77 };
	struct trace_event_view v;
	char buf[256];

	(void)state;
	assert_true(trace_event_parse(NULL, (const uint8_t *)&e, sizeof(e), &v));
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		trace_ftrace_graph(&v, NULL, 0, 5, (int64_t)want[i].ns, NULL, buf, sizeof(buf));
		assert_memory_equal(buf + 40, want[i].col, 14);
		assert_string_equal(buf + 40 + 14, "|  }");
	}
}

/* The line formatter alone: depth indent capped, unknown symbol, a negative time. */
static void test_graph_line(void **state)
{
	const struct trace_event_def *d = trace_builtin_catalog.by_id[TEV_funcgraph_entry];
	struct trace_ev_funcgraph_entry e = { .hdr = trace_ent_pack(TEV_funcgraph_entry, 0,
						 TRACE_ENT_WORDS(funcgraph_entry)), .func = 0x77,
					      .depth = 1000 };
	struct trace_event_view v;
	char buf[256];

	(void)state;
	assert_true(trace_event_parse(NULL, (const uint8_t *)&e, sizeof(e), &v));
	assert_ptr_equal(v.def, d);
	assert_int_equal(trace_ftrace_kind(v.def), TRACE_FTRACE_ENTRY);
	trace_ftrace_graph(&v, NULL, 3, -1500000001, 0, NULL, buf, sizeof(buf));
	assert_memory_equal(buf, "   -1.500000001 |   3)   task/3-13    |               |  ", 57);
	assert_int_equal(strlen(buf), 57 + 128 + strlen("0x77() {"));
	assert_string_equal(buf + 57 + 128, "0x77() {");
	assert_int_equal(trace_ftrace_kind(trace_builtin_catalog.by_id[TEV_bprint]),
			 TRACE_FTRACE_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepare),
		cmocka_unit_test(test_prepare_large_reversed),
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_graph_text),
		cmocka_unit_test(test_graph_duration_marks),
		cmocka_unit_test(test_graph_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
