/*
 * kernel_main: the boot order, one step per line. Called from
 * boot/entry.asm in long mode on the boot stack, with the physical address
 * of the Multiboot2 boot information.
 */
#include <stdint.h>
#include <arch/acpi.h>
#include <arch/consoles.h>
#include <arch/cpu.h>
#include <arch/exit.h>
#include <arch/lapic.h>
#include <arch/paging.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/text_poke.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include <arch/uart.h>
#include <arch/vga.h>
#include <arch/watchdog.h>
#include <usb/usbkbd.h>
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/dump.h"
#include "kernel/ftrace.h"
#include "kernel/jobs.h"
#include "kernel/memory.h"
#include "kernel/trace_ctl.h"
#include "kernel/tracing.h"

#ifndef BARETRACE_VERSION
#define BARETRACE_VERSION "unknown"
#endif

struct boot_info boot_info;

static void report_cmdline(const char *msg)
{
	printk("%s\n", msg);
}

void kernel_main(uint32_t mbi_phys);

void kernel_main(uint32_t mbi_phys)
{
	const char *mb2_err;
	bool uart;

	uart = uart_console_init(COM1_PORT);		/* COM1 first: output has a home */
	mb2_err = mb2_parse((const void *)(uintptr_t)mbi_phys, &boot_info); /* copy before reuse */
	if (!boot_info.efi)
		vga_console_init();			/* BIOS: mirror on the screen */
	percpu_init_boot();				/* %gs, GDT, TSS, IST stacks */
	idt_init();					/* every exception reported */

	printk("baretrace %s: trace recording laboratory, x86-64\n", BARETRACE_VERSION);
	printk("boot: loader=\"%s\" firmware=%s console=%s%s\n", boot_info.loader,
	       boot_info.efi ? "uefi" : "bios", uart ? "ttyS0" : "",
	       boot_info.efi ? "" : (uart ? ",vga" : "vga"));
	if (mb2_err)
		printk("boot: boot information is malformed: %s; continuing with what was read\n",
		       mb2_err);
	printk("boot: cmdline=\"%s\"%s\n", boot_info.cmdline,
	       boot_info.cmdline_truncated ? " (truncated)" : "");
	cmdline_parse(boot_info.cmdline, report_cmdline); /* options before subsystems */

	memory_init(&boot_info);			/* page allocator, map all RAM */
	acpi_inject_init();				/* inject.acpi=: tables rewritten */
	acpi_init(boot_info.rsdp_len ? boot_info.rsdp : NULL,
		  boot_info.rsdp_len, !boot_info.efi);	/* MADT, HPET, FADT */
	consoles_init();				/* SPCR, PCI, COM, fb; console= */
	acpi_dump();					/* acpi.dump: tables as acpidump text */
	tsc_init();					/* calibrate; printk gets a clock */
	lapic_init_bsp();				/* local APIC, 8259s masked */
	lapic_timer_calibrate();			/* timer rate against the TSC */
	text_poke_init();				/* code read-only before APs start */
	ftrace_init();					/* function tracer sites, checked */
	trace_events_init();				/* trace.events=: patch the event sites */
	tracing_init_boot();				/* the boot CPU's ring buffer, recording */
	ftrace_boot();					/* ftrace=: the tracer from here on */
	smp_init();					/* start APs, measure their TSCs */
	tracing_init();					/* the APs' ring buffers, recording */
	watchdog_init();				/* watchdog.ms=: jobs and calls watched */
	usbkbd_init();					/* a USB keyboard as console input */
	dump_prepare();					/* dump=usb: xHCI, the stick, TRACE.BIN */

	jobs_run();					/* run=..., then exit or idle */
}
