/* The jobs named by run= on the command line, run after boot in order. */
#ifndef KERNEL_JOBS_H
#define KERNEL_JOBS_H

#include <stdbool.h>

void __attribute__((noreturn)) jobs_run(void);

/* run=echo: read a line from console_getc(), print "echo: <line>". */
bool job_echo(void);
/* run=fault: fault on purpose (fault.cpu=, fault.marks=); does not return. */
bool job_fault(void);
/* run=hang: one CPU spins with interrupts off (hang.cpu=, hang.ms=, hang.marks=). */
bool job_hang(void);
/* run=marks: marks.count bench events per CPU, counts printed (kernel/job_marks.c). */
bool job_marks(void);
/* run=triple: reset through a triple fault, recording no end; does not return. */
bool job_triple(void);

#endif
