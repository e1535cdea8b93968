/*
 * Cycles-to-nanoseconds conversion of the trace clock, and the latch that
 * publishes it to lock-free readers.
 *
 * Design
 * ------
 * The tracer timestamps events with raw counter readings; turning cycles
 * into ns is the read side's job (one multiply, one shift, one add per
 * timestamp).  Each CPU has one conversion (struct clock_conv), published
 * through its own struct clock_latch.  The conversion is the affine map
 *
 *	F(x) = offset_ns + floor((N + (x - cycle_base) * mult) / 2^shift)
 *	N    = ns_base * 2^shift + ns_frac		(fixed-point ns at cycle_base)
 *
 * evaluated in signed 128-bit arithmetic, where nothing can overflow:
 * |x - cycle_base| < 2^64, mult < 2^32, so the product is below 2^96.
 *
 * Contract of the latch
 * ---------------------
 * - Writer: one at a time per latch; the caller serialises (the owning
 *   CPU with interrupts off, or a lock).  Writes are rare: calibration and
 *   skew correction (128-bit evaluation never needs a periodic rebase).
 * - Readers: any number, on any CPU, in any context (task, IRQ, NMI),
 *   including one that interrupts the writer on the writer's own CPU.
 *   They take no lock, write nothing shared and never wait for a writer.
 * - An NMI reader that interrupts the writer succeeds at its first
 *   attempt (C1 below); a reader on another CPU retries only when the
 *   writer moves seq during its few-nanosecond read, so the retry bound
 *   CLOCK_LATCH_READ_TRIES is hit only by a writer storm, and then the
 *   reader reports failure instead of spinning.
 *
 * Glossary
 * --------
 *   seq     update count; readers use copy[seq & 1]
 *   spare   copy[(seq & 1) ^ 1], the copy readers are not sent to
 *   update  one clock_latch_write(): seq += 2, both copies rewritten
 *
 * Layout and one update (seq = 2k at rest; "new" is the conversion
 * being published, "old" the one it replaces):
 *
 *	           seq     copy[0]   copy[1]   readers use
 *	at rest     2k      old       old       copy[0]
 *	/A/       2k+1      old       old       copy[1]
 *	/B/       2k+1     >new<      old       copy[1]  (writer in copy[0])
 *	/C/       2k+2      new       old       copy[0]
 *	/D/       2k+2      new      >new<      copy[0]  (writer in copy[1])
 *	at rest   2k+2      new       new       copy[0]
 *
 *	key: >x< copy being stored to; /A/../D/ writer steps in
 *	clock_latch_write(); /E/../G/ reader steps in clock_latch_read().
 *
 * Invariants (C1..C5: the clock's own, not the ring buffer's I1..I11)
 * ----------
 *   C1: the writer stores only into the spare copy of the current seq:
 *       copy[0] while seq is odd, copy[1] while seq is even.
 *   C2: outside clock_latch_write() both copies are equal.
 *   C3: seq changes only in the writer, by +1 per step; a reader whose
 *       /E/ and /G/ loads return the same value read a copy that no store
 *       overlapped (assuming fewer than 2^32 updates during one read).
 *   C4: a conversion made by clock_conv_init()/clock_conv_rebase() has
 *       1 <= mult, shift <= CLOCK_SHIFT_MAX and ns_frac < 2^shift.
 *   C5: clock_conv_rebase() keeps N + (x - cycle_base) * mult, hence F(x),
 *       unchanged for every x.
 *
 * The copies are written field by field with release stores and read
 * with acquire loads, so that the race the protocol tolerates is not
 * undefined behaviour in C11 and a torn read is caught without separate
 * fences (which ThreadSanitizer does not model).  On x86-64 every order
 * used here compiles to plain moves; only the compiler is constrained.
 */
#include "baretrace/compiler.h"
#include "trace/clock.h"

#define U32_MAX	0xffffffffULL
#define U64_MAX	0xffffffffffffffffULL

/*
 * Choosing mult and shift
 * -----------------------
 * Want: mult / 2^shift ~= r = to_hz / from_hz.  Precision grows with
 * shift; the limits are
 *   (a) mult <= 2^32 - 1, and, only when a range is given,
 *   (b) for every delta <= max_cycles = max_range_seconds * from_hz,
 *       delta * mult + (2^shift - 1) <= 2^64 - 1, i.e. a conversion
 *       step inside the stated range, ns_frac included, fits 64 bits.
 * (b) is the criterion of Linux's clocks_calc_mult_shift(), evaluated
 * exactly rather than with the range rounded up to a power of two, and
 * with room for ns_frac.  The trace clock evaluates in 128 bits and asks
 * for no range (max_range_seconds = 0): (a) alone.  With L(s) = the
 * limit of (a), lowered by (b) to ((2^64 - 1) - (2^s - 1)) / max_cycles
 * when a range is given, mult(s) = round(r * 2^s) never decreases with s
 * and L(s) never increases, so the shifts that fit form a prefix
 * 0..s_best: scan upward and stop at the first misfit.
 *
 * mult(s) = floor((to * 2^s + from / 2) / from) is kept as quotient q and
 * remainder rem of to * 2^s by from, doubled once per step: only 64-bit
 * operations and a single 64-bit division.  q <= L(s) <= 2^32 before
 * each doubling, and rem < from, so nothing overflows (2 * rem is never
 * formed; rem >= from - rem is tested instead).
 *
 * Error bound
 * -----------
 * Assume s_best < 63 (true for ns at any from_hz <= 2^31 GHz), so mult
 * at s_best + 1 exceeded L(s_best + 1) ~= L(s_best) =: L.  Then:
 *   - mult = r * 2^s + e with |e| <= 1/2 (rounded to nearest);
 *   - round(2y) <= 2 * round(y) + 1, so 2 * mult + 1 > L: mult >= L / 2;
 *   - over d cycles F drifts from the exact d * r by d * e / 2^s
 *     = (d * r) * e / (r * 2^s), so the relative error is
 *     eps = |e| / (r * 2^s) <= 1 / (2 * mult - 1) <= 1 / (L - 1);
 *   - the floor adds less than 1 ns against an exact floor(d * r).
 * So |F(x) - floor(exact ns)| <= eps * elapsed_ns + 1 ns with
 *   eps <= 1 / (2^32 - 1) ~ 0.00024 ppm when (a) binds (mult >= 2^31),
 *   eps ~<= max_range_seconds * from / 2^64   when (b) binds.
 * The trace clock has no range, so the first holds at every frequency;
 * and it holds over any span, whatever the distance from cycle_base
 * (128-bit evaluation; a rebase is exact, C5).
 */
int clock_calc_mult_shift(uint32_t *mult, uint32_t *shift, uint64_t from_hz,
			  uint64_t to_hz, uint64_t max_range_seconds)
{
	uint64_t max_cycles, q, rem, m, limit, best_m = 0;
	uint32_t s, best_s = 0;

	if (from_hz == 0 || to_hz == 0)
		return -1;
	if (max_range_seconds > U64_MAX / from_hz)
		return -1;
	max_cycles = max_range_seconds * from_hz;	/* 0: no range (128-bit use) */

	q = to_hz / from_hz;
	rem = to_hz % from_hz;
	for (s = 0; s <= CLOCK_SHIFT_MAX; s++) {
		if (s > 0) {
			/* to * 2^s = 2 * (q * from + rem): carry out of 2 * rem. */
			if (rem >= from_hz - rem) {
				q = 2 * q + 1;
				rem -= from_hz - rem;
			} else {
				q = 2 * q;
				rem = 2 * rem;
			}
		}
		/*
		 * Round half up.  q + 1 cannot wrap: it needs rem > 0, and
		 * at s = 0 that means q < to_hz; later q < 2^33.
		 */
		m = q + (rem >= from_hz - rem);
		limit = U32_MAX;
		if (max_cycles && (U64_MAX - ((1ULL << s) - 1)) / max_cycles < limit)
			limit = (U64_MAX - ((1ULL << s) - 1)) / max_cycles;
		if (m > limit)
			break;
		if (m >= 1) {
			best_m = m;
			best_s = s;
		}
	}
	if (best_m == 0)
		return -1;
	*mult = (uint32_t)best_m;
	*shift = best_s;
	return 0;
}

int clock_conv_init(struct clock_conv *conv, uint64_t hz, uint64_t cycle_base,
		    int64_t ns_base)
{
	uint32_t mult, shift;

	if (hz == 0 || hz > CLOCK_HZ_MAX)
		return -1;
	/* Cannot fail for 1 <= hz <= CLOCK_HZ_MAX; checked all the same. */
	if (clock_calc_mult_shift(&mult, &shift, hz, CLOCK_NSEC_PER_SEC, 0))
		return -1;
	conv->cycle_base = cycle_base;
	conv->ns_base = ns_base;
	conv->ns_frac = 0;
	conv->offset_ns = 0;
	conv->hz = hz;
	/* The largest d with d * mult + (2^shift - 1) within 64 bits. */
	conv->max_cycles = (U64_MAX - ((1ULL << shift) - 1)) / mult;
	conv->mult = mult;
	conv->shift = shift;
	return 0;
}

/*
 * N + (x - cycle_base) * mult - ns_base * 2^shift, i.e. the fixed-point
 * ns elapsed from ns_base to x, negative before cycle_base.
 * |x - cycle_base| < 2^64 and mult < 2^32: |result| < 2^96 + 2^63.
 */
static __int128 clk_scaled(const struct clock_conv *conv, uint64_t cycles)
{
	__int128 d = (__int128)cycles - (__int128)conv->cycle_base;

	return d * conv->mult + (__int128)conv->ns_frac;
}

/*
 * floor(v / 2^shift).  GCC defines >> of a negative signed value as an
 * arithmetic shift, which is exactly the floor; shift <= 63 < 128.
 */
static __int128 clk_floor_shift(__int128 v, uint32_t shift)
{
	return v >> shift;
}

static int64_t clk_saturate(__int128 v)
{
	if (v > (__int128)INT64_MAX)
		return INT64_MAX;
	if (v < (__int128)INT64_MIN)
		return INT64_MIN;
	return (int64_t)v;
}

int64_t clock_cycles_to_ns(const struct clock_conv *conv, uint64_t cycles)
{
	__int128 ns;

	/* Precondition (a dump may be corrupt): keep the shift defined. */
	if (unlikely(conv->shift > CLOCK_SHIFT_MAX))
		return 0;
	/*
	 * Each term is below 2^97 in magnitude, so the sum cannot overflow
	 * and saturating once at the end is exact.  Non-decreasing in
	 * cycles: clk_scaled() is (mult >= 0) and so is the floor.
	 */
	ns = clk_floor_shift(clk_scaled(conv, cycles), conv->shift);
	ns += conv->ns_base;
	ns += conv->offset_ns;
	return clk_saturate(ns);
}

int clock_conv_rebase(struct clock_conv *conv, uint64_t cycles)
{
	__int128 p, q, ns_base;

	if (unlikely(conv->shift > CLOCK_SHIFT_MAX))
		return -1;
	p = clk_scaled(conv, cycles);
	q = clk_floor_shift(p, conv->shift);
	ns_base = conv->ns_base + q;
	if (ns_base > INT64_MAX || ns_base < INT64_MIN)
		return -1;
	/*
	 * Keeps C5: the new N is ns_base' * 2^s + frac'
	 *   = (ns_base + q) * 2^s + (p - q * 2^s) = N + (cycles - base) * mult,
	 * so for any x, N' + (x - cycles) * mult = N + (x - base) * mult.
	 * frac' = p - q * 2^s lies in [0, 2^s) because q is the floor (C4).
	 */
	conv->ns_frac = (uint64_t)(p - q * ((__int128)1 << conv->shift));
	conv->ns_base = (int64_t)ns_base;
	conv->cycle_base = cycles;
	return 0;
}

int clock_conv_check(const struct clock_conv *conv)
{
	if (conv->mult == 0 || conv->shift > CLOCK_SHIFT_MAX)
		return -1;
	if (conv->ns_frac >> conv->shift)
		return -1;
	return 0;
}

/*
 * Field-by-field copies into and out of a latch copy.  Each store is a
 * release and each load an acquire, which is what makes a torn read
 * detectable: see /B/, /D/ and /F/.  On x86-64 both are plain moves.
 */
static void clk_conv_store(struct clock_conv *dst, const struct clock_conv *src)
{
	__atomic_store_n(&dst->cycle_base, src->cycle_base, __ATOMIC_RELEASE);
	__atomic_store_n(&dst->ns_base, src->ns_base, __ATOMIC_RELEASE);
	__atomic_store_n(&dst->ns_frac, src->ns_frac, __ATOMIC_RELEASE);
	__atomic_store_n(&dst->offset_ns, src->offset_ns, __ATOMIC_RELEASE);
	__atomic_store_n(&dst->hz, src->hz, __ATOMIC_RELEASE);
	__atomic_store_n(&dst->max_cycles, src->max_cycles, __ATOMIC_RELEASE);
	__atomic_store_n(&dst->mult, src->mult, __ATOMIC_RELEASE);
	__atomic_store_n(&dst->shift, src->shift, __ATOMIC_RELEASE);
}

static void clk_conv_load(struct clock_conv *dst, const struct clock_conv *src)
{
	dst->cycle_base = __atomic_load_n(&src->cycle_base, __ATOMIC_ACQUIRE);
	dst->ns_base = __atomic_load_n(&src->ns_base, __ATOMIC_ACQUIRE);
	dst->ns_frac = __atomic_load_n(&src->ns_frac, __ATOMIC_ACQUIRE);
	dst->offset_ns = __atomic_load_n(&src->offset_ns, __ATOMIC_ACQUIRE);
	dst->hz = __atomic_load_n(&src->hz, __ATOMIC_ACQUIRE);
	dst->max_cycles = __atomic_load_n(&src->max_cycles, __ATOMIC_ACQUIRE);
	dst->mult = __atomic_load_n(&src->mult, __ATOMIC_ACQUIRE);
	dst->shift = __atomic_load_n(&src->shift, __ATOMIC_ACQUIRE);
}

static struct clock_conv *clk_spare(struct clock_latch *latch, uint32_t seq)
{
	return &latch->copy[(seq & 1) ^ 1];
}

void clock_latch_write(struct clock_latch *latch, const struct clock_conv *conv)
{
	/* Relaxed: this is the only writer of seq (contract). */
	uint32_t seq = __atomic_load_n(&latch->seq, __ATOMIC_RELAXED);

	/*
	 * /A/ Send readers to the other copy.  Release; pairs with the
	 * acquire at /E/: a reader that sees seq + 1 is sent to the copy
	 * the previous update filled at /D/ and sees all of those stores.
	 */
	__atomic_store_n(&latch->seq, seq + 1, __ATOMIC_RELEASE);
	/*
	 * /B/ Into the copy readers just left (copy[0] from rest; C1).
	 * Release stores; pair with the acquire loads at /F/: a reader
	 * whose /F/ sees any /B/ store also sees /A/, so its /G/ reloads a
	 * seq of at least seq + 1 and it retries (C3).
	 */
	clk_conv_store(clk_spare(latch, seq + 1), conv);

	/*
	 * /C/ Send readers back to the copy just written.  Release; pairs
	 * with the acquire at /E/: a reader that sees seq + 2 sees all of /B/.
	 */
	__atomic_store_n(&latch->seq, seq + 2, __ATOMIC_RELEASE);
	/*
	 * /D/ C1 again: the copy readers left at /C/.  Release stores; pair
	 * with /F/ as at /B/, so overlapping readers find seq + 2 at /G/.
	 * Afterwards C2 holds.
	 */
	clk_conv_store(clk_spare(latch, seq + 2), conv);
}

int clock_latch_read(const struct clock_latch *latch, struct clock_conv *out)
{
	uint32_t seq, tries;

	for (tries = 0; tries < CLOCK_LATCH_READ_TRIES; tries++) {
		/* /E/ Acquire; pairs with the release stores at /A/ and /C/. */
		seq = __atomic_load_n(&latch->seq, __ATOMIC_ACQUIRE);
		/*
		 * /F/ By C1 the writer is not storing into copy[seq & 1]
		 * while seq holds this value.  An NMI that interrupted the
		 * writer anywhere in /A/../D/ lands here with the writer
		 * frozen, so its /G/ always matches: first try succeeds.
		 * Acquire loads; pair with the release stores at /B/ and
		 * /D/, and keep /G/ from being satisfied before them.
		 */
		clk_conv_load(out, &latch->copy[seq & 1]);
		/* /G/ Unchanged seq: no update overlapped /F/ (C3). */
		if (__atomic_load_n(&latch->seq, __ATOMIC_RELAXED) == seq)
			return 0;
	}
	return -1;
}

int clock_latch_cycles_to_ns(const struct clock_latch *latch, uint64_t cycles,
			     int64_t *ns)
{
	struct clock_conv conv;

	if (clock_latch_read(latch, &conv))
		return -1;
	*ns = clock_cycles_to_ns(&conv, cycles);
	return 0;
}

int clock_latch_rebase(struct clock_latch *latch, uint64_t cycles)
{
	struct clock_conv conv;

	/* The caller is the only writer, so this read cannot be overtaken. */
	if (clock_latch_read(latch, &conv))
		return -1;
	if (clock_conv_rebase(&conv, cycles))
		return -1;
	clock_latch_write(latch, &conv);
	return 0;
}
