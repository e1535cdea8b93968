HOST_TESTS += test_watchdog
test_watchdog_SRCS := tests/host/test_watchdog.c arch/x86/watchdog_rule.c
test_watchdog_CFLAGS := -Iarch/x86/include
