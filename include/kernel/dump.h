/* Trace dumps on the serial console: text (ftrace layout) and binary frames. */
#ifndef KERNEL_DUMP_H
#define KERNEL_DUMP_H

#include <stdbool.h>
#include <stdint.h>

#define DUMP_ALL_CPUS	UINT32_MAX

/* Take what the buffers hold (once per call), then print it. */
bool dump_text(uint32_t cpu, uint64_t last);
bool dump_bin(uint32_t cpu);
/* The dumps dump= asks for, as run=demo does at its end. */
bool dump_default(void);
/*
 * At a panic, the other CPUs stopped (each flushed its own tail page): the
 * same dumps, all CPUs, asking no CPU for anything from then on.
 */
bool dump_panic(bool bin, uint64_t last);

#endif
