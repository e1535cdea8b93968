/*
 * An independent check of what the dump reader accepted from a capture's
 * description frames (EVENTS, SYMS, PRINTK): every rule the format states
 * (<trace/dump_format.h>, <trace/trace_event.h>, docs/dump-format.md),
 * written again here rather than taken from trace/dump_read.c, so that a
 * rule the reader forgets to check is caught whatever the reader thinks.
 * Then every event on every accepted page is parsed with the accepted
 * descriptions and each accepted one is checked against its payload's
 * bounds and formatted.  Shared by the bit-flip test and the fuzzer.
 */
#ifndef TESTS_DESC_CHECK_H
#define TESTS_DESC_CHECK_H

#include <stddef.h>

#include <trace/dump_read.h>

/*
 * 0 if r (a dump_read() result, OK or DAMAGED) holds only consistent
 * descriptions, symbols and formats and every event they accept lies in
 * its payload; otherwise -1 with the first rule broken in why.
 */
int desc_check(const struct dump_result *r, char *why, size_t n);

#endif
