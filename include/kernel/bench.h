/* run=bench: the benchmarks chosen by bench= (kernel/bench.c). */
#ifndef KERNEL_BENCH_H
#define KERNEL_BENCH_H

#include <stdbool.h>

bool bench_job(void);

#endif
