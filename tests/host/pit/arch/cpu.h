/*
 * arch/cpu.h for the PIT host test: rdtsc reads the model's clock (a TSC
 * at exactly 1 GHz that the test may stall at any read).
 */
#ifndef ARCH_CPU_H
#define ARCH_CPU_H

#include <stdint.h>

uint64_t model_rdtsc(void);

static inline uint64_t rdtsc(void) { return model_rdtsc(); }
static inline void cpu_relax(void) { }

#endif
