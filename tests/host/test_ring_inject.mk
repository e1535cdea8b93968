# Interrupts, nested interrupts and remote readers injected at every point
# of the ring buffer (tests/host/test_ring_inject.c).  `make test` runs every
# single injection and one in 53 nested or paired plans (about 870,000
# scenarios, 8 s of CPU); `make test-ring-explore` runs every plan, split
# over EXPLORE_JOBS processes, each printing a progress line every 10 s.
HOST_TESTS += test_ring_inject
test_ring_inject_SRCS := tests/host/test_ring_inject.c trace/ring_buffer.c trace/ring_reader.c
test_ring_inject_ARGS := --sample 53
EXPLORE_JOBS ?= 2
.PHONY: test-ring-inject test-ring-explore
test-ring-inject: $(BUILD)/host/test_ring_inject
	$(BUILD)/host/test_ring_inject $(test_ring_inject_ARGS)
test-ring-explore: $(BUILD)/host/test_ring_inject
	@pids=; for i in $$(seq 0 $$(($(EXPLORE_JOBS) - 1))); do \
		$(BUILD)/host/test_ring_inject --all --shard $$i/$(EXPLORE_JOBS) \
			> $(BUILD)/host/test_ring_explore.$$i.log & pids="$$pids $$!"; done; \
	rc=0; for p in $$pids; do wait $$p || rc=1; done; \
	grep -h -e '^inject: all (done)' -e '^FAIL' $(BUILD)/host/test_ring_explore.*.log; exit $$rc
