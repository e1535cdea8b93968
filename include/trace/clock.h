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
 * same.  mult/shift are chosen like Linux's clocks_calc_mult_shift(): the
 * largest shift for which every intermediate stays within 64 bits while
 * |cycles - cycle_base| <= max_cycles, the stated range of one conversion
 * step (CLOCK_RANGE_SEC seconds of cycles).  The arithmetic is done in
 * 128 bits anyway, so a timestamp outside the range still converts
 * correctly; it just is not promised to fit a 64-bit implementation.
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
 * Stated range of one conversion step: for up to this many seconds of
 * cycles on either side of cycle_base a conversion needs only 64 bits.
 * The kernel rebases at least every CLOCK_REBASE_SEC so that both the
 * newest and any event up to CLOCK_REBASE_SEC old stay inside it.
 */
#define CLOCK_RANGE_SEC		600ULL
#define CLOCK_REBASE_SEC	(CLOCK_RANGE_SEC / 2)

/*
 * Largest counter frequency clock_conv_init() accepts.  With the range
 * above, the relative error of mult is at most about
 * CLOCK_RANGE_SEC * hz / 2^64 (derivation in trace/clock.c): 0.33 ppm at
 * 10 GHz, 0.65 ppm at 20 GHz, 1 ppm only past 30 GHz.
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
	uint64_t max_cycles;	/* stated range: |cycles - cycle_base| this far is 64-bit safe */
	uint32_t mult;		/* ns per cycle scaled by 2^shift, rounded to nearest */
	uint32_t shift;		/* binary point of mult, 0..CLOCK_SHIFT_MAX */
};

_Static_assert(sizeof(struct clock_conv) == 56, "clock_conv is a dump format");
_Static_assert(__builtin_offsetof(struct clock_conv, max_cycles) == 40,
	       "clock_conv is a dump format");
_Static_assert(__builtin_offsetof(struct clock_conv, mult) == 48,
	       "clock_conv is a dump format");

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
 * mult fits 32 bits and, for every delta <= max_range_seconds * from_hz,
 * delta * mult + (2^shift - 1) fits 64 bits.
 * Returns 0, or -1 (outputs untouched) if a frequency or the range is 0,
 * if the range in cycles overflows 64 bits, or if no shift gives a mult
 * in 1..UINT32_MAX.
 */
int clock_calc_mult_shift(uint32_t *mult, uint32_t *shift, uint64_t from_hz,
			  uint64_t to_hz, uint64_t max_range_seconds);

/*
 * Set up a cycles-to-ns conversion for a counter of hz cycles per second
 * that reads ns_base at counter value cycle_base, over CLOCK_RANGE_SEC.
 * offset_ns starts at 0.  Returns 0, or -1 if hz is 0 or above
 * CLOCK_HZ_MAX (conv untouched).
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

/* True once cycles is more than half the range away from cycle_base. */
bool clock_conv_rebase_due(const struct clock_conv *conv, uint64_t cycles);

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
