/*
 * Cycles-to-nanoseconds conversion of the trace clock.
 *
 * The write path of the tracer stores raw counter readings (cycles); the
 * read side turns them into nanoseconds with one affine function per CPU:
 *
 *	ns(cycles) = offset_ns + floor((N + (cycles - cycle_base) * mult) / 2^shift)
 *	N          = ns_base * 2^shift + ns_frac
 *
 * N is the nanosecond value at cycle_base in fixed point, so that moving
 * the base (a rebase) loses no fraction and leaves ns() bit-for-bit the
 * same.  The formula is evaluated in 128 bits, where nothing overflows for
 * any reading, so no range limits the choice of mult/shift: shift is the
 * largest for which mult fits 32 bits, which puts mult in [2^31, 2^32) and
 * its relative error below 2^-32 (0.00024 ppm) at every frequency, and no
 * conversion ever needs rebasing.  max_cycles states how far from
 * cycle_base a 64-bit-only evaluation would still be exact (seconds at GHz
 * rates), for tools that have no 128-bit integers.
 *
 * struct clock_conv is also written into binary dumps and read by host
 * tools: fixed-width fields, host byte order (little-endian x86-64), no
 * pointers, layout pinned by the static assertions below.
 *
 * Readers find the current conversion of a CPU through a struct
 * clock_latch (two copies and a sequence count) without locks, from any
 * context including NMI; see trace/clock.c for the protocol and
 * docs/clock.md for the derivations.
 */
#ifndef TRACE_CLOCK_H
#define TRACE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#define CLOCK_NSEC_PER_SEC	1000000000ULL

/*
 * Largest counter frequency clock_conv_init() accepts: a sanity bound for
 * conversions read from dumps (the precision of mult does not depend on
 * the frequency; see trace/clock.c).
 */
#define CLOCK_HZ_MAX		20000000000ULL

/* Reader attempts before clock_latch_read() gives up (see trace/clock.c). */
#define CLOCK_LATCH_READ_TRIES	16

/* Largest shift: ns_frac < 2^shift must fit a uint64_t. */
#define CLOCK_SHIFT_MAX		63

struct clock_conv {
	uint64_t cycle_base;	/* counter reading the conversion is anchored at */
	int64_t  ns_base;	/* whole ns at cycle_base, offset_ns not included */
	uint64_t ns_frac;	/* fraction of a ns at cycle_base, in 2^-shift ns; < 2^shift */
	int64_t  offset_ns;	/* added to every result; kernel: 0 (an AP's skew is in cycle_base) */
	uint64_t hz;		/* counter frequency mult was derived from, cycles per second */
	uint64_t max_cycles;	/* |cycles - cycle_base| this far is exact in 64 bits too */
	uint32_t mult;		/* ns per cycle scaled by 2^shift, rounded to nearest */
	uint32_t shift;		/* binary point of mult, 0..CLOCK_SHIFT_MAX */
};

_Static_assert(sizeof(struct clock_conv) == 56, "clock_conv is a dump format");
_Static_assert(__builtin_offsetof(struct clock_conv, max_cycles) == 40,
	       "clock_conv is a dump format");
_Static_assert(__builtin_offsetof(struct clock_conv, mult) == 48,
	       "clock_conv is a dump format");

/*
 * The printed form of a conversion: every parameter of the formula above,
 * in the order it names them (console `clock:` lines, the shell's `clock`).
 */
#define CLOCK_CONV_FMT	"mult=%u shift=%u offset_ns=%lld cycle_base=%llu ns_base=%lld ns_frac=%llu"
#define CLOCK_CONV_ARGS(c)						\
	(c).mult, (c).shift, (long long)(c).offset_ns,			\
	(unsigned long long)(c).cycle_base, (long long)(c).ns_base,	\
	(unsigned long long)(c).ns_frac

/*
 * Seqcount latch: copy[seq & 1] is the copy readers use; the single
 * writer always edits the other one.  Zero-initialised it is valid and
 * converts every reading to 0 ns.
 */
struct clock_latch {
	uint32_t seq;			/* update count; bit 0 selects readers' copy */
	uint32_t pad;			/* zero; keeps copy[] 8-byte aligned in dumps */
	struct clock_conv copy[2];	/* the two versions readers alternate between */
};

/*
 * Pick mult and shift so that cycles * mult >> shift converts from_hz
 * units to to_hz units: the largest shift <= CLOCK_SHIFT_MAX such that
 * mult fits 32 bits and, when max_range_seconds is not 0, for every
 * delta <= max_range_seconds * from_hz, delta * mult + (2^shift - 1)
 * fits 64 bits (Linux's criterion, for 64-bit evaluation).
 * max_range_seconds = 0: no range, for evaluation in 128 bits.
 * Returns 0, or -1 (outputs untouched) if a frequency is 0, if the range
 * in cycles overflows 64 bits, or if no shift gives a mult in
 * 1..UINT32_MAX.
 */
int clock_calc_mult_shift(uint32_t *mult, uint32_t *shift, uint64_t from_hz,
			  uint64_t to_hz, uint64_t max_range_seconds);

/*
 * Set up a cycles-to-ns conversion for a counter of hz cycles per second
 * that reads ns_base at counter value cycle_base, for 128-bit evaluation
 * (max_range_seconds 0 above); max_cycles is set to the distance from
 * cycle_base that a 64-bit evaluation still handles.  offset_ns starts at
 * 0.  Returns 0, or -1 if hz is 0 or above CLOCK_HZ_MAX (conv untouched).
 */
int clock_conv_init(struct clock_conv *conv, uint64_t hz, uint64_t cycle_base,
		    int64_t ns_base);

/*
 * Nanoseconds at counter reading cycles.  Defined for every cycles value
 * (on either side of cycle_base, inside the range or not), non-decreasing
 * in cycles, saturating at INT64_MIN/INT64_MAX.  Pure: safe anywhere.
 * Precondition: clock_conv_check(conv) == 0, or conv is zero-initialised
 * (then every reading gives 0).  A shift above CLOCK_SHIFT_MAX, as in a
 * corrupt dump, also gives 0 rather than undefined behaviour.
 */
int64_t clock_cycles_to_ns(const struct clock_conv *conv, uint64_t cycles);

/*
 * Move conv's base to counter value cycles without changing what
 * clock_cycles_to_ns() returns for any reading.  Returns 0, or -1
 * (conv untouched) if ns_base would leave int64_t or shift is invalid.
 */
int clock_conv_rebase(struct clock_conv *conv, uint64_t cycles);

/*
 * 0 if conv has the shape clock_conv_init() and clock_conv_rebase() give
 * (mult >= 1, shift <= CLOCK_SHIFT_MAX, ns_frac < 2^shift), else -1.
 * For tools reading conversions from dumps.
 */
int clock_conv_check(const struct clock_conv *conv);

/*
 * Publish conv as the latch's current conversion.  Writers of one latch
 * must be serialised by the caller (the owning CPU with interrupts off,
 * or a lock); readers need nothing.  Wait-free.
 */
void clock_latch_write(struct clock_latch *latch, const struct clock_conv *conv);

/*
 * Copy the latch's current conversion into *out.  Lock-free, callable
 * from any context including NMI, never waits for the writer.  Returns 0,
 * or -1 after CLOCK_LATCH_READ_TRIES attempts each overtaken by a
 * concurrent update (then *out is unusable).
 */
int clock_latch_read(const struct clock_latch *latch, struct clock_conv *out);

/* clock_latch_read() then clock_cycles_to_ns(); same return as the read. */
int clock_latch_cycles_to_ns(const struct clock_latch *latch, uint64_t cycles,
			     int64_t *ns);

/*
 * Writer side: rebase the latch's conversion to counter value cycles and
 * publish it.  Same serialisation rule as clock_latch_write().
 * Returns clock_conv_rebase()'s result; on -1 nothing is published.
 */
int clock_latch_rebase(struct clock_latch *latch, uint64_t cycles);

#endif
