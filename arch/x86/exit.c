/*
 * machine_exit: leave with a verdict.
 *
 * Under QEMU the isa-debug-exit write ends the emulator with a status that
 * says pass or fail, and nothing after it runs. A real machine has no such
 * device: the write goes nowhere and we carry on down this list, printing
 * each step first so that the screen says what happened:
 *
 *   1. the ACPI reset register from the FADT (I/O, memory or PCI config);
 *   2. the keyboard controller's pulse-reset command (0x64 <- 0xFE);
 *   3. halt with interrupts off, saying so.
 *
 * machine_reset() (the shell's reboot, panic.action=reboot) ends instead
 * with a triple fault, which resets every x86 machine: an empty IDT, then
 * an exception that cannot be delivered.
 *
 * The reset waits exit.delay_s seconds first, so that a person can read the
 * result before the screen goes. exit.method= picks one step for tests and
 * for machines whose reset misbehaves.
 */
#include <arch/acpi.h>
#include <arch/cpu.h>
#include <arch/exit.h>
#include <arch/io.h>
#include <arch/pci.h>
#include <arch/tsc.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"

#define KBC_STATUS		0x64	/* read: status; write: command */
#define KBC_STATUS_IBF		0x02	/* input buffer full: not ready for a command */
#define KBC_CMD_PULSE_RESET	0xFE	/* pulse output line 0 (CPU reset) */
#define KBC_SPIN_LIMIT		100000
#define RESET_WAIT_NS		500000000ll	/* a reset that works is done by then */
#define RESET_WAIT_SPINS	50000000	/* the same bound without a clock */
#define ACPI_GAS_PCI_CONFIG	2

enum exit_method { EXIT_AUTO, EXIT_ACPI, EXIT_KBC, EXIT_HALT };
static const char *const exit_methods[] = { "auto", "acpi", "kbc", "halt", NULL };
static int exit_method = EXIT_AUTO;
static uint64_t exit_delay_s = 10;

CMDLINE_OPTION(exit_method, .name = "exit.method", .type = OPT_ENUM, .var = &exit_method,
	       .choices = exit_methods,
	       .help = "without isa-debug-exit: reset via the ACPI register, the keyboard "
		       "controller, or just halt (auto tries them in that order)");
CMDLINE_OPTION(exit_delay, .name = "exit.delay_s", .type = OPT_UINT, .var = &exit_delay_s,
	       .min = 0, .max = 600,
	       .help = "seconds to wait before resetting a real machine");

/* Wait ns on the TSC clock, or a fixed number of spins before calibration. */
static void wait_ns(long long ns)
{
	long long start = tsc_now_ns();

	if (start < 0) {
		for (long i = 0; i < RESET_WAIT_SPINS; i++)
			cpu_relax();
		return;
	}
	while (tsc_now_ns() - start < ns)
		cpu_relax();
}

static void acpi_reset(void)
{
	const struct acpi_gas *r = &acpi.reset_reg;
	extern uint64_t acpi_mapped_limit;

	printk("exit: resetting through the ACPI reset register %s:0x%llx value=0x%x\n",
	       r->space_id == ACPI_GAS_IO ? "io" : r->space_id == ACPI_GAS_MEMORY ? "mem" :
	       r->space_id == ACPI_GAS_PCI_CONFIG ? "pci" : "other",
	       (unsigned long long)r->address, acpi.reset_value);
	if (r->space_id == ACPI_GAS_IO) {
		outb((uint16_t)r->address, acpi.reset_value);
	} else if (r->space_id == ACPI_GAS_MEMORY && r->address < acpi_mapped_limit) {
		*(volatile uint8_t *)(uintptr_t)r->address = acpi.reset_value;
	} else if (r->space_id == ACPI_GAS_PCI_CONFIG) {
		/* ACPI 5.2.3.2: device in bits 47:32, function in 31:16, offset in 15:0, bus 0. */
		struct pci_dev d = { .dev = (r->address >> 32) & 0x1F,
				     .fn = (r->address >> 16) & 0x7 };
		pci_write8(&d, r->address & 0xFF, acpi.reset_value);
	}
	wait_ns(RESET_WAIT_NS);
	printk("exit: the ACPI reset register did not reset the machine\n");
}

static void kbc_reset(void)
{
	printk("exit: resetting through the keyboard controller (0x64 <- 0xfe)\n");
	for (int i = 0; i < KBC_SPIN_LIMIT && (inb(KBC_STATUS) & KBC_STATUS_IBF); i++)
		;
	outb(KBC_STATUS, KBC_CMD_PULSE_RESET);
	wait_ns(RESET_WAIT_NS);
	printk("exit: the keyboard controller did not reset the machine\n");
}

/* An IDT with no entries: the next exception is a double fault, then a triple fault. */
void machine_triple_fault(void)
{
	static const struct __attribute__((packed)) { uint16_t limit; uint64_t base; } empty;

	irq_disable();
	__asm__ __volatile__("lidt %0\n\tint3" : : "m"(empty) : "memory");
	for (;;)
		cpu_halt();
}

void machine_reset(void)
{
	if (acpi.has_reset_reg)
		acpi_reset();
	kbc_reset();
	printk("exit: resetting through a triple fault\n");
	machine_triple_fault();
}

void machine_exit(bool success)
{
	bool acpi_ok = acpi.has_reset_reg;

	outb(QEMU_EXIT_PORT, success ? QEMU_EXIT_SUCCESS : QEMU_EXIT_FAILURE);
	printk("exit: result=%s; no isa-debug-exit device\n", success ? "pass" : "fail");
	if (exit_method == EXIT_ACPI && !acpi_ok)
		printk("exit: exit.method=acpi but the FADT gives no reset register\n");
	if (exit_method != EXIT_HALT && (exit_method != EXIT_ACPI || acpi_ok)) {
		printk("exit: resetting in %llu s (exit.delay_s)\n", (unsigned long long)exit_delay_s);
		wait_ns((long long)exit_delay_s * 1000000000ll);
		if (acpi_ok && (exit_method == EXIT_AUTO || exit_method == EXIT_ACPI))
			acpi_reset();
		if (exit_method == EXIT_AUTO || exit_method == EXIT_KBC)
			kbc_reset();
	}
	printk("exit: halting; power the machine off by hand\n");
	for (;;) {
		irq_disable();
		cpu_halt();
	}
}
