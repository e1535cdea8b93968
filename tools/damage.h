/*
 * What a damaged capture lost, said the same way in every output of the
 * decoder: the text's "# damaged:" line, the CTF metadata's env.damaged and
 * the trace.dat's uname option.
 */
#ifndef TOOLS_DAMAGE_H
#define TOOLS_DAMAGE_H

#include <stddef.h>
#include <stdint.h>

#include <trace/dump_read.h>

/*
 * Events lost in transit before page k of dc: those the page headers show
 * between it and the page before but that no frame reported (frames of
 * this CPU missing from the capture), as opposed to the ring's own losses
 * (overrun, dropped) that the kernel counted.  0 if none.
 */
uint64_t dump_transit_lost(const struct dump_cpu *dc, uint32_t k);

/*
 * One line (no newline) saying why r is not a whole verified dump: the
 * problems the reader reported, a missing BEGIN or END, events lost in
 * transit.  Returns false, with out "", for a complete dump.
 */
bool dump_damage_note(const struct dump_result *r, char *out, size_t len);

#endif
