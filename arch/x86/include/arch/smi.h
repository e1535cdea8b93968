/*
 * System-management interrupts: how many a CPU has taken, where the CPU
 * counts them, and one raised on purpose through the chipset's APM port.
 */
#ifndef ARCH_SMI_H
#define ARCH_SMI_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Decide once (boot CPU, before the others read) whether MSR_SMI_COUNT
 * can be read: NULL if it can, else why not (one phrase for a line).
 */
const char *smi_count_probe(void);
/* This CPU's SMI count: true and *v, or false if the count is unknown. */
bool smi_count_read(uint64_t *v);
/*
 * Write the APM control port (0xB2): on chipsets whose firmware enables
 * APMC SMIs (QEMU's q35 and pc under SeaBIOS) the CPUs enter SMM.
 */
void smi_raise_apm(void);

#endif
