/* The lab's experiments, run as jobs (run=hwlat, ...; docs/lab.md). */
#ifndef KERNEL_LAB_H
#define KERNEL_LAB_H

#include <stdbool.h>

/* run=hwlat: every CPU samples the TSC with interrupts off; gaps, per CPU and machine-wide. */
bool hwlat_job(void);
/* run=c2c: one-way and round-trip latency of a cache line, each ordered pair of CPUs. */
bool c2c_job(void);
/* run=timerlat: on each CPU, how late the LAPIC timer's interrupt is after its deadline. */
bool timerlat_job(void);

#endif
