# baretrace build. `make` builds build/kernel.elf; `make iso` the bootable
# image; `make run` boots it under QEMU; `make test` runs every test.
# All outputs go under build/. Missing Debian packages are installed by
# scripts/deps.sh (or it prints the apt-get command to run).

MAKEFLAGS += -rR --no-print-directory
.SUFFIXES:
.DELETE_ON_ERROR:
SHELL := /bin/bash

CROSS_COMPILE ?=
# Tools: a command-line or environment value wins over these defaults.
tool_default = $(if $(filter default undefined,$(origin $(1))),$(eval $(1) := $(2)))
$(call tool_default,CC,$(CROSS_COMPILE)gcc)
$(call tool_default,LD,$(CROSS_COMPILE)ld)
$(call tool_default,NM,$(CROSS_COMPILE)nm)
$(call tool_default,OBJDUMP,$(CROSS_COMPILE)objdump)
NASM    ?= nasm
HOSTCC  ?= gcc
QEMU    ?= qemu-system-x86_64
PYTHON  ?= /usr/bin/python3
CPUS    ?= 4
CMDLINE ?= run=demo,shell
CFLAGS  ?= -O2 -g

BUILD := build
ifeq ($(V),1)
Q :=
quiet = @true
else
Q := @
quiet = @printf '  %-7s %s\n' $(1) $(2)
endif
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

# ---- kernel -----------------------------------------------------------------
ASM_SRCS := boot/header.asm boot/entry.asm boot/trampoline_blob.asm arch/x86/isr.asm \
	arch/x86/ftrace_entry.asm
ARCH_SRCS := arch/x86/uart.c arch/x86/vga.c arch/x86/percpu.c arch/x86/idt.c \
	arch/x86/traps.c arch/x86/exit.c arch/x86/acpi.c arch/x86/acpi_dump.c arch/x86/acpi_inject.c \
	arch/x86/paging.c \
	arch/x86/time/pit.c arch/x86/time/hpet.c arch/x86/time/pmtimer.c arch/x86/time/tsc.c \
	arch/x86/time/ktests_tsc.c arch/x86/lapic.c arch/x86/smp.c arch/x86/time/tsc_sync.c \
	arch/x86/smp_call.c arch/x86/time/tsc_inject.c arch/x86/time/clockwd.c arch/x86/time/clockwd_rule.c arch/x86/time/calib.c arch/x86/trace_warn.c \
	arch/x86/ktests_smp.c \
	arch/x86/pci.c arch/x86/consoles.c arch/x86/ps2kbd.c arch/x86/ktests_mem.c \
	arch/x86/text_poke.c arch/x86/text_patch.c arch/x86/jump_label.c arch/x86/ktests_jump_label.c arch/x86/ftrace.c \
	arch/x86/watchdog.c arch/x86/watchdog_rule.c arch/x86/smi.c
KERNEL_SRCS := kernel/main.c kernel/console.c kernel/console_input.c kernel/string.c \
	kernel/mb2.c kernel/pmm.c kernel/memory.c kernel/cmdline.c kernel/ktest.c \
	kernel/ksyms.c kernel/jobs.c kernel/ktests_boot.c kernel/shell.c kernel/shell_cmds.c \
	kernel/static_key.c kernel/cpu_hooks.c \
	kernel/fbcon.c kernel/job_echo.c kernel/job_fault.c kernel/job_hang.c kernel/job_marks.c kernel/panic.c kernel/tracer/tracing.c kernel/tracer/ktests_trace.c kernel/tracer/ktests_reconfigure.c kernel/tracer/shell_trace.c kernel/tracer/demo.c kernel/tracer/bench.c kernel/tracer/bench_events.c kernel/tracer/dump.c kernel/tracer/record.c kernel/tracer/record_job.c kernel/tracer/shell_dump.c kernel/tracer/trace_printk.c kernel/tracer/panic_dump.c \
	kernel/tracer/trace_ctl.c kernel/tracer/ktests_events.c kernel/tracer/bench_tracepoint.c \
	kernel/tracer/ftrace/ftrace.c kernel/tracer/ftrace/ftrace_sites.c kernel/tracer/trace_ctx.c kernel/tracer/ftrace/shell_ftrace.c \
	kernel/tracer/ftrace/ktests_ftrace.c kernel/tracer/ftrace/ftrace_work.c kernel/tracer/persist.c \
	kernel/lab/hwlat.c kernel/lab/c2c.c kernel/lab/timerlat.c
DRIVER_SRCS := drivers/block/part.c drivers/block/fat32.c drivers/block/tracefile.c \
	drivers/block/tracesave.c drivers/usb/usb.c drivers/usb/xhci.c drivers/usb/xhci_dev.c drivers/usb/msc.c \
	drivers/usb/stick.c drivers/usb/xhci_intr.c drivers/usb/hid_boot.c \
	drivers/usb/usbkbd.c
TRACE_SRCS := trace/clock.c trace/ring_buffer.c trace/ring_reader.c trace/ring_walk.c \
	trace/persist.c \
	trace/dump_write.c trace/dump_pack.c trace/dump_rb.c trace/text.c trace/text_ftrace.c \
	trace/event_catalog.c trace/event_fmt.c trace/event_select.c trace/bprint.c trace/lab.c
LIB_SRCS := lib/format.c lib/crc32.c

# EVENTS_EXTRA=FILE: a kernel with the events of FILE appended to the event
# list (a build option for tests: make kernel BUILD=build/events-extra
# EVENTS_EXTRA=tests/host/events_extra.h).
EVENTS_EXTRA :=
KEVENTS := $(if $(EVENTS_EXTRA),-I. -DTRACE_EVENT_LIST_EXTRA='"$(EVENTS_EXTRA)"')
override KCFLAGS := -std=gnu11 $(CFLAGS) $(KEVENTS) -Wall -Wextra -Werror \
	-ffreestanding -nostdlib -fno-pic -fno-pie -mno-red-zone \
	-mno-sse -mno-mmx -mno-80387 -fno-stack-protector \
	-fno-omit-frame-pointer -fno-asynchronous-unwind-tables --param=min-pagesize=0 \
	-Iinclude -Iarch/x86/include -MMD -MP
override KLDFLAGS := -n -nostdlib -z max-page-size=0x1000 -z noexecstack --build-id=sha1 -T linker.ld
LIBGCC := $(shell $(CC) -print-libgcc-file-name)

# The benchmark's write loop, once per stamp variant (kernel/tracer/bench_writer.c),
# each with the stamp hooks of kernel/tracer/bench_stamp/arch/trace_arch.h.
BENCH_VARIANTS := rdtsc rdtscp lfence convert
bench_flags_rdtsc := -DTRACE_STAMP=0 -DBENCH_NULL_LOOP=1
bench_flags_rdtscp := -DTRACE_STAMP=1
bench_flags_lfence := -DTRACE_STAMP=2
bench_flags_convert := -DTRACE_STAMP=0 -DTRACE_STAMP_CONVERT=1
BENCH_OBJS := $(foreach v,$(BENCH_VARIANTS),$(BUILD)/kernel/tracer/bench_writer_$(v).o)

KOBJS := $(patsubst %.asm,$(BUILD)/%.o,$(ASM_SRCS)) \
	 $(patsubst %.c,$(BUILD)/%.o,$(ARCH_SRCS) $(KERNEL_SRCS) $(DRIVER_SRCS) $(TRACE_SRCS) $(LIB_SRCS)) \
	 $(BENCH_OBJS) \
	 $(BUILD)/gen/font.o

# The console font comes from a Debian package at build time (not committed);
# tools/psf2c turns it into C. The QEMU framebuffer test reads the same file.
FONT ?= /usr/share/consolefonts/Lat15-VGA16.psf.gz
FONT_PACKAGE := console-setup-linux

.PHONY: all kernel iso usb run test test-host test-tsan test-qemu deps deps-test deps-qemu10 clean help

all: kernel
kernel: $(BUILD)/kernel.elf

# Function tracer call sites (docs/ftrace.md): GCC puts 5 bytes of NOPs at
# the entry of every function and lists their address in
# __patchable_function_entries (-fpatchable-function-entry=5: N=5, M=0); the boot
# makes each the one 5-byte NOP and kernel/tracer/ftrace/ftrace.c patches them into
# calls. Not -pg: it gives every function a frame, leaves included (3
# instructions a call). FTRACE=0 builds a kernel without them (the
# benchmark's reference).
# Code the tracer itself runs on is never traced, as Linux strips
# CC_FLAGS_FTRACE: whole directories (trace/, lib/, kernel/tracer/) and the files
# below; one function elsewhere says `notrace` (<baretrace/compiler.h>).
FTRACE ?= 1
FTRACE_FLAGS := $(if $(filter 1,$(FTRACE)),-fpatchable-function-entry=5)
NOTRACE_SRCS := trace/% lib/% kernel/tracer/% \
	arch/x86/traps.c arch/x86/idt.c arch/x86/percpu.c arch/x86/uart.c arch/x86/vga.c \
	arch/x86/consoles.c arch/x86/text_poke.c arch/x86/text_patch.c arch/x86/jump_label.c \
	arch/x86/ftrace.c \
	arch/x86/lapic.c arch/x86/trace_warn.c arch/x86/exit.c arch/x86/paging.c \
	arch/x86/time/tsc.c arch/x86/time/tsc_inject.c arch/x86/time/calib.c arch/x86/time/clockwd_rule.c \
	arch/x86/ps2kbd.c arch/x86/watchdog.c \
	arch/x86/watchdog_rule.c kernel/console.c kernel/console_input.c kernel/string.c kernel/static_key.c kernel/ksyms.c kernel/fbcon.c \
	kernel/panic.c kernel/cpu_hooks.c
# ... except the workload of the tracer's tests and benchmarks, which exists to be traced.
TRACED_SRCS := kernel/tracer/ftrace/ftrace_work.c
ftrace_flags = $(if $(filter $(TRACED_SRCS),$(1)),$(FTRACE_FLAGS),$(if $(filter $(NOTRACE_SRCS),$(1)),,$(FTRACE_FLAGS)))

$(BUILD)/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(call quiet,CC,$@)
	$(Q)$(CC) $(KCFLAGS) $(call ftrace_flags,$<) $(KCFLAGS_EXTRA) -c $< -o $@

# Host programs are built per object, as the kernel is, so that each
# object's -MMD file lists that source's headers and a changed header
# rebuilds everything that includes it (one gcc command over many sources
# would keep only the last source's list).  Each program has an object
# directory of its own, because programs compile shared sources with
# different flags.  host_prog: $(1) program, $(2) object directory,
# $(3) sources, $(4) compiler and flags (compile and link), $(5) link-only
# arguments, $(6) more prerequisites of the link.
host_objs = $(patsubst %.c,$(2)/%.o,$(3))
define host_prog
$(1): $(call host_objs,,$(2),$(3)) $(6) Makefile
	@mkdir -p $$(@D)
	$$(call quiet,LINK,$$@)
	$$(Q)$(4) $(call host_objs,,$(2),$(3)) -o $$@ $(5)
$(call host_objs,,$(2),$(3)): $(2)/%.o: %.c Makefile
	@mkdir -p $$(@D)
	$$(call quiet,HOSTCC,$$@)
	$$(Q)$(4) -MMD -MP -c $$< -o $$@
endef

$(eval $(call host_prog,$(BUILD)/tools/psf2c,$(BUILD)/obj/psf2c,tools/psf2c.c,\
	$(HOSTCC) -std=gnu11 -O2 -Wall -Wextra -Werror))
$(BUILD)/gen/font.c: $(wildcard $(FONT)) $(BUILD)/tools/psf2c
	@mkdir -p $(@D)
	@test -f "$(FONT)" || { echo "font: $(FONT) is missing: it comes with the Debian" \
		"package $(FONT_PACKAGE) (make deps installs it, or: apt-get install $(FONT_PACKAGE))"; exit 1; }
	$(call quiet,PSF2C,$@)
	$(Q)zcat -f "$(FONT)" | $(BUILD)/tools/psf2c "$(notdir $(FONT))" > $@
	@echo "$(abspath $(FONT))" > $(BUILD)/gen/font-path.txt
# The boot banner names the commit. VERSION is read on every make, but the
# header is rewritten only when it changes, so main.o is rebuilt then and
# only then (a -D flag alone would leave a stale banner in an old main.o).
$(BUILD)/gen/version.h: FORCE
	@mkdir -p $(@D)
	@v='#define BARETRACE_VERSION "$(VERSION)"'; \
	 [ "$$(cat $@ 2>/dev/null)" = "$$v" ] || echo "$$v" > $@
$(BUILD)/kernel/main.o: $(BUILD)/gen/version.h
$(BUILD)/kernel/main.o: KCFLAGS_EXTRA := -include $(BUILD)/gen/version.h
.PHONY: FORCE
FORCE:

$(BUILD)/gen/font.o: $(BUILD)/gen/font.c Makefile
	$(call quiet,CC,$@)
	$(Q)$(CC) $(KCFLAGS) -c $< -o $@

$(BUILD)/%.o: %.asm Makefile
	@mkdir -p $(@D)
	$(call quiet,NASM,$@)
	$(Q)$(NASM) -f elf64 -g -i $(BUILD)/boot/ -i $(BUILD)/gen/ -o $@ $<

# Generated assembly constants (Linux's asm-offsets): asm_offsets.c compiled
# to assembly, where each DEFINE() left a line `->NAME value expression`
# (value a number, or symbol+number for a per-CPU variable's %gs offset);
# those lines become NASM %defines. Its -MMD file makes a changed header
# regenerate them, and the trampolines are rebuilt with them.
$(BUILD)/gen/asm_offsets.s: kernel/tracer/asm_offsets.c Makefile
	@mkdir -p $(@D)
	$(call quiet,CC,$@)
	$(Q)$(CC) $(KCFLAGS) -MT $@ -S $< -o $@
$(BUILD)/gen/asm_offsets.inc: $(BUILD)/gen/asm_offsets.s
	$(call quiet,GEN,$@)
	$(Q){ echo "; generated from kernel/tracer/asm_offsets.c: do not edit"; \
	  sed -n 's/^[[:space:]]*\.ascii[[:space:]]*"->\([A-Za-z0-9_]*\) \([-+A-Za-z0-9_]*\) \(.*\)"$$/%define \1 \2\t; \3/p' $<; \
	} > $@
	$(Q)test "$$(grep -c '^%define' $@)" = "$$(grep -c '"->' $<)" || \
		{ echo "asm_offsets: a DEFINE() line was not converted"; rm -f $@; exit 1; }
$(BUILD)/arch/x86/ftrace_entry.o: $(BUILD)/gen/asm_offsets.inc

$(BUILD)/kernel/tracer/bench_writer_%.o: kernel/tracer/bench_writer.c Makefile
	@mkdir -p $(@D)
	$(call quiet,CC,$@)
	$(Q)$(CC) -Ikernel/tracer/bench_stamp $(KCFLAGS) $(bench_flags_$*) -DBENCH_VARIANT=$* -c $< -o $@

# The AP trampoline is flat code for a fixed low address, carried as a blob.
$(BUILD)/boot/trampoline.bin: boot/trampoline.asm Makefile
	@mkdir -p $(@D)
	$(call quiet,NASM,$@)
	$(Q)$(NASM) -f bin -o $@ $<
$(BUILD)/boot/trampoline_blob.o: $(BUILD)/boot/trampoline.bin

# Two links: the first gives the symbol addresses, the second carries them
# in .ksyms (the last section, so no other symbol moves; checked below).
$(BUILD)/ksyms0.asm: scripts/gen-ksyms.sh
	@mkdir -p $(@D)
	$(Q)scripts/gen-ksyms.sh $(NM) > $@
$(BUILD)/kernel.tmp.elf: $(KOBJS) $(BUILD)/ksyms0.o linker.ld
	$(call quiet,LD,$@)
	$(Q)$(LD) $(KLDFLAGS) -o $@ $(KOBJS) $(BUILD)/ksyms0.o $(LIBGCC)
$(BUILD)/ksyms.asm: $(BUILD)/kernel.tmp.elf scripts/gen-ksyms.sh
	$(call quiet,KSYMS,$@)
	$(Q)scripts/gen-ksyms.sh $(NM) $< > $@
$(BUILD)/kernel.elf: $(BUILD)/kernel.tmp.elf $(BUILD)/ksyms.o
	$(call quiet,LD,$@)
	$(Q)$(LD) $(KLDFLAGS) -o $@ $(KOBJS) $(BUILD)/ksyms.o $(LIBGCC)
	@$(NM) -n $(BUILD)/kernel.tmp.elf | grep -v -e ksyms_ -e __kernel_end > $(BUILD)/syms.1
	@$(NM) -n $@ | grep -v -e ksyms_ -e __kernel_end > $(BUILD)/syms.2
	@cmp -s $(BUILD)/syms.1 $(BUILD)/syms.2 || \
		{ echo "ksyms: symbols moved between links"; rm -f $@; exit 1; }
$(BUILD)/ksyms0.o: $(BUILD)/ksyms0.asm
	$(Q)$(NASM) -f elf64 -o $@ $<
$(BUILD)/ksyms.o: $(BUILD)/ksyms.asm
	$(Q)$(NASM) -f elf64 -o $@ $<

# ---- bootable image ---------------------------------------------------------
iso: $(BUILD)/baretrace.iso
$(BUILD)/baretrace.iso: $(BUILD)/kernel.elf scripts/mkiso.sh
	$(call quiet,ISO,$@)
	$(Q)scripts/mkiso.sh $< $@ ""

# The USB stick's image (docs/usb.md): the bootable image above plus a
# FAT32 partition labelled BARETRACE holding a contiguous TRACE.BIN of
# TRACE_MB MiB whose first block is the trace file's header.  The image is
# rebuilt when TRACE_MB changes (the stamp is rewritten only then).
# CMDLINE="..." given to make (not make run's default above) also puts that
# command line on the stick as CMDLINE.CFG, which its GRUB boots with; the
# image is rebuilt when it changes (its own stamp).
TRACE_MB ?= 64
USB_CMDLINE = $(if $(filter file,$(origin CMDLINE)),,$(CMDLINE))
.PHONY: usb-image
usb-image: $(BUILD)/baretrace-usb.img
$(BUILD)/gen/trace-mb.txt: FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = "$(TRACE_MB)" ] || echo "$(TRACE_MB)" > $@
$(BUILD)/gen/usb-cmdline.txt: FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = "$(USB_CMDLINE)" ] || echo "$(USB_CMDLINE)" > $@
$(BUILD)/baretrace-usb.img: $(BUILD)/baretrace.iso $(BUILD)/kernel.elf $(BUILD)/tools/baretrace-usb \
		$(BUILD)/gen/trace-mb.txt $(BUILD)/gen/usb-cmdline.txt scripts/mkusb-image.sh \
		scripts/usb-cmdline.sh
	@scripts/deps.sh --only mtools dosfstools fdisk	# mkfs.fat, mcopy, sfdisk
	$(call quiet,USBIMG,$@)
	$(Q)scripts/mkusb-image.sh $(BUILD)/baretrace.iso $(BUILD)/kernel.elf \
		$(BUILD)/tools/baretrace-usb $@ "$(TRACE_MB)" "$(VERSION)" "$(USB_CMDLINE)"

# Write the stick's image to a USB stick: make usb DEV=/dev/sdX (asks first).
usb: $(BUILD)/baretrace-usb.img
	@scripts/usb-write.sh $< "$(DEV)"

# Status 3 (QEMU ended without the kernel's verdict) is how Ctrl-A X ends a
# session: not an error of make's.
run: deps
	@$(MAKE) kernel
	./run-qemu.sh --smp $(CPUS) --machine q35 --cmdline "$(CMDLINE)"; \
	 rc=$$?; [ $$rc -ne 3 ] || rc=0; exit $$rc

# ---- host tools ---------------------------------------------------------------
# The serial-capture decoder: the kernel's dump reader and text formatter,
# compiled for the host. `make test-tools` checks it (its CTF output with
# babeltrace2, its trace.dat with trace-cmd) on captures that
# tests/tools/mkcapture makes and on real ones in tests/tools/captures/.
.PHONY: tools test-tools
# The dump reader and text formatter, the one list every host program that
# reads dumps builds from (the decoder, the fuzzer, the dump tests).
DUMP_READ_SRCS := trace/dump_read.c trace/dump_scan.c trace/dump_pack.c trace/text.c trace/text_ftrace.c trace/event_select.c trace/event_fmt.c trace/event_catalog.c trace/bprint.c lib/crc32.c \
	trace/clock.c lib/format.c
DECODE_SRCS := tools/baretrace-decode.c tools/ctf.c tools/trace_dat.c tools/damage.c \
	tools/lab_summary.c tools/lab_plot.c tools/lab_main.c trace/lab.c $(DUMP_READ_SRCS)
tools: $(BUILD)/tools/baretrace-decode $(BUILD)/tools/baretrace-acpi $(BUILD)/tools/baretrace-usb
# baretrace-usb: the partition, FAT32 and trace-file code of drivers/block/
# (the same source the kernel will use) on a disk image; make usb-image
# writes TRACE.BIN's header with it and checks the image it made.
BLOCK_SRCS := drivers/block/part.c drivers/block/fat32.c drivers/block/tracefile.c \
	drivers/block/tracesave.c lib/crc32.c
$(eval $(call host_prog,$(BUILD)/tools/baretrace-usb,$(BUILD)/obj/baretrace-usb,\
	tools/baretrace-usb.c $(BLOCK_SRCS),$(HOSTCC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iinclude))
# The same under ASan/UBSan: what tests/tools/test_usb_image.py runs.
USB_ASAN_CC = $(HOSTCC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all -Iinclude
$(eval $(call host_prog,$(BUILD)/tools/baretrace-usb-asan,$(BUILD)/obj/baretrace-usb-asan,\
	tools/baretrace-usb.c $(BLOCK_SRCS),$(USB_ASAN_CC)))
# baretrace-acpi: the kernel's ACPI parser (the same source) on acpidump text.
# -Wno-array-bounds: GCC 12 at -O2 flags acpi_init()'s read of the BIOS data
# area at its fixed address 0x40E, which the tool never calls.
ACPI_TOOL_SRCS := tools/acpidump.c arch/x86/acpi.c lib/format.c
$(eval $(call host_prog,$(BUILD)/tools/baretrace-acpi,$(BUILD)/obj/baretrace-acpi,\
	tools/baretrace-acpi.c $(ACPI_TOOL_SRCS),$(HOSTCC) -std=gnu11 -O2 -g -Wall -Wextra -Werror \
	-Wno-array-bounds -Iinclude -Iarch/x86/include))
# The same under ASan/UBSan: what tests/tools/test_acpi_tool.py runs.
ACPI_ASAN_CC = $(HOSTCC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -Wno-array-bounds \
	-fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
	-Iinclude -Iarch/x86/include
$(eval $(call host_prog,$(BUILD)/tools/baretrace-acpi-asan,$(BUILD)/obj/baretrace-acpi-asan,\
	tools/baretrace-acpi.c $(ACPI_TOOL_SRCS),$(ACPI_ASAN_CC)))
$(eval $(call host_prog,$(BUILD)/tools/baretrace-decode,$(BUILD)/obj/baretrace-decode,\
	$(DECODE_SRCS),$(HOSTCC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iinclude,-lm))
# tools/tsc-warp: whether the host's CPUs' TSCs agree (why plain TCG's
# guest TSC can drift against its timers; docs/clock.md).
$(eval $(call host_prog,$(BUILD)/tools/tsc-warp,$(BUILD)/obj/tsc-warp,tools/tsc-warp.c,\
	$(HOSTCC) -std=gnu11 -O2 -Wall -Wextra -Werror -pthread))
.PHONY: tsc-warp
tsc-warp: $(BUILD)/tools/tsc-warp
	$(BUILD)/tools/tsc-warp
test-tools: $(BUILD)/tools/baretrace-decode $(BUILD)/tools/mkcapture $(BUILD)/tools/mkcapture-extra \
	$(BUILD)/tools/baretrace-acpi-asan $(BUILD)/tools/baretrace-usb-asan
	@scripts/deps.sh --only trace-cmd	# the trace.dat test reads with trace-cmd report
	@scripts/deps.sh --only mtools dosfstools fdisk	# the USB image tests (mkfs.fat, fsck.fat, sfdisk)
	@echo "== tools: baretrace-decode (text, CTF via babeltrace2, trace.dat via trace-cmd, damage); make usb"
	$(Q)BUILD=$(abspath $(BUILD)) $(PYTHON) -m pytest -q tests/tools

# ---- tests ------------------------------------------------------------------
override HOST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror \
	-fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all -Iinclude -Itests/host/include
override TSAN_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror \
	-fsanitize=thread -Iinclude -Itests/host/include

HOST_TESTS :=
TSAN_TESTS :=
include $(sort $(wildcard tests/host/*.mk))


$(foreach t,$(HOST_TESTS),$(eval $(call host_prog,$(BUILD)/host/$(t),$(BUILD)/obj/$(t),\
	$($(t)_SRCS),$(HOSTCC) $(HOST_CFLAGS) $($(t)_CFLAGS),-lcmocka $($(t)_LIBS),$($(t)_DEPS))))
$(foreach t,$(TSAN_TESTS),$(eval $(call host_prog,$(BUILD)/host/$(t).tsan,$(BUILD)/obj/$(t).tsan,\
	$($(t)_SRCS),$(HOSTCC) $(TSAN_CFLAGS) $($(t)_CFLAGS),-lcmocka $($(t)_LIBS))))

# Host tests: the unit tests under ASan/UBSan, the ring buffer and clock
# latch under TSan, the decoder (and make usb) end to end, a fuzz run, and
# the build's own header tracking.
.PHONY: test-unit
test-host: test-unit
	@$(MAKE) test-tsan
	@$(MAKE) test-tools
	@$(MAKE) fuzz
	@$(MAKE) check-deps

# Everything test-host runs, built (make test builds it with -j2 first).
HOST_PROGS = $(addprefix $(BUILD)/host/,$(HOST_TESTS)) \
	$(addsuffix .tsan,$(addprefix $(BUILD)/host/,$(TSAN_TESTS))) \
	$(BUILD)/tools/baretrace-decode $(BUILD)/tools/baretrace-acpi $(BUILD)/tools/mkcapture \
	$(BUILD)/tools/mkcapture-extra $(BUILD)/tools/baretrace-acpi-asan \
	$(BUILD)/fuzz/fuzz_dump $(BUILD)/fuzz/fuzz_persist $(BUILD)/fuzz/fuzz_acpidump \
	$(BUILD)/fuzz/fuzz_block $(BUILD)/tools/baretrace-usb
.PHONY: host-progs
host-progs: $(HOST_PROGS)

# A changed header must make every host program that includes it out of
# date (scripts/check-deps.sh touches each and asks make -q, then puts
# the header's time back, so nothing is rebuilt).
.PHONY: check-deps
CHECK_DEPS_PROGS := $(BUILD)/tools/baretrace-decode $(BUILD)/tools/mkcapture \
	$(BUILD)/fuzz/fuzz_dump $(addprefix $(BUILD)/host/,$(HOST_TESTS)) \
	$(addsuffix .tsan,$(addprefix $(BUILD)/host/,$(TSAN_TESTS)))
check-deps: $(CHECK_DEPS_PROGS)
	@echo "== build: a changed header rebuilds every host program that includes it"
	$(Q)scripts/check-deps.sh $(BUILD)

# Each unit test runs as a target of its own, so `make -j2 test-unit` runs
# two at a time: its output goes to build/host/<test>.log, the last lines
# are shown, and all of it when the test fails.
HOST_RUNS := $(addprefix run-host-,$(HOST_TESTS))
.PHONY: $(HOST_RUNS)
test-unit: $(HOST_RUNS)
$(HOST_RUNS): run-host-%: $(BUILD)/host/%
	@if $(BUILD)/host/$* $($*_ARGS) > $(BUILD)/host/$*.log 2>&1; then \
		echo "== host: $*: $$(tail -n 1 $(BUILD)/host/$*.log)"; \
	else cat $(BUILD)/host/$*.log; echo "== host: $*: FAILED (log: $(BUILD)/host/$*.log)"; \
		exit 1; fi

test-tsan: $(addsuffix .tsan,$(addprefix $(BUILD)/host/,$(TSAN_TESTS)))
	@$(foreach t,$(TSAN_TESTS),echo "== host (ThreadSanitizer): $(t)" && \
		setarch -R $(BUILD)/host/$(t).tsan $($(t)_ARGS) &&) true

# libFuzzer on the dump reader and text formatter for FUZZ_TIME seconds, from
# seeds that mkcapture and mkcapture-extra make (description frames of every
# kind among them, which its custom mutator aims at, re-CRCing what it
# changes); new inputs collect in build/fuzz/corpus.
.PHONY: fuzz
# The longest run first, so that make -j2 runs the shorter ones (below) one
# after another beside it: FUZZ_TIME in all, not 10 s more.
fuzz: fuzz-dump
CLANG ?= clang
FUZZ_TIME ?= 20
FUZZ_SRCS := tests/host/fuzz_dump.c tests/host/desc_check.c $(DUMP_READ_SRCS)
FUZZ_CC = $(CLANG) -std=gnu11 -O1 -g -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -Iinclude -Itests/host
$(eval $(call host_prog,$(BUILD)/fuzz/fuzz_dump,$(BUILD)/obj/fuzz_dump,$(FUZZ_SRCS),$(FUZZ_CC)))
# The persistent range's validator (tests/host/fuzz_persist.c), FUZZ_PERSIST_TIME seconds.
FUZZ_PERSIST_TIME ?= 10
FUZZ_PERSIST_SRCS := tests/host/fuzz_persist.c trace/persist.c trace/ring_walk.c \
	trace/ring_buffer.c lib/crc32.c
$(eval $(call host_prog,$(BUILD)/fuzz/fuzz_persist,$(BUILD)/obj/fuzz_persist,$(FUZZ_PERSIST_SRCS),\
	$(FUZZ_CC) -Itests/host/include))
.PHONY: fuzz-persist
# Seeds: real ranges built by the host test's rig (sealed, unsealed, 4 CPUs, full, wrapped).
fuzz-persist: $(BUILD)/fuzz/fuzz_persist $(BUILD)/host/test_persist
	@rm -rf $(BUILD)/fuzz/persist-seeds && mkdir -p $(BUILD)/fuzz/persist-corpus \
		$(BUILD)/fuzz/persist-seeds
	$(Q)$(BUILD)/host/test_persist --seeds $(BUILD)/fuzz/persist-seeds
	@echo "== fuzz: persist_check for $(FUZZ_PERSIST_TIME) s (log: $(BUILD)/fuzz/persist-log)"
	$(Q)cd $(BUILD)/fuzz && ./fuzz_persist -max_total_time=$(FUZZ_PERSIST_TIME) -timeout=10 \
		-max_len=600000 -print_final_stats=1 persist-corpus persist-seeds > persist-log 2>&1 || \
		{ grep -a -A40 -m1 -e '==ERROR' -e 'runtime error' -e 'deadly signal' persist-log; exit 1; }
	@grep -a -e '^Done' -e 'new_units_added' $(BUILD)/fuzz/persist-log
fuzz: fuzz-persist fuzz-acpi
# libFuzzer on stick_find() and tracefile_write_ok(), FUZZ_BLOCK_TIME seconds,
# from sparse images tests/host/fuzz_block_seeds.sh makes with mkfs.fat and sfdisk.
FUZZ_BLOCK_TIME ?= 5
$(eval $(call host_prog,$(BUILD)/fuzz/fuzz_block,$(BUILD)/obj/fuzz_block,\
	tests/host/fuzz_block.c $(BLOCK_SRCS),$(FUZZ_CC)))
.PHONY: fuzz-block
fuzz-block: $(BUILD)/fuzz/fuzz_block $(BUILD)/tools/baretrace-usb tests/host/fuzz_block_seeds.sh
	@scripts/deps.sh --only mtools dosfstools fdisk
	@rm -rf $(BUILD)/fuzz/block-seeds && mkdir -p $(BUILD)/fuzz/block-seeds $(BUILD)/fuzz/block-corpus
	$(Q)tests/host/fuzz_block_seeds.sh $(BUILD)/tools/baretrace-usb $(BUILD)/fuzz/block-seeds
	@echo "== fuzz: stick_find + tracefile_write_ok for $(FUZZ_BLOCK_TIME) s (log: $(BUILD)/fuzz/block-log)"
	$(Q)cd $(BUILD)/fuzz && ./fuzz_block -max_total_time=$(FUZZ_BLOCK_TIME) -timeout=10 \
		-max_len=65536 -print_final_stats=1 block-corpus block-seeds > block-log 2>&1 || \
		{ grep -a -A40 -m1 -e '==ERROR' -e 'runtime error' -e 'deadly signal' block-log; exit 1; }
	@grep -a -e '^Done' -e 'new_units_added' $(BUILD)/fuzz/block-log
fuzz: fuzz-block
# baretrace-acpi's reader, the kernel's ACPI parser and the summary, FUZZ_ACPI_TIME
# seconds, from the dumps in tests/tools/acpi/.
FUZZ_ACPI_TIME ?= 5
$(eval $(call host_prog,$(BUILD)/fuzz/fuzz_acpidump,$(BUILD)/obj/fuzz_acpidump,\
	tests/host/fuzz_acpidump.c $(ACPI_TOOL_SRCS),$(FUZZ_CC) -Iarch/x86/include))
.PHONY: fuzz-acpi
fuzz-acpi: $(BUILD)/fuzz/fuzz_acpidump
	@rm -rf $(BUILD)/fuzz/acpi-seeds && mkdir -p $(BUILD)/fuzz/acpi-seeds $(BUILD)/fuzz/acpi-corpus
	@cp tests/tools/acpi/*.dump $(BUILD)/fuzz/acpi-seeds/
	@echo "== fuzz: acpidump reader + ACPI parser for $(FUZZ_ACPI_TIME) s (log: $(BUILD)/fuzz/acpi-log)"
	$(Q)cd $(BUILD)/fuzz && ./fuzz_acpidump -max_total_time=$(FUZZ_ACPI_TIME) -timeout=10 \
		-max_len=65536 -print_final_stats=1 acpi-corpus acpi-seeds > acpi-log 2>&1 || \
		{ grep -a -A40 -m1 -e '==ERROR' -e 'runtime error' -e 'deadly signal' acpi-log; exit 1; }
	@grep -a -e '^Done' -e 'new_units_added' $(BUILD)/fuzz/acpi-log
.PHONY: fuzz-dump
fuzz-dump: $(BUILD)/fuzz/fuzz_dump $(BUILD)/tools/mkcapture $(BUILD)/tools/mkcapture-extra
	@rm -rf $(BUILD)/fuzz/seeds && mkdir -p $(BUILD)/fuzz/seeds $(BUILD)/fuzz/corpus
	$(Q)$(BUILD)/tools/mkcapture --seeds $(BUILD)/fuzz/seeds
	$(Q)$(BUILD)/tools/mkcapture-extra --seeds $(BUILD)/fuzz/seeds
	@echo "== fuzz: dump_read + text for $(FUZZ_TIME) s (log: $(BUILD)/fuzz/log)"
	$(Q)cd $(BUILD)/fuzz && ./fuzz_dump -max_total_time=$(FUZZ_TIME) -timeout=10 \
		-max_len=65536 -print_final_stats=1 corpus seeds > log 2>&1 || \
		{ grep -a -A40 -m1 -e '==ERROR' -e 'runtime error' -e 'deadly signal' log; exit 1; }
	@grep -a -e '^Done' -e 'new_units_added' $(BUILD)/fuzz/log

# QEMU_TEST_JOBS pytest-xdist workers, each taking the next test when it is
# free (loadgroup: a test at a time, a file that keeps state in its module as a
# whole, in the order conftest.py gives from tests/qemu/boot_costs.txt);
# tests/qemu/boot_lock.py decides which boots may run at the same time (icount
# and one-CPU TCG boots without ktests share the machine, the others have it to
# themselves). Default 2, the machine's cores; QEMU_TEST_JOBS=1 runs them one
# after the other.
QEMU_TEST_JOBS ?= 2
# Each boot's lock and end go to $(BUILD)/qemu-boots.log; the run ends with
# their totals, and `make test-qemu-times` sums the log up per file.
test-qemu: $(BUILD)/kernel.elf $(BUILD)/tools/baretrace-decode $(BUILD)/tools/baretrace-acpi-asan deps-qemu10
	@rm -f $(BUILD)/qemu-boots.log
	@BOOT_LOG=$(abspath $(BUILD))/qemu-boots.log $(PYTHON) -m pytest -q --durations=25 \
	  $(if $(filter-out 1,$(QEMU_TEST_JOBS)),-n $(QEMU_TEST_JOBS) --dist loadgroup) tests/qemu \
	  $(PYTEST_ARGS); rc=$$?; \
	 [ ! -s $(BUILD)/qemu-boots.log ] || \
	  echo "qemu boots: $$($(PYTHON) tests/qemu/boot_times.py $(BUILD)/qemu-boots.log -1)"; \
	 exit $$rc
.PHONY: test-qemu-times test-qemu-costs
test-qemu-times:
	$(PYTHON) tests/qemu/boot_times.py $(BUILD)/qemu-boots.log 25
# The order of the QEMU tests from the last run's log (run it after a quiet one).
test-qemu-costs:
	$(PYTHON) tests/qemu/boot_times.py --costs $(BUILD)/qemu-boots.log > tests/qemu/boot_costs.txt

# The layout of the lines a change adds (.editorconfig): tabs, no trailing
# whitespace, 100 columns; STYLE_BASE (default: the merge base with main).
.PHONY: style-check
style-check:
	@echo "== style: lines added since $(or $(STYLE_BASE),the merge base with main)"
	$(Q)scripts/style-check.sh $(STYLE_BASE)

# The builds and the host tests that do not share a core with anything
# timed run two at a time (the machines have two cores); the ThreadSanitizer
# tests and the QEMU tests (which share the machine by their own rules,
# tests/qemu/boot_lock.py) as they do alone. The last line says how long.
test: deps-test deps-qemu10
	@t0=$$(date +%s); \
	 $(MAKE) style-check && $(MAKE) -j2 kernel host-progs && $(MAKE) -j2 test-unit && \
	 $(MAKE) test-tsan && $(MAKE) test-tools && $(MAKE) -j2 fuzz && $(MAKE) check-deps && $(MAKE) test-qemu; \
	 rc=$$?; t=$$(( $$(date +%s) - t0 )); \
	 echo "make test: $$( [ $$rc = 0 ] && echo passed || echo FAILED ) in $$((t / 60)) min $$((t % 60)) s"; \
	 exit $$rc

deps:
	@scripts/deps.sh
deps-test:
	@scripts/deps.sh --test

# QEMU 10 from bookworm-backports, unpacked into build/qemu10/ once, for the
# x2APIC tests (Debian 12's QEMU 7.2 has no x2APIC under TCG; it runs the rest).
deps-qemu10: deps
	@scripts/qemu10.sh

# ---- host benchmark (not a test; docs/bench-host.md) ------------------------
# The trace write path built for the host against a floor and LTTng-UST.
# scripts/bench-host.sh installs what it needs, builds, runs, reports.
BENCH_HOST_SRCS := bench/host/bench_main.c bench/host/bench_peers.c \
	bench/host/peer_baretrace.c bench/host/peer_floor.c \
	trace/ring_buffer.c trace/ring_reader.c
BENCH_HOST_LTTNG_SRCS := bench/host/bench_main.c bench/host/peer_lttng.c bench/host/lttng_tp.c
override BENCH_HOST_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -pthread \
	-DHOST_TRACE_NO_HOOKS -Ibench/host/include -Iinclude -Itests/host/include -Ibench/host

# make bench: the kernel's benchmarks under QEMU (icount and TCG) with a
# results file and plots in build/bench/, then the host comparison.
.PHONY: bench bench-kernel
bench: bench-kernel bench-host
bench-kernel: deps
	@scripts/deps.sh gnuplot-nox	# the plots
	@$(MAKE) kernel
	$(PYTHON) scripts/bench-kernel.py

.PHONY: bench-host
bench-host:
	@scripts/bench-host.sh

$(eval $(call host_prog,$(BUILD)/bench/bench-host,$(BUILD)/obj/bench-host,\
	$(BENCH_HOST_SRCS),$(HOSTCC) $(BENCH_HOST_CFLAGS)))
$(eval $(call host_prog,$(BUILD)/bench/bench-host-lttng,$(BUILD)/obj/bench-host-lttng,\
	$(BENCH_HOST_LTTNG_SRCS),$(HOSTCC) $(BENCH_HOST_CFLAGS),-llttng-ust -ldl))

help:
	@echo "Targets:"
	@echo "  make / make kernel  build build/kernel.elf (make all: the same)"
	@echo "  make iso            build build/baretrace.iso (BIOS and UEFI, USB-writable)"
	@echo "  make usb-image      build/baretrace-usb.img: the image plus a BARETRACE FAT32 partition"
	@echo "                      with a preallocated TRACE.BIN (TRACE_MB=$(TRACE_MB)); CMDLINE=\"...\""
	@echo "                      also puts the command line it boots with there (CMDLINE.CFG)"
	@echo "  make usb DEV=/dev/sdX  write that image to a USB stick (shows the device, asks first)"
	@echo "  make run            build and boot under QEMU (-smp $(CPUS), q35, SeaBIOS, CMDLINE=\"$(CMDLINE)\")"
	@echo "  make tools          build/tools/baretrace-decode (captures to text, CTF, trace.dat), baretrace-acpi"
	@echo "  make tsc-warp       does the host's TSC, read as QEMU reads it, go back between CPUs (docs/clock.md)"
	@echo "  make test           everything: style-check, kernel, test-host, test-qemu (about 20 min)"
	@echo "  make test-host      test-unit, test-tsan, test-tools, fuzz, check-deps"
	@echo "  make test-unit      host unit tests (cmocka) under ASan/UBSan"
	@echo "  make test-tsan      ring buffer stress and clock latch under ThreadSanitizer"
	@echo "  make test-tools     the decoder against babeltrace2 and trace-cmd; make usb's refusals"
	@echo "  make test-qemu      QEMU system tests (QEMU_TEST_JOBS workers; PYTEST_ARGS passed on)"
	@echo "  make test-qemu-times  the last test-qemu's boots per file: exclusive and shared seconds"
	@echo "  make test-qemu-costs  tests/qemu/boot_costs.txt (the QEMU tests' order) from that log"
	@echo "  make test-ring-inject / test-ring-explore  ring buffer injection: sampled / all plans (EXPLORE_JOBS)"
	@echo "  make fuzz           fuzz the dump decoder (FUZZ_TIME=$(FUZZ_TIME) s), persist, ACPI, stick parsers"
	@echo "  make fuzz-persist / fuzz-acpi  one of them (FUZZ_PERSIST_TIME, FUZZ_ACPI_TIME)"
	@echo "  make check-deps     a touched header rebuilds every host program that includes it"
	@echo "  make style-check    layout of the lines a change adds (STYLE_BASE=rev)"
	@echo "  make bench          bench-kernel (QEMU, icount and TCG, plots) and bench-host"
	@echo "  make deps / deps-test / deps-qemu10  install Debian packages for make run / make test;"
	@echo "                     fetch QEMU 10 into build/qemu10/"
	@echo "  make clean          remove build/"
	@echo "Variables: CC, LD, CROSS_COMPILE, NASM, HOSTCC, CLANG, QEMU, PYTHON, CFLAGS, V=1,"
	@echo "  CPUS=$(CPUS), CMDLINE, FONT, FTRACE=$(FTRACE) (0: no function tracer), BUILD=$(BUILD),"
	@echo "  EVENTS_EXTRA, QEMU_TEST_JOBS=$(QEMU_TEST_JOBS), PYTEST_ARGS, EXPLORE_JOBS, FUZZ_TIME, STYLE_BASE,"
	@echo "  TRACE_MB=$(TRACE_MB)"

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
