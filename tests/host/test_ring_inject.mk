# Interrupts and a remote reader injected at every labelled ring buffer step.
# `make test` runs a sampled subset; `make test-ring-inject` every combination.
HOST_TESTS += test_ring_inject
test_ring_inject_SRCS := tests/host/test_ring_inject.c trace/ring_buffer.c trace/ring_reader.c
test_ring_inject_ARGS := --sample
.PHONY: test-ring-inject
test-ring-inject: $(BUILD)/host/test_ring_inject
	$(BUILD)/host/test_ring_inject --all
