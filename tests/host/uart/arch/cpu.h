/*
 * arch/cpu.h for the UART host test: the TSC is the model's clock
 * (tests/host/test_uart.c), which each poll of the line status moves on,
 * so the driver's time bound is reached in a known number of polls.
 */
#ifndef ARCH_CPU_H
#define ARCH_CPU_H

#include <stdint.h>

uint64_t model_rdtsc(void);

static inline uint64_t rdtsc(void) { return model_rdtsc(); }

#endif
