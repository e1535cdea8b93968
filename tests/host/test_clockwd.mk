HOST_TESTS += test_clockwd
test_clockwd_SRCS := tests/host/test_clockwd.c trace/clockwd.c trace/calib.c lib/format.c
