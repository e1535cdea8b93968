# trace_printk's binary arguments, encoded and formatted, against libc.
HOST_TESTS += test_bprint
test_bprint_SRCS := tests/host/test_bprint.c trace/bprint.c lib/format.c
