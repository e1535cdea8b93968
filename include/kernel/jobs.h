/* The jobs named by run= on the command line, run after boot in order. */
#ifndef KERNEL_JOBS_H
#define KERNEL_JOBS_H

void __attribute__((noreturn)) jobs_run(void);

#endif
