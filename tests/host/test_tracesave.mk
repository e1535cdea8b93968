# Saves in TRACE.BIN's data area (drivers/block/tracesave.c) and the one
# write path (tracefile_write()), on a RAM disk that records every write.
HOST_TESTS += test_tracesave
test_tracesave_SRCS := tests/host/test_tracesave.c $(BLOCK_SRCS)
test_tracesave_DEPS := $(BLOCK_KCHECK_OBJS)
