# The PIT calibration windows against a model of channel 2 and a stalling TSC.
HOST_TESTS += test_pit
test_pit_SRCS := tests/host/test_pit.c arch/x86/time/pit.c arch/x86/time/calib.c
test_pit_CFLAGS := -Itests/host/pit -Iarch/x86/include
