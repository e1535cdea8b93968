HOST_TESTS += test_watchdog
test_watchdog_SRCS := tests/host/test_watchdog.c kernel/watchdog_rule.c
