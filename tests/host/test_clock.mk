HOST_TESTS += test_clock
test_clock_SRCS := tests/host/test_clock.c trace/clock.c
test_clock_LIBS := -lpthread
# The latch test races a writer thread against a reader: also under ThreadSanitizer.
TSAN_TESTS += test_clock
