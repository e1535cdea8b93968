/*
 * trace.events= and `events enable|disable`: glob matching, patterns
 * applied in order, refused lists that change nothing, and the summary
 * line, on a small catalog of our own and on the built-in one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "trace/event_select.h"

static void test_glob(void **state)
{
	(void)state;
	assert_true(trace_glob_match("*", ""));
	assert_true(trace_glob_match("*", "lapic_tick"));
	assert_true(trace_glob_match("lapic_*", "lapic_tick"));
	assert_true(trace_glob_match("*_tick", "lapic_tick"));
	assert_true(trace_glob_match("l?pic*k", "lapic_tick"));
	assert_true(trace_glob_match("*a*i*", "lapic_tick"));
	assert_true(trace_glob_match("ipi_s**d", "ipi_send"));
	assert_false(trace_glob_match("lapic", "lapic_tick"));	/* whole names only */
	assert_false(trace_glob_match("lapic_tick_", "lapic_tick"));
	assert_false(trace_glob_match("?", ""));
	assert_false(trace_glob_match("*x", "lapic_tick"));
	assert_false(trace_glob_match("LAPIC_*", "lapic_tick"));	/* case matters */
	assert_true(trace_glob_match("a*b*c", "aXbYbZc"));	/* backtracking */
	assert_false(trace_glob_match("a*b*c", "aXbYbZ"));
}

/* A catalog with a hole (id 3) and ids 1, 2, 4, 5. */
static const struct trace_event_def e1 = { .id = 1, .system = "irq", .name = "tick" };
static const struct trace_event_def e2 = { .id = 2, .system = "ipi", .name = "send" };
static const struct trace_event_def e4 = { .id = 4, .system = "ipi", .name = "recv" };
static const struct trace_event_def e5 = { .id = 5, .system = "demo", .name = "send_more",
					   .flags = TRACE_EVENT_DISABLED };
static const struct trace_event_def *const by_id[] = { NULL, &e1, &e2, NULL, &e4, &e5 };
static const struct trace_catalog cat = { by_id, 6 };

/* Apply list to a fresh state (from), expect the result as "1101..." by id 1..5. */
static void expect(const char *from, const char *list, enum trace_select_how how,
		   const char *want)
{
	uint8_t on[6] = { 0 };
	char err[TRACE_SELECT_ERR_MAX] = "";

	for (int i = 0; i < 5; i++)
		on[i + 1] = from[i] == '1';
	on[3] = 7;	/* not described: never touched */
	if (trace_events_select(&cat, list, how, on, err))
		fail_msg("list \"%s\" refused: %s", list, err);
	for (int i = 0; i < 5; i++)
		if (i + 1 != 3 && on[i + 1] != (want[i] == '1'))
			fail_msg("list \"%s\" from %s: id %d is %u, want %c", list, from, i + 1,
				 on[i + 1], want[i]);
	assert_int_equal(on[3], 7);
}

static void test_patterns_in_order(void **state)
{
	(void)state;
	expect("00000", "*", TRACE_SELECT_FROM_ALL, "11011");
	expect("00000", "-ipi:*", TRACE_SELECT_FROM_ALL, "10001");
	expect("00000", "-*,irq:*", TRACE_SELECT_FROM_ALL, "10000");
	expect("00000", "irq:*,-*", TRACE_SELECT_FROM_ALL, "00000");
	expect("00000", "-*,*:send*", TRACE_SELECT_FROM_ALL, "01001");
	expect("00000", "-*,ipi:send,-ipi:send", TRACE_SELECT_FROM_ALL, "00000");
	expect("10000", "ipi:re?v", TRACE_SELECT_ENABLE, "10010");
	expect("11011", "ipi:*", TRACE_SELECT_DISABLE, "10001");
	expect("10001", "-irq:tick", TRACE_SELECT_DISABLE, "10001");	/* '-' flips: enable */
	expect("00000", "-irq:tick", TRACE_SELECT_DISABLE, "10000");
	expect("11011", "*:*", TRACE_SELECT_DISABLE, "00000");
}

static void refused(const char *list, enum trace_select_how how, const char *why)
{
	uint8_t on[6] = { 0, 1, 0, 9, 1, 0 }, was[6];
	char err[TRACE_SELECT_ERR_MAX] = "";

	memcpy(was, on, sizeof(on));
	assert_int_equal(trace_events_select(&cat, list, how, on, err), -1);
	assert_memory_equal(on, was, sizeof(on));	/* nothing changed */
	assert_string_equal(err, why);
}

static void test_bad_lists_change_nothing(void **state)
{
	(void)state;
	refused("", TRACE_SELECT_FROM_ALL, "an empty list names no event");
	refused("irq:*,", TRACE_SELECT_FROM_ALL, "an empty pattern in the list");
	refused(",irq:*", TRACE_SELECT_ENABLE, "an empty pattern in the list");
	refused("-", TRACE_SELECT_ENABLE, "an empty pattern in the list");
	/* The good items before the bad one are not applied either. */
	refused("-*,irq:*,nosuch:*", TRACE_SELECT_FROM_ALL, "'nosuch:*' names no event");
	refused("tick", TRACE_SELECT_ENABLE, "'tick' names no event");	/* no system */
	refused("irq:tick:x", TRACE_SELECT_ENABLE, "'irq:tick:x' names no event");
	refused("ipi:sen", TRACE_SELECT_DISABLE, "'ipi:sen' names no event");
	refused("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:*",
		TRACE_SELECT_ENABLE,
		"'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' names no event (cut)");
}

static void test_summary(void **state)
{
	char buf[128];
	uint8_t on[6] = { 0, 1, 0, 0, 1, 1 };

	(void)state;
	assert_string_equal(trace_events_summary(buf, sizeof(buf), &cat, on),
			    "enabled=3/4 irq:tick,ipi:recv,demo:send_more");
	memset(on, 1, sizeof(on));
	assert_string_equal(trace_events_summary(buf, sizeof(buf), &cat, on), "enabled=4/4 all");
	memset(on, 0, sizeof(on));
	assert_string_equal(trace_events_summary(buf, sizeof(buf), &cat, on), "enabled=0/4 none");
	/* No map: each description's own flag (as a capture carried it). */
	assert_string_equal(trace_events_summary(buf, sizeof(buf), &cat, NULL),
			    "enabled=3/4 irq:tick,ipi:send,ipi:recv");
	/* A list that does not fit ends in "...", and the buffer is never overrun. */
	on[1] = on[2] = on[4] = 1;
	for (size_t size = 1; size < 48; size++) {
		char small[48];
		memset(small, 'Z', sizeof(small));
		trace_events_summary(small, size, &cat, on);
		assert_true(strlen(small) < size);
		assert_int_equal(small[size], 'Z');
	}
	{
		char b[32];
		assert_string_equal(trace_events_summary(b, sizeof(b), &cat, on),
				    "enabled=3/4 irq:tick,...");
	}
}

/* The built-in list: every event is system:name, each reachable by pattern. */
static void test_builtin_catalog(void **state)
{
	uint8_t on[TEV_MAX] = { 0 };
	char err[TRACE_SELECT_ERR_MAX], pat[160];

	(void)state;
	assert_int_equal(trace_events_select(&trace_builtin_catalog, "-*,ipi:*",
					     TRACE_SELECT_FROM_ALL, on, err), 0);
	assert_true(on[TEV_ipi_send] && on[TEV_ipi_recv]);
	assert_false(on[TEV_lapic_tick] || on[TEV_producer] || on[TEV_bprint]);
	for (uint32_t id = 1; id < TEV_MAX; id++) {
		const struct trace_event_def *d = trace_catalog_get(&trace_builtin_catalog, id);
		assert_non_null(d);
		memset(on, 0, sizeof(on));
		snprintf(pat, sizeof(pat), "%s:%s", d->system, d->name);
		assert_int_equal(trace_events_select(&trace_builtin_catalog, pat,
						     TRACE_SELECT_ENABLE, on, err), 0);
		for (uint32_t j = 1; j < TEV_MAX; j++)
			assert_int_equal(on[j], j == id);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_patterns_in_order),
		cmocka_unit_test(test_bad_lists_change_nothing),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_builtin_catalog),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
