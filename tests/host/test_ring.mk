HOST_TESTS += test_ring test_ring_stress
test_ring_SRCS := tests/host/test_ring.c trace/ring_buffer.c trace/ring_reader.c
test_ring_stress_SRCS := tests/host/test_ring_stress.c trace/ring_buffer.c trace/ring_reader.c
test_ring_stress_LIBS := -lpthread
test_ring_stress_ARGS := 3
TSAN_TESTS += test_ring_stress
