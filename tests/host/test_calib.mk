HOST_TESTS += test_calib
test_calib_SRCS := tests/host/test_calib.c arch/x86/time/calib.c
test_calib_CFLAGS := -Iarch/x86/include
