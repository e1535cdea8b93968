/*
 * trace-cmd's trace.dat (file version 6) from a decoded dump, for
 * `trace-cmd report` and KernelShark.  See tools/trace_dat.c for the
 * layout and docs/trace-dat.md for how to read it.
 */
#ifndef TOOLS_TRACE_DAT_H
#define TOOLS_TRACE_DAT_H

#include <stdio.h>

#include <trace/dump_read.h>

/*
 * Write r as a trace.dat at path (replaced if it exists).  Notes (times
 * shifted, untrusted clocks) and problems go to err.  Returns 0, or -1 on
 * an I/O error or when out of memory.
 */
int trace_dat_write(const char *path, const struct dump_result *r, FILE *err);

#endif
