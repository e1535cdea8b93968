/* Leaving the machine: QEMU's isa-debug-exit, else a reset (ACPI, keyboard controller) or a halt. */
#ifndef ARCH_EXIT_H
#define ARCH_EXIT_H

#include <stdbool.h>

/*
 * isa-debug-exit at port 0xF4: QEMU exits with (value << 1) | 1.
 * We write 0x10 for success (status 33) and 0x11 for failure (status 35);
 * run-qemu.sh maps them to 0 and 1.
 */
#define QEMU_EXIT_PORT		0xF4
#define QEMU_EXIT_SUCCESS	0x10
#define QEMU_EXIT_FAILURE	0x11

void __attribute__((noreturn)) machine_exit(bool success);
/* Reset now: the ACPI reset register, else the keyboard controller, else a triple fault. */
void __attribute__((noreturn)) machine_reset(void);
/* Reset at once by a triple fault (an empty IDT, then int3), saying nothing. */
void __attribute__((noreturn)) machine_triple_fault(void);

#endif
