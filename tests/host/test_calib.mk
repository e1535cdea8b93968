HOST_TESTS += test_calib
test_calib_SRCS := tests/host/test_calib.c trace/calib.c
