/*
 * Host tests of the command line parser (kernel/cmdline.c), built from the
 * kernel's own source under ASan and UBSan.
 *
 * The options below are registered exactly as the kernel registers its
 * own, with CMDLINE_OPTION() into the "cmdline_opts" section; on the host
 * GNU ld provides __start_/__stop_cmdline_opts. GCC's AddressSanitizer
 * leaves globals with an explicit section unpadded, so the section is still
 * a plain array: test_section_is_an_array checks that before anything else
 * relies on it.
 *
 * The contract under test: every problem produces exactly one report line
 * naming the option and the value, the return value counts the problems,
 * and a rejected value leaves the variable as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/cmdline.h"

/* ---- options of every type ------------------------------------------------ */

static bool t_flag;
static uint64_t t_uint;
static uint64_t t_ufull;
static int64_t t_int;
static int64_t t_ifull;
static int t_enum;
static char t_list[16];
static char t_anylist[32];
static char t_str[32];
static char t_big[300];

static const char *const enum_choices[] = { "tsc", "hpet", "pit", NULL };
static const char *const list_choices[] = { "a", "bb", "ccc", NULL };

CMDLINE_OPTION(tflag, .name = "tflag", .type = OPT_FLAG, .var = &t_flag,
	       .help = "a flag");
CMDLINE_OPTION(tuint, .name = "tuint", .type = OPT_UINT, .var = &t_uint,
	       .min = 1, .max = 1000, .help = "1..1000");
CMDLINE_OPTION(tufull, .name = "tufull", .type = OPT_UINT, .var = &t_ufull,
	       .min = 0, .max = UINT64_MAX, .help = "any u64");
CMDLINE_OPTION(tint, .name = "tint", .type = OPT_INT, .var = &t_int,
	       .min = (uint64_t)-100, .max = 100, .help = "-100..100");
CMDLINE_OPTION(tifull, .name = "tifull", .type = OPT_INT, .var = &t_ifull,
	       .min = (uint64_t)INT64_MIN, .max = INT64_MAX, .help = "any s64");
CMDLINE_OPTION(tenum, .name = "tenum", .type = OPT_ENUM, .var = &t_enum,
	       .choices = enum_choices, .help = "a clock");
CMDLINE_OPTION(tlist, .name = "tlist", .type = OPT_LIST, .var = t_list,
	       .size = sizeof(t_list), .choices = list_choices, .help = "items");
CMDLINE_OPTION(tanylist, .name = "tanylist", .type = OPT_LIST, .var = t_anylist,
	       .size = sizeof(t_anylist), .help = "free items");
CMDLINE_OPTION(tstr, .name = "tstr", .type = OPT_STRING, .var = t_str,
	       .size = sizeof(t_str), .help = "text");
CMDLINE_OPTION(tbig, .name = "tbig", .type = OPT_STRING, .var = t_big,
	       .size = sizeof(t_big), .help = "long text");

/* A string with a syntax of its own: digits only. */
static char t_digits[16];
static bool digits_only(const char *v, char *why, size_t cap)
{
	for (; *v; v++)
		if (*v < '0' || *v > '9') {
			snprintf(why, cap, "'%c' is not a digit; accepted: digits", *v);
			return false;
		}
	return true;
}
CMDLINE_OPTION(tdigits, .name = "tdigits", .type = OPT_STRING, .var = t_digits,
	       .size = sizeof(t_digits), .check = digits_only, .help = "digits");

#define NOPTS	11

extern const struct cmdline_opt __start_cmdline_opts[];
extern const struct cmdline_opt __stop_cmdline_opts[];

/* ---- report capture ------------------------------------------------------- */

#define MSGS_MAX	16
#define MSG_LEN		512

static char msgs[MSGS_MAX][MSG_LEN];
static int nmsgs;

static void report(const char *msg)
{
	size_t len = strlen(msg);

	assert_true(len < MSG_LEN);
	if (nmsgs < MSGS_MAX)
		memcpy(msgs[nmsgs], msg, len + 1);
	nmsgs++;
}

static int reset(void **state)
{
	(void)state;
	t_flag = false;
	t_uint = 7;
	t_ufull = 7;
	t_int = 7;
	t_ifull = 7;
	t_enum = 0;
	strcpy(t_list, "a");
	strcpy(t_anylist, "x");
	strcpy(t_str, "default");
	strcpy(t_big, "default");
	strcpy(t_digits, "0");
	nmsgs = 0;
	return 0;
}

static int parse(const char *line)
{
	nmsgs = 0;
	return cmdline_parse(line, report);
}

/* line is accepted: no problem, no message. */
#define ACCEPT(line)							\
	do {								\
		int n_ = parse(line);					\
		if (n_ != 0 || nmsgs != 0)				\
			fail_msg("'%s': %d problems, first message: %s",	\
				 (line), n_, nmsgs ? msgs[0] : "none");	\
	} while (0)

/*
 * line has exactly one problem: one message that contains every given
 * fragment (the option and value at least), and the parse says 1.
 */
static void reject_one(const char *line, const char *const *frags)
{
	int n = parse(line);

	if (n != 1 || nmsgs != 1)
		fail_msg("'%s': %d problems and %d messages, want 1 and 1%s%s",
			 line, n, nmsgs, nmsgs ? ": " : "", nmsgs ? msgs[0] : "");
	for (; *frags; frags++)
		if (!strstr(msgs[0], *frags))
			fail_msg("'%s': message \"%s\" lacks \"%s\"", line, msgs[0], *frags);
}
#define REJECT(line, ...) reject_one(line, (const char *const[]){ __VA_ARGS__, NULL })

/* ---- tests ----------------------------------------------------------------- */

/* Under ASan the section must still hold exactly our options, contiguous. */
static void test_section_is_an_array(void **state)
{
	static const char *const names[NOPTS] = {
		"tflag", "tuint", "tufull", "tint", "tifull", "tenum", "tlist",
		"tanylist", "tstr", "tbig", "tdigits",
	};

	(void)state;
	assert_int_equal(__stop_cmdline_opts - __start_cmdline_opts, NOPTS);
	assert_int_equal((char *)__stop_cmdline_opts - (char *)__start_cmdline_opts,
			 NOPTS * sizeof(struct cmdline_opt));
	for (int i = 0; i < NOPTS; i++) {
		bool found = false;
		for (const struct cmdline_opt *o = __start_cmdline_opts;
		     o < __stop_cmdline_opts; o++)
			found |= !strcmp(o->name, names[i]);
		if (!found)
			fail_msg("option %s not in the section", names[i]);
	}
}

static void test_flag(void **state)
{
	static const char *const yes[] = { "tflag", "tflag=yes", "tflag=on", "tflag=1",
					   "tflag=true" };
	static const char *const no[] = { "tflag=no", "tflag=off", "tflag=0", "tflag=false" };

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		t_flag = false;
		ACCEPT(yes[i]);
		if (!t_flag)
			fail_msg("'%s' did not set the flag", yes[i]);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		t_flag = true;
		ACCEPT(no[i]);
		if (t_flag)
			fail_msg("'%s' did not clear the flag", no[i]);
	}
	/* The last occurrence wins. */
	ACCEPT("tflag tflag=off");
	assert_false(t_flag);

	t_flag = true;
	REJECT("tflag=maybe", "tflag=maybe", "yes|no");
	assert_true(t_flag);
	t_flag = false;
	REJECT("tflag=YES", "tflag=YES");	/* values are case-sensitive */
	assert_false(t_flag);
	REJECT("tflag=", "tflag=");
	assert_false(t_flag);
}

static void test_uint(void **state)
{
	(void)state;
	ACCEPT("tuint=42");
	assert_int_equal(t_uint, 42);
	ACCEPT("tuint=0x10");
	assert_int_equal(t_uint, 16);
	ACCEPT("tuint=0X3e8");
	assert_int_equal(t_uint, 1000);	/* max is inclusive */
	ACCEPT("tuint=1");
	assert_int_equal(t_uint, 1);	/* min is inclusive */
	ACCEPT("tuint=0x00000000000000000000000000000000000000000000000000000000000001ff");
	assert_int_equal(t_uint, 511);	/* leading zeros never overflow */

	t_uint = 7;
	REJECT("tuint=1001", "tuint=1001", "out of range", "1..1000");
	REJECT("tuint=0", "tuint=0", "out of range");
	REJECT("tuint=0x3e9", "tuint=0x3e9", "out of range");
	REJECT("tuint=-5", "tuint=-5", "out of range", "1..1000");	/* a number, below 0 */
	REJECT("tuint=-x", "tuint=-x", "not a number");
	REJECT("tuint=", "tuint=", "number is required");
	REJECT("tuint", "tuint", "number is required");
	REJECT("tuint=abc", "tuint=abc", "not a number");
	REJECT("tuint=12abc", "tuint=12abc", "not a number");
	REJECT("tuint=0x", "tuint=0x", "not a number");
	REJECT("tuint=0xfg", "tuint=0xfg", "not a number");
	/* A space ends the token: "tuint=" and an unknown "5". */
	assert_int_equal(parse("tuint= 5"), 2);
	assert_non_null(strstr(msgs[0], "tuint="));
	assert_non_null(strstr(msgs[1], "'5'"));
	assert_int_equal(t_uint, 7);
	REJECT("tuint=+5", "tuint=+5");
	REJECT("tuint=1e3", "tuint=1e3");
	assert_int_equal(t_uint, 7);

	ACCEPT("tufull=18446744073709551615");
	assert_true(t_ufull == UINT64_MAX);
	ACCEPT("tufull=0xffffffffffffffff");
	assert_true(t_ufull == UINT64_MAX);
	ACCEPT("tufull=0");
	assert_int_equal(t_ufull, 0);
	t_ufull = 7;
	REJECT("tufull=18446744073709551616", "tufull=18446744073709551616", "not a number");
	REJECT("tufull=0x10000000000000000", "tufull=0x10000000000000000");
	REJECT("tufull=99999999999999999999999", "tufull=99999999999999999999999");
	assert_int_equal(t_ufull, 7);
}

static void test_int(void **state)
{
	(void)state;
	ACCEPT("tint=-100");
	assert_int_equal(t_int, -100);
	ACCEPT("tint=100");
	assert_int_equal(t_int, 100);
	ACCEPT("tint=-0x10");
	assert_int_equal(t_int, -16);
	ACCEPT("tint=-0");
	assert_int_equal(t_int, 0);

	t_int = 7;
	REJECT("tint=-101", "tint=-101", "out of range", "-100..100");
	REJECT("tint=101", "tint=101", "out of range");
	REJECT("tint=-", "tint=-", "not a number");
	REJECT("tint=--1", "tint=--1");
	REJECT("tint=", "tint=");
	REJECT("tint=-9223372036854775809", "tint=-9223372036854775809", "out of range");
	assert_int_equal(t_int, 7);

	/* The whole int64_t range, both ends included. */
	ACCEPT("tifull=9223372036854775807");
	assert_true(t_ifull == INT64_MAX);
	ACCEPT("tifull=-9223372036854775807");
	assert_true(t_ifull == -INT64_MAX);
	ACCEPT("tifull=-9223372036854775808");
	assert_true(t_ifull == INT64_MIN);
	ACCEPT("tifull=-0x8000000000000000");
	assert_true(t_ifull == INT64_MIN);
	t_ifull = 7;
	REJECT("tifull=9223372036854775808", "tifull=9223372036854775808", "out of range");
	REJECT("tifull=-9223372036854775809", "tifull=-9223372036854775809");
	REJECT("tifull=-18446744073709551615", "tifull=-18446744073709551615");
	assert_int_equal(t_ifull, 7);
}

static void test_enum(void **state)
{
	(void)state;
	ACCEPT("tenum=hpet");
	assert_int_equal(t_enum, 1);
	ACCEPT("tenum=pit");
	assert_int_equal(t_enum, 2);
	ACCEPT("tenum=tsc");
	assert_int_equal(t_enum, 0);

	t_enum = 2;
	REJECT("tenum=hpe", "tenum=hpe", "tsc|hpet|pit");	/* no prefix match */
	REJECT("tenum=hpetx", "tenum=hpetx", "tsc|hpet|pit");
	REJECT("tenum=TSC", "tenum=TSC");
	REJECT("tenum", "tenum", "tsc|hpet|pit");
	REJECT("tenum=", "tenum=", "tsc|hpet|pit");
	assert_int_equal(t_enum, 2);
}

static void test_list(void **state)
{
	(void)state;
	ACCEPT("tlist=a,ccc");
	assert_string_equal(t_list, "a,ccc");
	ACCEPT("tlist=bb");
	assert_string_equal(t_list, "bb");
	ACCEPT("tlist=ccc,bb,a,a,bb");	/* 15 characters: the most that fits */
	assert_string_equal(t_list, "ccc,bb,a,a,bb");

	/* An unknown item is named (one message, one problem) and left out; the rest applies. */
	REJECT("tlist=a,zz,bb", "tlist=a,zz,bb", "'zz' is not known", "a|bb|ccc",
	       "left out: using tlist=a,bb");
	assert_string_equal(t_list, "a,bb");
	REJECT("tlist=zz,ccc,yy", "'zz' (and more) is not known", "using tlist=ccc");
	assert_string_equal(t_list, "ccc");
	REJECT("tlist=a,b", "tlist=a,b", "'b'", "using tlist=a");	/* no prefix match */
	assert_string_equal(t_list, "a");
	REJECT("tlist=a,,bb", "tlist=a,,bb", "'' is not known", "using tlist=a,bb");
	REJECT("tlist=bb,", "'' is not known", "using tlist=bb");	/* nor an empty item */
	assert_string_equal(t_list, "bb");
	/* No known item at all: refused whole, unchanged. */
	REJECT("tlist=cccc", "tlist=cccc", "'cccc'", "left unchanged");
	REJECT("tlist=zz,,yy", "'zz' (and more)", "left unchanged");
	REJECT("tlist=a,bb,ccc,a,bb,ccc", "tlist=a,bb,ccc,a,bb,ccc", "longer than 15");
	REJECT("tlist=", "tlist=", "value is required");
	REJECT("tlist", "tlist");
	assert_string_equal(t_list, "bb");

	/* A list without choices takes any items. */
	ACCEPT("tanylist=foo,bar,baz");
	assert_string_equal(t_anylist, "foo,bar,baz");
	assert_true(cmdline_list_has(t_anylist, "bar"));
}

static void test_string(void **state)
{
	char longval[64];

	(void)state;
	ACCEPT("tstr=hello");
	assert_string_equal(t_str, "hello");
	ACCEPT("tstr=\"a b\"");
	assert_string_equal(t_str, "a b");
	ACCEPT("tstr=x\"y z\"w");		/* quotes group, and vanish */
	assert_string_equal(t_str, "xy zw");
	ACCEPT("\"tstr=tab\there\"");
	assert_string_equal(t_str, "tab\there");
	ACCEPT("tstr=a=b");			/* only the first '=' splits */
	assert_string_equal(t_str, "a=b");
	ACCEPT("tstr=\"unterminated quote");	/* runs to the end of the line */
	assert_string_equal(t_str, "unterminated quote");
	memset(longval, 'v', 31);
	longval[31] = '\0';
	char line[80];
	snprintf(line, sizeof(line), "tstr=%s", longval);
	ACCEPT(line);				/* 31 characters: the most that fits */
	assert_string_equal(t_str, longval);

	strcpy(t_str, "keep");
	snprintf(line, sizeof(line), "tstr=%sv", longval);
	REJECT(line, line, "longer than 31");
	REJECT("tstr=", "tstr=", "value is required");
	REJECT("tstr=\"\"", "tstr=", "value is required");
	REJECT("tstr", "tstr");
	assert_string_equal(t_str, "keep");

	/* An option's own check: accepted values set it, refused ones say why and keep it. */
	ACCEPT("tdigits=123");
	assert_string_equal(t_digits, "123");
	REJECT("tdigits=12x3", "tdigits=12x3", "'x' is not a digit", "left unchanged");
	assert_string_equal(t_digits, "123");
}

static void test_unknown_keys(void **state)
{
	(void)state;
	REJECT("bogus", "'bogus'", "unknown");
	REJECT("bogus=1", "'bogus'", "unknown");
	REJECT("TFLAG", "'TFLAG'");		/* keys are case-sensitive */
	REJECT("tfla", "'tfla'");		/* no prefix match */
	REJECT("tflagx=1", "'tflagx'");
	REJECT("=5", "''");
	assert_false(t_flag);

	/* The rest of the line still counts. */
	assert_int_equal(parse("a tflag b=2 tuint=9 c"), 3);
	assert_int_equal(nmsgs, 3);
	assert_non_null(strstr(msgs[0], "'a'"));
	assert_non_null(strstr(msgs[1], "'b'"));
	assert_non_null(strstr(msgs[2], "'c'"));
	assert_true(t_flag);
	assert_int_equal(t_uint, 9);
}

/* Tokens are capped at 255 characters: a longer one is reported and skipped. */
static void test_long_tokens(void **state)
{
	char line[1200], want[300];

	(void)state;
	/* 5 + 250 = 255 characters: still fits. */
	memset(want, 'L', 250);
	want[250] = '\0';
	snprintf(line, sizeof(line), "tbig=%s", want);
	ACCEPT(line);
	assert_string_equal(t_big, want);

	/* One more character: reported once, naming the start of the token. */
	strcpy(t_big, "default");
	snprintf(line, sizeof(line), "tbig=%sL", want);
	REJECT(line, "tbig=LLL", "longer than 255");
	assert_string_equal(t_big, "default");

	/* Far longer, in the middle of a line whose other options still apply. */
	char *p = line;
	p += sprintf(p, "tflag ");
	p += sprintf(p, "tstr=");
	memset(p, 'x', 1000);
	p += 1000;
	sprintf(p, "\ttuint=55");
	REJECT(line, "tstr=xxx", "longer than 255");
	assert_true(t_flag);
	assert_int_equal(t_uint, 55);
	assert_string_equal(t_str, "default");

	/* A quoted long token is still one token. */
	p = line;
	p += sprintf(p, "tstr=\"");
	for (int i = 0; i < 150; i++)
		p += sprintf(p, "a ");
	sprintf(p, "\" tuint=66");
	REJECT(line, "tstr=a a", "longer than 255");
	assert_int_equal(t_uint, 66);
}

static void test_whitespace(void **state)
{
	(void)state;
	ACCEPT("");
	ACCEPT("   \t  ");
	assert_int_equal(cmdline_parse(NULL, report), 0);
	assert_int_equal(nmsgs, 0);
	ACCEPT("  tflag\t\ttuint=5   tenum=pit\t\t tstr=x  ");
	assert_true(t_flag);
	assert_int_equal(t_uint, 5);
	assert_int_equal(t_enum, 2);
	assert_string_equal(t_str, "x");
}

/* Several problems in one line: one message each, counted, nothing else moves. */
static void test_many_problems(void **state)
{
	int n;

	(void)state;
	n = parse("tuint=abc tflag=maybe tenum=x tlist=a,q nope tstr=ok tint=-5");
	assert_int_equal(n, 5);
	assert_int_equal(nmsgs, 5);
	assert_non_null(strstr(msgs[0], "tuint=abc"));
	assert_non_null(strstr(msgs[1], "tflag=maybe"));
	assert_non_null(strstr(msgs[2], "tenum=x"));
	assert_non_null(strstr(msgs[3], "tlist=a,q"));
	assert_non_null(strstr(msgs[4], "'nope'"));
	for (int i = 0; i < 5; i++)
		assert_non_null(strstr(msgs[i], "cmdline: "));
	assert_int_equal(t_uint, 7);
	assert_false(t_flag);
	assert_int_equal(t_enum, 0);
	assert_string_equal(t_list, "a");
	assert_string_equal(t_str, "ok");
	assert_int_equal(t_int, -5);
}

static void test_list_has(void **state)
{
	(void)state;
	assert_true(cmdline_list_has("a,bb,ccc", "a"));
	assert_true(cmdline_list_has("a,bb,ccc", "bb"));
	assert_true(cmdline_list_has("a,bb,ccc", "ccc"));
	assert_true(cmdline_list_has("solo", "solo"));
	assert_false(cmdline_list_has("a,bb,ccc", "b"));
	assert_false(cmdline_list_has("a,bb,ccc", "bbb"));
	assert_false(cmdline_list_has("a,bb,ccc", "cc"));
	assert_false(cmdline_list_has("a,bb,ccc", "a,bb"));
	assert_false(cmdline_list_has("abc", "ab"));
	assert_false(cmdline_list_has("", "a"));
	assert_false(cmdline_list_has(NULL, "a"));
	assert_true(cmdline_list_has("x,,y", "y"));
}

/* Sizes for options that parse their own value (trace.persist=ADDR,SIZE). */
static void test_parse_size(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_true(cmdline_parse_size("0x4000000,16M", 9, &v));
	assert_int_equal(v, 0x4000000);
	assert_true(cmdline_parse_size("16M", 3, &v));
	assert_int_equal(v, 16ull << 20);
	assert_true(cmdline_parse_size("256K", 4, &v));
	assert_int_equal(v, 256ull << 10);
	assert_true(cmdline_parse_size("2G", 2, &v));
	assert_int_equal(v, 2ull << 30);
	assert_true(cmdline_parse_size("4096", 4, &v));
	assert_int_equal(v, 4096);
	v = 7;
	assert_false(cmdline_parse_size("", 0, &v));
	assert_false(cmdline_parse_size("M", 1, &v));
	assert_false(cmdline_parse_size("0x", 2, &v));
	assert_false(cmdline_parse_size("12T", 3, &v));
	assert_false(cmdline_parse_size("1a", 2, &v));
	assert_false(cmdline_parse_size("0x400000000000G", 15, &v));	/* overflows */
	assert_int_equal(v, 7);		/* untouched on failure */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_section_is_an_array, reset),
		cmocka_unit_test_setup(test_flag, reset),
		cmocka_unit_test_setup(test_uint, reset),
		cmocka_unit_test_setup(test_int, reset),
		cmocka_unit_test_setup(test_enum, reset),
		cmocka_unit_test_setup(test_list, reset),
		cmocka_unit_test_setup(test_string, reset),
		cmocka_unit_test_setup(test_unknown_keys, reset),
		cmocka_unit_test_setup(test_long_tokens, reset),
		cmocka_unit_test_setup(test_whitespace, reset),
		cmocka_unit_test_setup(test_many_problems, reset),
		cmocka_unit_test_setup(test_list_has, reset),
		cmocka_unit_test(test_parse_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
