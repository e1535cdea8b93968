# Binary dumps, trace text and their decoder.
# dump_sim.c stands in for the kernel's side: real ring buffers on several
# simulated CPUs with their own clocks.
DUMP_CORE_SRCS := trace/dump_write.c $(DUMP_READ_SRCS)
DUMP_SIM_SRCS := tests/host/dump_sim.c trace/dump_rb.c trace/ring_buffer.c \
	trace/ring_reader.c $(DUMP_CORE_SRCS)
HOST_TESTS += test_dump test_dump_damage test_dump_clock test_dump_order
test_dump_SRCS := tests/host/test_dump.c $(DUMP_SIM_SRCS)
test_dump_damage_SRCS := tests/host/test_dump_damage.c $(DUMP_SIM_SRCS)
test_dump_clock_SRCS := tests/host/test_dump_clock.c $(DUMP_SIM_SRCS)
test_dump_order_SRCS := tests/host/test_dump_order.c $(DUMP_SIM_SRCS)

# The capture generator of the tool tests and the fuzzer's seeds.
MKCAPTURE_SRCS := tests/tools/mkcapture.c $(DUMP_SIM_SRCS)
$(eval $(call host_prog,$(BUILD)/tools/mkcapture,$(BUILD)/obj/mkcapture,$(MKCAPTURE_SRCS),\
	$(HOSTCC) $(HOST_CFLAGS) -Itests/host))
# A capture written again in the compact (or plain) encoding: the same buffers both ways.
$(eval $(call host_prog,$(BUILD)/tools/repack,$(BUILD)/obj/repack,\
	tests/tools/repack.c trace/dump_write.c $(DUMP_READ_SRCS),$(HOSTCC) $(HOST_CFLAGS) -Itrace))
# The same, built with extra events of every field kind (a kernel with
# events the decoder has never seen).
$(eval $(call host_prog,$(BUILD)/tools/mkcapture-extra,$(BUILD)/obj/mkcapture-extra,\
	$(MKCAPTURE_SRCS),$(HOSTCC) $(HOST_CFLAGS) -Itests/host -I. \
	-DTRACE_EVENT_LIST_EXTRA='"tests/host/events_extra.h"'))

# The generic dump code must also build as kernel code (freestanding, no
# SSE, the kernel's <arch/trace_arch.h>), even before the kernel links it.
# test_dump is not built before this passes.
DUMP_KCHECK_SRCS := trace/dump_write.c trace/dump_rb.c $(filter trace/%,$(DUMP_READ_SRCS))
DUMP_KCHECK_OBJS := $(patsubst %.c,$(BUILD)/host/kcheck/%.o,$(DUMP_KCHECK_SRCS))
$(BUILD)/host/kcheck/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(call quiet,KCC,$@)
	$(Q)$(CC) $(KCFLAGS) -c $< -o $@
test_dump_DEPS := $(DUMP_KCHECK_OBJS)

# Every bit of every description frame (EVENTS, SYMS, PRINTK) flipped, its
# CRC recomputed: reported or consistent, text and CTF of what was accepted.
# Built with the extra events (every field kind), as mkcapture-extra is.
HOST_TESTS += test_desc_flips
test_desc_flips_SRCS := tests/host/test_desc_flips.c tests/host/desc_check.c tools/ctf.c tools/damage.c \
	$(DUMP_SIM_SRCS)
test_desc_flips_CFLAGS := -Itests/host -Itools -I. \
	-DTRACE_EVENT_LIST_EXTRA='"tests/host/events_extra.h"'
