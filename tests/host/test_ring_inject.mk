# Interrupts and a remote reader injected at every labelled ring buffer step.
# `make test` runs every combination (under a second); `--sample` runs a subset.
HOST_TESTS += test_ring_inject
test_ring_inject_SRCS := tests/host/test_ring_inject.c trace/ring_buffer.c trace/ring_reader.c
test_ring_inject_ARGS := --all	# every combination: under a second
.PHONY: test-ring-inject
test-ring-inject: $(BUILD)/host/test_ring_inject
	$(BUILD)/host/test_ring_inject --all
