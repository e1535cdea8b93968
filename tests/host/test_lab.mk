# The lab's shared arithmetic: inject.stall= lists, hwlat's machine-wide merge, percentiles.
HOST_TESTS += test_lab
test_lab_SRCS := tests/host/test_lab.c trace/lab.c lib/format.c
