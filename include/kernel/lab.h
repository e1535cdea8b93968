/* The lab's experiments, run as jobs (run=hwlat, ...; docs/lab.md). */
#ifndef KERNEL_LAB_H
#define KERNEL_LAB_H

#include <stdbool.h>

/* run=hwlat: every CPU samples the TSC with interrupts off; gaps, per CPU and machine-wide. */
bool hwlat_job(void);

#endif
