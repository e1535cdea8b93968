# The persistent range's validator and the non-consuming ring walk, fed
# ranges written by real ring buffers and then damaged.
HOST_TESTS += test_persist
test_persist_SRCS := tests/host/test_persist.c trace/persist.c trace/ring_walk.c \
	trace/ring_buffer.c trace/ring_reader.c lib/crc32.c
