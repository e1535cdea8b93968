/*
 * Host tests of the kernel formatter (lib/format.c), built from the
 * kernel's own source under ASan and UBSan.
 *
 * The reference is glibc's snprintf: every conversion kprintf claims to
 * support must print byte for byte what glibc prints, and return the same
 * length. Two documented differences are tested on their own instead:
 *	- %p of NULL: glibc prints "(nil)", kprintf prints "0" (the number
 *	  zero; '#' never prefixes a zero, so there is no "0x");
 *	- %.Ns of NULL with N < 6: glibc prints nothing, kprintf prints the
 *	  first N characters of "(null)".
 *
 * Truncation is checked at every buffer size 0..len+1 with heap buffers of
 * exactly that size, so ASan catches a single byte written past the end.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

#include "lib/format.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define OUT_MAX		512

static unsigned long compared;	/* formats checked against glibc */

/*
 * ksnprintf into an exact-size heap buffer of every size from 0 to
 * want_len + 1 (and a NULL buffer for size 0): the return value is the
 * full length, the buffer holds the longest prefix that fits plus a NUL,
 * and nothing is written past size (ASan).
 */
static void check_truncation(const char *where, const char *want, int want_len,
			     const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = kvsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n != want_len)
		fail_msg("%s: fmt \"%s\" size 0 NULL buffer returned %d, want %d",
			 where, fmt, n, want_len);

	for (size_t size = 0; size <= (size_t)want_len + 1; size++) {
		char *buf = malloc(size ? size : 1);
		size_t keep = size ? ((size_t)want_len < size - 1 ? (size_t)want_len : size - 1) : 0;

		assert_non_null(buf);
		if (size)
			memset(buf, 0x5a, size);
		else
			buf[0] = 0x5a;	/* a size-0 call must not touch this byte */
		va_copy(aq, ap);
		/* With size 0 hand over a 0-byte view: a write is an ASan report. */
		n = kvsnprintf(size ? buf : buf + 1, size, fmt, aq);
		va_end(aq);
		if (n != want_len)
			fail_msg("%s: fmt \"%s\" size %zu returned %d, want %d",
				 where, fmt, size, n, want_len);
		if (size == 0) {
			if (buf[0] != 0x5a)
				fail_msg("%s: fmt \"%s\" size 0 wrote the buffer", where, fmt);
		} else {
			if (memcmp(buf, want, keep) || buf[keep] != '\0')
				fail_msg("%s: fmt \"%s\" size %zu: got \"%.*s\" (NUL at %zu?), "
					 "want \"%.*s\"", where, fmt, size, (int)keep, buf,
					 keep, (int)keep, want);
		}
		free(buf);
	}
}

/* Compare kvsnprintf with vsnprintf on the same arguments. */
static void vcompare(const char *where, bool truncation, const char *fmt, va_list ap)
{
	char want[OUT_MAX], got[OUT_MAX];
	va_list a1, a2;
	int wn, gn;

	va_copy(a1, ap);
	wn = vsnprintf(want, sizeof(want), fmt, a1);
	va_end(a1);
	va_copy(a2, ap);
	gn = kvsnprintf(got, sizeof(got), fmt, a2);
	va_end(a2);
	assert_true(wn >= 0 && wn < OUT_MAX);	/* the table stays short */
	if (gn != wn || memcmp(got, want, (size_t)wn + 1))
		fail_msg("%s: fmt \"%s\": kprintf \"%s\" (%d), glibc \"%s\" (%d)",
			 where, fmt, got, gn, want, wn);
	compared++;
	if (truncation)
		check_truncation(where, want, wn, fmt, ap);
}

static void compare_at(const char *where, bool truncation, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void compare_at(const char *where, bool truncation, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcompare(where, truncation, fmt, ap);
	va_end(ap);
}

#define STR_(x) #x
#define STR(x) STR_(x)
/* Checked against glibc, with truncation at every size; gcc checks the types. */
#define CMP(...) compare_at(__FILE__ ":" STR(__LINE__), true, __VA_ARGS__)

/* ksnprintf alone, against a literal expectation, with truncation. */
static void expect_at(const char *where, const char *want, const char *fmt, ...)
{
	char got[OUT_MAX];
	va_list ap, aq;
	int n;

	va_start(ap, fmt);
	va_copy(aq, ap);
	n = kvsnprintf(got, sizeof(got), fmt, aq);
	va_end(aq);
	if (n != (int)strlen(want) || strcmp(got, want))
		fail_msg("%s: fmt \"%s\": kprintf \"%s\" (%d), want \"%s\"",
			 where, fmt, got, n, want);
	check_truncation(where, want, n, fmt, ap);
	va_end(ap);
}
#define EXPECT(want, ...) expect_at(__FILE__ ":" STR(__LINE__), want, __VA_ARGS__)

/* Hand-picked cases, each with every truncation size. */
static void test_integers_table(void **state)
{
	(void)state;
	CMP("%d", 0);
	CMP("%d", 42);
	CMP("%d", -42);
	CMP("%i", INT_MAX);
	CMP("%i", INT_MIN);
	CMP("%u", 0u);
	CMP("%u", UINT_MAX);
	CMP("%x", 0xdeadbeefu);
	CMP("%X", 0xdeadbeefu);
	CMP("%o", 8u);
	CMP("%o", 0u);
	CMP("%lld", (long long)INT64_MIN);
	CMP("%lld", (long long)INT64_MAX);
	CMP("%llu", (unsigned long long)UINT64_MAX);
	CMP("%llx", (unsigned long long)UINT64_MAX);
	CMP("%#llo", (unsigned long long)UINT64_MAX);
	CMP("%ld", (long)INT64_MIN);
	CMP("%lu", (unsigned long)UINT64_MAX);
	CMP("%jd", (intmax_t)INT64_MIN);
	CMP("%ju", (uintmax_t)UINT64_MAX);
	CMP("%zu", (size_t)SIZE_MAX);
	CMP("%zx", (size_t)0x1234);
	CMP("%td", (ptrdiff_t)-5);
	CMP("%hhd", 200);		/* wraps to -56 */
	CMP("%hhu", 0x1ff);		/* wraps to 255 */
	CMP("%hhx", -1);
	CMP("%hd", 40000);		/* wraps to -25536 */
	CMP("%hu", -1);
	CMP("%hx", 0x12345);
	CMP("%.0d", 0);		/* no digits at all */
	CMP("%.0u", 0u);
	CMP("%.0x", 0u);
	CMP("%5.0d", 0);
	CMP("%-5.0d|", 0);
	CMP("%+.0d", 0);
	CMP("% .0d", 0);
	CMP("%#.0x", 0u);
	CMP("%#.0o", 0u);
	CMP("%#5.0o", 0u);
	CMP("%.0d", 7);
	CMP("%+d", 5);
	CMP("%+d", -5);
	CMP("% d", 5);
	CMP("% d", -5);
	CMP("%05d", -42);
	CMP("%+08d", 1234);
	CMP("% 08d", 1234);
	CMP("%.10d", -12345);
	CMP("%20.15lld", (long long)INT64_MIN);
	CMP("%#x", 0u);		/* no 0x on zero */
	CMP("%#x", 255u);
	CMP("%#X", 255u);
	CMP("%#010x", 255u);
	CMP("%#-10x|", 255u);
	CMP("%#.6x", 255u);
	CMP("%#10.6X", 255u);
	CMP("%#o", 8u);
	CMP("%#.3o", 8u);
	CMP("%#.2o", 8u);
	CMP("%#08o", 8u);
	CMP("%#-8o|", 8u);
	CMP("%#o", 0u);
	CMP("%#08o", 0u);
	CMP("%3d", 123456);		/* width never truncates */
	CMP("%1d", -1);
	CMP("[%*d]", 6, 42);
	CMP("[%*d]", -6, 42);	/* negative '*' width means '-' */
	CMP("[%-*d]", -6, 42);
	CMP("[%.*d]", 4, 42);
	CMP("[%.*d]", -4, 42);	/* negative '*' precision: as if none */
	CMP("[%*.*d]", 8, 5, 42);
	CMP("[%*.*x]", -8, 0, 0u);
	CMP("%d %u %x %o %c %s %%", -1, 1u, 0xabu, 9u, 'q', "str");
	CMP("%llu%lld%lx", (unsigned long long)1, (long long)-2, (unsigned long)3);
}

/*
 * Flags that C defines as overridden by others; gcc warns that they are
 * ignored, which is the very behaviour checked here.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
static void test_overridden_flags(void **state)
{
	(void)state;
	CMP("%+ d", 5);		/* '+' wins over ' ' */
	CMP("%-05d|", -42);		/* '-' wins over '0' */
	CMP("%05.3d", 7);		/* precision disables '0' */
	CMP("%08.3d", -1);
	CMP("[%0.*d]", -1, 42);
	CMP("[%0*.*d]", 8, -1, -42);	/* then '0' applies again */
	CMP("%-#010x|", 255u);
	CMP("%0-8o|", 8u);
	CMP("%+ 5d", -3);
	CMP("%08.0d|", 0);
}
#pragma GCC diagnostic pop

static void test_chars_strings_table(void **state)
{
	(void)state;
	CMP("%c", 'a');
	CMP("%5c|", 'a');
	CMP("%-5c|", 'a');
	CMP("[%*c]", -3, 'z');
	CMP("%c%c%c", 'x', 'y', 'z');
	CMP("a%cb", 0);		/* an embedded NUL counts and is written */
	CMP("%s", "");
	CMP("%s", "hello");
	CMP("%10s|", "hello");
	CMP("%-10s|", "hello");
	CMP("%.3s|", "hello");
	CMP("%.0s|", "hello");
	CMP("%10.3s|", "hello");
	CMP("%-10.3s|", "hello");
	CMP("%.10s|", "hi");
	CMP("[%*s]", 7, "ab");
	CMP("[%*s]", -7, "ab");
	CMP("[%.*s]", 2, "abcdef");
	CMP("[%.*s]", -1, "abcdef");
	CMP("[%*.*s]", -6, 3, "abcdef");
	CMP("%%");
	CMP("100%%");
	CMP("%%d%%");
	CMP("%s=%d", "key", 1);
	CMP("no conversions at all");
	CMP("%s", "a fairly long string, long enough to cross a few buffer sizes");
	CMP("%p", (void *)0x1234);
	CMP("%p", (void *)(uintptr_t)0xffff800000001000ull);
	CMP("%20p|", (void *)0xabcdef);
	CMP("%-20p|", (void *)0xabcdef);
}

static void test_null_string(void **state)
{
	const char *volatile null = NULL;	/* hide it from -Wformat-overflow */

	(void)state;
	/* The same as glibc while the precision lets all of "(null)" show. */
	CMP("%s", null);
	CMP("%10s|", null);
	CMP("%-10s|", null);
	CMP("%.6s", null);
	CMP("%.8s", null);
	/* Difference: glibc prints nothing below precision 6, kprintf a prefix. */
	char glibc[16];
	snprintf(glibc, sizeof(glibc), "[%.3s]", null);
	assert_string_equal(glibc, "[]");	/* why these are not compared */
	EXPECT("(nu", "%.3s", null);
	EXPECT("   (n|", "%5.2s|", null);
}

static void test_pointer_null(void **state)
{
	char glibc[16];

	(void)state;
	snprintf(glibc, sizeof(glibc), "%p", (void *)NULL);
	assert_string_equal(glibc, "(nil)");	/* why it is not compared */
	EXPECT("0", "%p", (void *)NULL);
	EXPECT("    0|", "%5p|", (void *)NULL);
	EXPECT("0    |", "%-5p|", (void *)NULL);
	/* kprintf's %p is always hex with 0x and never pads with zeros. */
	EXPECT("0x1", "%p", (void *)1);
	EXPECT("0xffffffffffffffff", "%p", (void *)UINTPTR_MAX);
}

/*
 * What kprintf does with what C leaves undefined, so that a change shows:
 * a lone '%' at the end prints nothing, an unknown conversion prints
 * itself so the bug is visible in the output.
 */
static void test_kernel_specific(void **state)
{
	char buf[32];
	const char *volatile fmt_lone = "abc%";
	const char *volatile fmt_unknown = "x%qy";
	const char *volatile fmt_unknown_l = "%ly";

	(void)state;
	/* Through a volatile pointer: gcc rightly rejects these as literals. */
	assert_int_equal(ksnprintf(buf, sizeof(buf), fmt_lone), 3);
	assert_string_equal(buf, "abc");
	assert_int_equal(ksnprintf(buf, sizeof(buf), fmt_unknown), 4);
	assert_string_equal(buf, "x%qy");
	assert_int_equal(ksnprintf(buf, sizeof(buf), fmt_unknown_l), 2);
	assert_string_equal(buf, "%y");
	/* Size 1: only the NUL fits. */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(ksnprintf(buf, 1, "%s", "hello"), 5);
	assert_int_equal(buf[0], '\0');
	assert_int_equal(buf[1], 'x');
}

/* One value under every length modifier, with its conversion. */
static void compare_lmod(const char *fmt, const char *lmod, char conv, uint64_t v)
{
	bool sgn = conv == 'd' || conv == 'i';

	/* The types differ per modifier, so each call is spelled out. */
	if (!strcmp(lmod, "") || !strcmp(lmod, "hh") || !strcmp(lmod, "h")) {
		if (sgn)
			compare_at("lmod", false, fmt, (int)(int64_t)v);
		else
			compare_at("lmod", false, fmt, (unsigned)v);
	} else if (!strcmp(lmod, "l")) {
		if (sgn)
			compare_at("lmod", false, fmt, (long)v);
		else
			compare_at("lmod", false, fmt, (unsigned long)v);
	} else if (!strcmp(lmod, "ll")) {
		if (sgn)
			compare_at("lmod", false, fmt, (long long)v);
		else
			compare_at("lmod", false, fmt, (unsigned long long)v);
	} else if (!strcmp(lmod, "z")) {
		if (sgn)
			compare_at("lmod", false, fmt, (ssize_t)v);
		else
			compare_at("lmod", false, fmt, (size_t)v);
	} else if (!strcmp(lmod, "j")) {
		if (sgn)
			compare_at("lmod", false, fmt, (intmax_t)v);
		else
			compare_at("lmod", false, fmt, (uintmax_t)v);
	} else if (!strcmp(lmod, "t")) {
		compare_at("lmod", false, fmt, (ptrdiff_t)v);
	} else {
		fail_msg("bad lmod %s", lmod);
	}
}

/*
 * Every combination of flags (all 32 subsets of "-0+ #"), width, precision,
 * length modifier and integer conversion over edge values. C leaves '#'
 * with d/i/u undefined; glibc ignores it and so must kprintf.
 */
static void test_integer_sweep(void **state)
{
	static const char flagset[] = "-0+ #";
	static const char *const widths[] = { "", "1", "5", "24" };
	static const char *const precs[] = { "", ".", ".0", ".1", ".4", ".23" };
	static const char *const lmods[] = { "", "hh", "h", "l", "ll", "z", "j", "t" };
	static const char convs[] = "diuxXo";
	static const uint64_t values[] = {
		0, 1, 7, 8, 9, 10, 15, 16, 127, 128, 255, 256, 32767, 32768, 65535,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
		(uint64_t)INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX,
		(uint64_t)-1, (uint64_t)-2, (uint64_t)-128, (uint64_t)-129,
		(uint64_t)-32768, 01234567, 0x123456789abcdefull,
	};
	unsigned long before = compared;

	(void)state;
	for (unsigned f = 0; f < 32; f++) {
		for (unsigned w = 0; w < ARRAY_SIZE(widths); w++) {
			for (unsigned p = 0; p < ARRAY_SIZE(precs); p++) {
				for (unsigned l = 0; l < ARRAY_SIZE(lmods); l++) {
					for (unsigned c = 0; convs[c]; c++) {
						char fmt[40];
						int n = 0;

						fmt[n++] = '[';
						fmt[n++] = '%';
						for (unsigned b = 0; b < 5; b++)
							if (f & (1u << b))
								fmt[n++] = flagset[b];
						snprintf(fmt + n, sizeof(fmt) - n, "%s%s%s%c]",
							 widths[w], precs[p], lmods[l], convs[c]);
						if (lmods[l][0] == 't' && convs[c] != 'd' && convs[c] != 'i')
							continue;	/* no unsigned ptrdiff_t type */
						for (unsigned v = 0; v < ARRAY_SIZE(values); v++)
							compare_lmod(fmt, lmods[l], convs[c], values[v]);
					}
				}
			}
		}
	}
	assert_true(compared - before > 100000);	/* the sweep really ran */
}

/* Strings and characters under every flag subset, width and precision. */
static void test_string_sweep(void **state)
{
	static const char *const widths[] = { "", "1", "3", "12" };
	static const char *const precs[] = { "", ".", ".0", ".2", ".5", ".30" };
	static const char *const strs[] = { "", "a", "abc", "hello world", "tab\there" };
	static const char flagset[] = "-0+ #";

	(void)state;
	for (unsigned f = 0; f < 32; f++) {
		/* '0' '+' ' ' '#' are undefined for s and c: only '-' here. */
		if (f & ~1u)
			continue;
		for (unsigned w = 0; w < ARRAY_SIZE(widths); w++) {
			for (unsigned p = 0; p < ARRAY_SIZE(precs); p++) {
				char fmt[32];
				int n = 0;

				fmt[n++] = '<';
				fmt[n++] = '%';
				for (unsigned b = 0; b < 5; b++)
					if (f & (1u << b))
						fmt[n++] = flagset[b];
				snprintf(fmt + n, sizeof(fmt) - n, "%s%ss>", widths[w], precs[p]);
				for (unsigned s = 0; s < ARRAY_SIZE(strs); s++)
					compare_at("string sweep", true, fmt, strs[s]);
				if (!precs[p][0]) {
					snprintf(fmt + n, sizeof(fmt) - n, "%sc>", widths[w]);
					compare_at("char sweep", true, fmt, 'Q');
				}
			}
		}
	}
}

/* Many conversions in one format, so the argument walk stays in step. */
static void test_argument_order(void **state)
{
	(void)state;
	CMP("%hhd %hd %d %ld %lld %zd %jd %td|%c|%s|%p",
	    -1, -2, -3, -4L, -5LL, (ssize_t)-6, (intmax_t)-7, (ptrdiff_t)-8, 'c', "s",
	    (void *)0x10);
	CMP("%*.*d %-*s %0*llx", 9, 4, 77, 6, "ab", 12, 0xabcULL);
	CMP("%u%u%u%u%u%u%u%u%u%u", 0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_integers_table),
		cmocka_unit_test(test_overridden_flags),
		cmocka_unit_test(test_chars_strings_table),
		cmocka_unit_test(test_null_string),
		cmocka_unit_test(test_pointer_null),
		cmocka_unit_test(test_kernel_specific),
		cmocka_unit_test(test_integer_sweep),
		cmocka_unit_test(test_string_sweep),
		cmocka_unit_test(test_argument_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
