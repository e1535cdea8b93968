HOST_TESTS += test_clockwd
test_clockwd_SRCS := tests/host/test_clockwd.c arch/x86/time/clockwd_rule.c arch/x86/time/calib.c lib/format.c
test_clockwd_CFLAGS := -Iarch/x86/include
