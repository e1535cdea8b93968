/*
 * trace_printk's binary form against the C library: for many formats and
 * values, encoding the arguments (as the kernel does) then formatting
 * them (as a reader does) prints what vsnprintf prints from the same
 * arguments.  Also: strings over the bound are cut and marked, and damaged
 * argument bytes never read past their end.
 */
#include <limits.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "trace/bprint.h"

static uint8_t args[TRACE_BPRINT_ARGS_MAX];
static uint32_t nargs;

/* Encode, format, compare with libc; the encoding stays in args[0 .. nargs). */
static void check(const char *fmt, ...)
{
	char want[512], got[512];
	va_list ap, ap2;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	nargs = trace_bprint_encode(args, sizeof(args), fmt, ap);
	vsnprintf(want, sizeof(want), fmt, ap2);
	va_end(ap2);
	va_end(ap);
	trace_bprint_format(got, sizeof(got), fmt, args, nargs);
	if (strcmp(want, got))
		fail_msg("format \"%s\": libc \"%s\", bprint \"%s\"", fmt, want, got);
}

static void test_against_libc(void **state)
{
	static const long long vals[] = { 0, 1, -1, 7, -42, 255, 256, 65535, -65536, INT_MAX,
					  INT_MIN, 1LL << 40, -(1LL << 40), LLONG_MAX, LLONG_MIN };
	static const char *const iflags[] = { "", "-", "+", " ", "#", "0", "-8", "08", "+6", "#10",
					      ".0", ".5", "-12.3", "0.3", "*", ".*", "-*.*" };
	static const char *const convs[] = { "d", "i", "u", "x", "X", "o" };
	char fmt[64];

	(void)state;
	for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); v++)
		for (size_t f = 0; f < sizeof(iflags) / sizeof(iflags[0]); f++)
			for (size_t c = 0; c < sizeof(convs) / sizeof(convs[0]); c++) {
				bool star = strchr(iflags[f], '*') != NULL;
				bool two = star && strstr(iflags[f], "*.*") != NULL;
				long long x = vals[v];

				snprintf(fmt, sizeof(fmt), "<%%%sll%s>", iflags[f], convs[c]);
				if (two)
					check(fmt, 7, 3, x);
				else if (star)
					check(fmt, -9, x);
				else
					check(fmt, x);
				snprintf(fmt, sizeof(fmt), "[%%%s%s]", iflags[f], convs[c]);
				if (two)
					check(fmt, -6, 2, (int)x);
				else if (star)
					check(fmt, 5, (int)x);
				else
					check(fmt, (int)x);
				snprintf(fmt, sizeof(fmt), "%%%sl%s|%%%shh%s|%%%sh%s|%%%sz%s", "", convs[c],
					 "", convs[c], "", convs[c], "", convs[c]);
				check(fmt, (long)x, (int)x, (int)x, (size_t)x);
			}
	check("%c%c%5c|%-3c|", 'a', 'Z', 'q', '!');
	check("%s|%10s|%-10s|%.2s|%*.*s|", "abc", "right", "left", "cut", 8, 3, "starry");
	check("100%% sure, %d%%", 99);
	check("%s and %s", "", "empty");
	check("%p %p", (void *)0x1234, (void *)0xffff800000001000ull);
	check("no conversion at all");
	check("%jd %td %zu", (intmax_t)-5, (ptrdiff_t)-7, (size_t)123456789);
}

static void test_long_string_is_cut(void **state)
{
	char big[300], out[400];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	check("%.0s", big);	/* encodes the string, cut; libc and bprint print nothing */
	trace_bprint_format(out, sizeof(out), "<%s>", args, nargs);
	assert_int_equal(strlen(out), 2 + TRACE_BPRINT_STR_MAX + 3);
	assert_memory_equal(out + 1 + TRACE_BPRINT_STR_MAX, "...>", 4);
}

static void test_damaged_args_never_overread(void **state)
{
	char out[256];

	(void)state;
	check("%d %s %llx", 5, "hello", 0x1234ull);
	for (uint32_t cut = 0; cut < nargs; cut++) {
		int n = trace_bprint_format(out, sizeof(out), "%d %s %llx", args, cut);
		assert_true(n > 0 && strstr(out, "[...]") != NULL);
	}
	/* A string length past the end. */
	args[8] = 0xff;
	args[9] = 0x7f;
	trace_bprint_format(out, sizeof(out), "%d %s %llx", args, nargs);
	assert_string_equal(out, "5 [...]");
	/* An unknown conversion stops the format there. */
	trace_bprint_format(out, sizeof(out), "a=%d %y b=%d", args, nargs);
	assert_string_equal(out, "a=5 %?");
}

/*
 * Widths and precisions a damaged format or '*' argument makes huge are
 * taken as TRACE_BPRINT_WIDTH_MAX: no int overflow (UBSan), no padding
 * for ever, and the length returned is what that width prints.  Catches:
 * digits parsed into an int without a bound, a '*' of INT_MIN negated.
 */
static void encode(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nargs = trace_bprint_encode(args, sizeof(args), fmt, ap);
	va_end(ap);
}

static void test_huge_widths_are_bounded(void **state)
{
	const uint32_t w = TRACE_BPRINT_WIDTH_MAX;
	char out[64];
	int n;

	(void)state;
	encode("%u", 7u);
	n = trace_bprint_format(out, sizeof(out), "%98765432109u|", args, nargs);
	assert_int_equal(n, (int)w + 1);
	n = trace_bprint_format(out, sizeof(out), "%.98765432109u|", args, nargs);
	assert_int_equal(n, (int)w + 1);
	encode("%*d|%-*d|%.*d|", INT_MIN, 1, INT_MAX, 2, INT_MAX, 3);
	n = trace_bprint_format(out, sizeof(out), "%*d|%-*d|%.*d|", args, nargs);
	assert_int_equal(n, 3 * ((int)w + 1));
	assert_int_equal(out[0], '1');	/* INT_MIN: '-', a left-aligned field */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_libc),
		cmocka_unit_test(test_long_string_is_cut),
		cmocka_unit_test(test_damaged_args_never_overread),
		cmocka_unit_test(test_huge_widths_are_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
