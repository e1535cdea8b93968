/*
 * Per-CPU lockless trace ring buffer: API, per-CPU structure, fast paths.
 *
 * CONTRACT
 *   Writers: only contexts of the owning CPU write its buffer.  They nest
 *   like a stack: a task writer may be interrupted by an IRQ writer, which
 *   may be interrupted by an NMI writer; each inner writer finishes before
 *   the one it interrupted resumes.  Writers never wait and never take locks:
 *   when they cannot proceed they drop the event and count it.
 *   Reader: any one CPU at a time (a try-lock refuses a second reader).  It
 *   takes whole pages out of the ring while writers keep going, and gives
 *   each page back as its spare on its next take.  A reader may run on the
 *   owning CPU and be interrupted by writers there.
 *   Control (record on/off, stop, stats): any CPU, any time.
 *   The page the writers are on is not readable; ring_buffer_flush() on the
 *   owning CPU ends it early.
 *
 * GLOSSARY
 *   N          ring pages of one CPU (nr_slots); N + 1 pages exist, the extra
 *              one being the reader's page.
 *   position   a page's place in the CPU's stream, counting up from N; the
 *              page at position p lives in slot p % N.  Header pos = p - N.
 *   tail       the page writers reserve space on (tail_pos).
 *   commit     commit_pos: every page before it is complete and final.
 *   read       read_pos: the next position the reader wants.
 *   gen        the low 32 bits of a position; tags the write word.
 *   write word {gen:32 | offset:32} of the tail page, moved by a local xadd.
 *   record     rec bytes reserved by one xadd: data, or extend/abs + data.
 *   crosser    the one writer whose xadd starts inside the page but ends past
 *              its capacity; it pads the page end and sets the page commit.
 *   switch     moving the tail to the next position (rb_switch_page).
 *   publish    the outermost writer finalising pages and moving commit_pos.
 *   void       an interrupted reservation turned into padding and retried.
 *
 * LAYOUT (one CPU, N = 4)
 *
 *     slot:     0            1            2            3
 *             +------------+------------+------------+------------+
 *   slots[]   | 8 . pg 2   | 5 c pg 4   | 6 . pg 1   | 7 . pg 0   |
 *             +------------+------------+------------+------------+
 *               tail_pos 8                read_pos 6                commit_pos 8
 *   reader_page: pg 3, holding position 5 (the last page the reader took)
 *
 *   slot word: | pos (47 bits) | consumed (1) | page id (16) |
 *
 *   Key: "8 . pg 2" = page 2 holds position 8, not consumed; "c" = consumed:
 *   the reader took position 5 and left its previous page (pg 4) in the
 *   slot as a spare the writer may reuse freely.  Positions 6 and 7 are
 *   complete and readable (before commit_pos); 8 is being written.

 *   tail page:  | header | committed | reserved, in progress |  free  |
 *                        ^0                        write.offset ^     ^ cap
 *
 * INVARIANTS
 *   I1  The write word changes on every reservation attempt (+rec, rec >= 4)
 *       and on every switch (gen + 1, offset 0); offsets only grow within a
 *       gen.  So a writer that finds the word unchanged between two points
 *       knows no reservation and no switch happened on its CPU in between.
 *   I2  A reservation owns [offset, offset + rec) on the page of its gen.  It
 *       succeeded iff the word was unchanged since the writer's stamp and
 *       offset + rec <= cap.  The unique xadd with offset <= cap <
 *       offset + rec is the page's crosser; only it writes the page's commit.
 *   I3  commit_pos <= tail_pos.  Pages before commit_pos are complete: no
 *       writer holds space in them and their headers are final.
 *   I4  Slot i holds {pos, consumed, id} with pos % N == i and
 *       tail_pos - N < pos <= tail_pos.  The N slot ids plus reader_page are
 *       the N + 1 page ids, each exactly once.
 *   I5  The writer reuses the slot of position q - N for position q only if it
 *       was consumed, or in overwrite mode if q - N < commit_pos (the page is
 *       complete; its events become overrun).  Otherwise it drops the event:
 *       "commit overrun" if q - N >= commit_pos (that page may still hold a
 *       writer's space), else "full" (discard mode).
 *   I6  The reader takes position h only when h < commit_pos and the slot
 *       still reads {h, not consumed}; its CAS makes the page its own.  The
 *       writer never touches that page again until the reader hands it back.
 *   I7  nest bit L is set while a level-L writer is between reserve and
 *       commit; bit 30 while a publish runs; bit 31 (unpublished) from a
 *       switch until the publish that covers it.  Bits 4..29 are always
 *       zero.  A writer may only start if no writer of its level or above
 *       is active: with no flag set that is nest < 1 << L, one compare.
 *       Every context clears the level bit it set before it returns, so
 *       the innermost writer holds the highest level bit.  The word is
 *       only changed by single read-modify-write instructions (local or,
 *       and, sub), so a flag an interrupt sets is never lost.
 *   I8  Only a context whose commit leaves no level bit and no publish bit
 *       publishes, and it holds the publish bit meanwhile, so publishes
 *       never nest; commit_pos is stored with release.  Every switch sets
 *       unpublished after moving the tail; a publish clears it before it
 *       reads the tail, so no switch goes unpublished.
 *   I9  At most one context per CPU is inside a switch (switching flag); a
 *       nested writer that needs a switch meanwhile drops its event (busy).
 *   I10 Stamps never decrease in buffer order; every stamp on a page is at
 *       least the page base and at most the next page's base, provided the
 *       clock never steps back (proof in the design notes; rests on I1 and
 *       I2).  A step back below the page base is clamped at write time and
 *       counted; any other step back is found and counted by the reader,
 *       which checks every stamp of every page it takes.
 *   I11 The offset of a closed page stays below cap + RB_NEST_MAX * (cap + 1):
 *       each xadd that finds the page closed gives its size back before its
 *       context returns (rb_give_back), so only the crosser's xadd and at
 *       most one in-flight xadd per nested context (a reservation, or a
 *       flush's cap + 1) are ever in it.  So offset + rec never wraps 32
 *       bits and never carries into gen.
 *   I12 gate is 0 only while state is RB_STATE_RECORDING, and 1 only
 *       while it is RB_STATE_OFF (2 otherwise), once every
 *       state change has returned: each change re-derives gate from state
 *       until state holds still across the store (rb_sync_gate), so the
 *       last store of gate follows the last change of state.  A writer
 *       that reads the guard word in between is one that read state a
 *       moment earlier: on the owning CPU a change made there is seen by
 *       the next writer.  Zeroed memory reads gate 0 (open) but state
 *       NONE and cap 0: the fast path always leaves for the slow path,
 *       which reads state first and refuses; the placeholder for absent
 *       CPUs is closed (gate 2) from the start.
 *
 * HOOKS: what <arch/trace_arch.h> must provide.  The kernel's is in
 * arch/x86/include/arch/, the host tests' shim in tests/host/include/arch/.
 * Every hook may be called in any context, including NMI, and must not
 * call back into the ring buffer.  Besides these, arch_rb_step() (below)
 * may be defined by a test shim.
 *
 *   uint64_t arch_read_cycles(void)
 *	The raw trace clock of the calling CPU (TSC cycles in the kernel).
 *	Successive reads on one CPU must never decrease *in program order*,
 *	including across interrupt entry and exit.  If the CPU may execute the
 *	read ahead of earlier instructions, the hook must order it (lfence;
 *	rdtsc or rdtscp).  It is also a compiler barrier: no load or store
 *	moves across it (the timestamp proof needs the write word's load
 *	before the stamp).  No conversion: readers normalise.
 *
 *   bool arch_cycles_since(const uint64_t *base, uint32_t *delta)
 *	arch_read_cycles() - *base: if that is below 2^32 (as an unsigned
 *	64-bit difference), true with it in *delta; else false.  *base may be
 *	read before or after the clock, and need not be read atomically: the
 *	writer rejects a stamp taken across a change of *base by itself.
 *
 *   uint64_t arch_local_xadd(uint64_t *p, uint64_t v)
 *	*p += v, returning the old value, as ONE instruction that cannot be
 *	split by an interrupt on this CPU.  Only this CPU ever writes *p, so no
 *	bus lock is needed: on x86, xadd without the LOCK prefix.
 *
 *   uint64_t arch_local_cmpxchg(uint64_t *p, uint64_t old, uint64_t new)
 *	If *p == old then *p = new; returns the previous *p.  Atomic against
 *	interrupts on this CPU only: on x86, cmpxchg without LOCK.
 *
 *   void arch_local_add32(uint32_t *p, uint32_t v)
 *   void arch_local_or32(uint32_t *p, uint64_t v)
 *   void arch_local_and32(uint32_t *p, uint32_t v)
 *	*p += v, |= v, &= v as one interrupt-atomic instruction (x86: addl,
 *	orl, andl without LOCK).  or32 uses v's low 32 bits.
 *
 *   bool arch_local_sub32_zero(uint32_t *p, uint64_t v)
 *	*p -= v's low 32 bits as one interrupt-atomic instruction; true iff
 *	*p is now 0.
 *
 *   (the 64-bit v of or32 and sub32_zero: the level bit is a 64-bit value
 *   for the guard compare, and passes as it is.)
 *
 *   uint64_t arch_trace_level_bit(void)
 *	1 << L, where L is the context the caller runs in, 0 .. RB_NEST_MAX - 1,
 *	such that a context can only be interrupted by one of a strictly higher
 *	level: 0 task, 1 soft interrupt, 2 hard interrupt, 3 NMI; 0 if there is
 *	no valid level.  The ring buffer's recursion guard uses it; a wrong
 *	answer is refused, not trusted.  The fast path reads it twice per
 *	event, so an arch keeps it ready (the kernel per CPU, beside the level
 *	itself) rather than shifting a level each time.
 *
 *   void arch_trace_warn(unsigned cpu, const char *why)
 *	Report that recording on cpu was stopped because an invariant broke.
 *	Called at most once per stop, possibly from NMI: it may only record or
 *	print through a path that is safe there.  It must return.
 *
 * INTERLEAVING POINTS of a reservation, referred to as /x/ below:
 *   A load the write word   B read the clock   C xadd   D check the word
 *   E fill the header       F release the nest bit, and in the same
 *                             instruction G: see whether a publish is due
 * An interrupt between A and C makes D fail: the space is voided, and the
 * writer retries with a new stamp.  Between C and E it writes after us and
 * stamps later.  After F it is itself outermost and publishes.
 */
#ifndef TRACE_RING_BUFFER_H
#define TRACE_RING_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <arch/trace_arch.h>
#include <baretrace/compiler.h>
#include <trace/rb_counters.h>
#include <trace/ring_format.h>

/* Build option: reserve with a local cmpxchg loop instead of an xadd. */
#ifndef CONFIG_TRACE_RESERVE_CMPXCHG
#define CONFIG_TRACE_RESERVE_CMPXCHG	0
#endif

#define RB_NEST_MAX		4u	/* context levels, hence nesting depth */
/*
 * The nest word (I7, I8):
 *
 *    31    30    29 ............ 4   3    2    1    0
 *   +-----+-----+-----------------+----+----+----+----+
 *   | unp | pub |  always zero    | L3 | L2 | L1 | L0 |
 *   +-----+-----+-----------------+----+----+----+----+
 *
 *   Ln  a writer of context level n is between reserve and commit
 *   pub a publish is running: writers that interrupt it do not publish
 *   unp the tail moved since the last publish: the outermost commit publishes
 *
 * So "may a level-L writer start?" is nest < 1 << L when no flag is set,
 * and "may this commit return at once?" is nest - (1 << L) == 0: both
 * answered by the flags of one instruction.  A set flag sends the writer
 * to the slow path, which looks closer.  A commit whose bit was not held
 * borrows into the zero bits, which the slow path sees and undoes.
 */
#define RB_NEST_WRITERS		((1u << RB_NEST_MAX) - 1)
#define RB_NEST_PUBLISH		(1u << 30)
#define RB_NEST_UNPUBLISHED	(1u << 31)
#define RB_NEST_GUARD		(~(RB_NEST_WRITERS | RB_NEST_PUBLISH | RB_NEST_UNPUBLISHED))
#define RB_MAX_PAGES		65535u	/* ring pages per CPU (16-bit page ids) */

/* I11: the largest closed-page offset plus any rec stays within 32 bits. */
_Static_assert((uint64_t)RB_PAGE_SIZE_MAX * (RB_NEST_MAX + 1) + RB_PAGE_SIZE_MAX <
	       (1ull << 32), "closed-page offsets fit the write word's 32 bits");

/*
 * Test injection points.  Right after each labelled step of the design
 * (A..G of the fast path below, S1..S6 and P1..P4 of the writer's slow
 * paths, R1..R3 of the reader) the code calls arch_rb_step(RB_STEP_x).
 * The kernel leaves it undefined, so it compiles to nothing; the host
 * tests' shim runs an injected interrupt or a remote reader there.
 */
enum rb_step {
	RB_STEP_FAST_A, RB_STEP_FAST_B, RB_STEP_FAST_C, RB_STEP_FAST_D, RB_STEP_FAST_E,
	RB_STEP_SLOW_A, RB_STEP_SLOW_B, RB_STEP_SLOW_C, RB_STEP_SLOW_D, RB_STEP_SLOW_E,
	RB_STEP_VOID,		/* an interrupted reservation turned into padding */
	RB_STEP_CROSS,		/* the crosser padded the page end, set commit */
	RB_STEP_GIVE_BACK,	/* an xadd on a closed page took its size back */
	RB_STEP_S1, RB_STEP_S2, RB_STEP_S3, RB_STEP_S4, RB_STEP_S5, RB_STEP_S6,
	RB_STEP_F,		/* commit released its nest bit */
	RB_STEP_P1, RB_STEP_P2, RB_STEP_P3, RB_STEP_P4,
	RB_STEP_FLUSH,		/* flush took its nest bit */
	RB_STEP_FLUSH_CLOSE,	/* flush's closing xadd */
	RB_STEP_R1, RB_STEP_R2, RB_STEP_R3,
	/*
	 * Between the labelled steps: one after every other access to a word
	 * an interrupt or another CPU may change, and before every decision
	 * made on one, so that a test can interrupt the gaps too.
	 */
	RB_STEP_FAST_GUARD,	/* guard passed; level bit not yet taken */
	RB_STEP_FAST_NEST,	/* level bit taken; write word not loaded */
	RB_STEP_FAST_W,		/* write word loaded, tail page not yet */
	RB_STEP_FAST_STORE,	/* record stored, entries not yet counted */
	RB_STEP_COMMIT,		/* payload done, level bit not yet released */
	RB_STEP_COMMIT_SLOW,	/* commit's slow path read nest */
	RB_STEP_GATED,		/* guard failed, state recording, level free */
	RB_STEP_SLOW_BASE,	/* slow path loaded the tail base, not the page */
	RB_STEP_SLOW_PAGE,	/* ... and the page, clock not yet read */
	RB_STEP_SLOW_STORE,	/* slow record stored, entries not yet counted */
	RB_STEP_GIVE_LOAD,	/* give-back checked the word, cmpxchg to come */
	RB_STEP_PAGE_OF_GEN,	/* tail_pos read, its slot not yet */
	RB_STEP_SETTLE,		/* settle found its page, padding to come */
	RB_STEP_CROSS_PAD,	/* the crosser padded, commit not yet set */
	RB_STEP_CAN_SWITCH,	/* flush read the next slot, commit_pos to come */
	RB_STEP_S1_LOAD,	/* switching read 0, flag not yet set */
	RB_STEP_S1_W,		/* switch loaded the write word */
	RB_STEP_S2_LOAD,	/* slot checked, claim's CAS to come */
	RB_STEP_S4_PAGE,	/* tail page stored: base, pos to come */
	RB_STEP_S4_BASE,	/* tail base stored */
	RB_STEP_S4_POS,		/* tail pos stored */
	RB_STEP_S5_W,		/* write word stored, unpublished not yet set */
	RB_STEP_P0,		/* publish found no writer, bit not taken */
	RB_STEP_P1_OR,		/* publish bit taken, unpublished not cleared */
	RB_STEP_P1_CP,		/* commit_pos read, tail_pos not yet */
	RB_STEP_FIN_SLOT,	/* finalize read the slot */
	RB_STEP_FIN_SEQ,	/* finalize stored seq, totals to come */
	RB_STEP_FLUSH_STATE,	/* flush read state: recording or off */
	RB_STEP_FLUSH_W,	/* flush loaded the write word */
	RB_STEP_FLUSH_CAN,	/* flush may switch: its closing xadd to come */
	RB_STEP_FLUSH_FLAG,	/* flush flagged the page it closed */
	RB_STEP_GATE_STATE,	/* rb_sync_gate read state, gate to store */
	RB_STEP_GATE_STORE,	/* ... stored gate, state to read again */
	RB_STEP_STATE,		/* a state change's CAS done, gate not synced */
	RB_STEP_R0,		/* reader took the try-lock */
	RB_STEP_TAKE,		/* rb_take checked the page, counts to come */
	RB_STEP_TAKE_DONE,	/* rb_take counted the page */
	RB_STEP_R_POS,		/* reader stored read_pos, lock not released */
	RB_NR_STEPS
};

#ifndef arch_rb_step
#define arch_rb_step(step)	do { } while (0)
#endif

enum rb_mode {
	RB_MODE_OVERWRITE = 0,	/* flight recorder: the oldest page goes */
	RB_MODE_DISCARD = 1,	/* producer/consumer: new events are dropped */
};

/* Per-CPU state; zeroed memory reads as RB_STATE_NONE and is refused. */
enum {
	RB_STATE_NONE = 0,	/* not initialised: refused and counted */
	RB_STATE_OFF = 1,	/* recording off: refused cheaply, not counted */
	RB_STATE_RECORDING = 2,
	RB_STATE_STOPPED = 3,	/* integrity stop: refused and counted */
};

/* gate (I12): what state means to a writer. */
enum {
	RB_GATE_OPEN = 0,	/* RB_STATE_RECORDING */
	RB_GATE_OFF = 1,	/* RB_STATE_OFF: refused at once, not counted */
	RB_GATE_CLOSED = 2,	/* none or stopped: the slow path refuses and counts */
};

/* Error codes, returned negated. */
enum {
	RB_OK = 0,
	RB_EINVAL = 1,		/* bad size or argument; counted in rejected */
	RB_EOFF = 2,		/* recording is off */
	RB_ENOBUF = 3,		/* no buffer (not initialised); counted */
	RB_ESTOPPED = 4,	/* integrity stop; counted */
	RB_ERECURSION = 5,	/* level already active or invalid; counted */
	RB_EFULL = 6,		/* no room: event dropped; counted in dropped */
	RB_EBUSY = 7,		/* another reader is active; flush: a switch is */
	RB_EAGAIN = 8,		/* the writer outran the reader; try again */
};

/*
 * One CPU's buffer.  The first cache line is the writer's hot path; the
 * shared and reader parts sit on their own lines so a polling reader does
 * not steal the writer's line.
 */
struct rb_cpu_buffer {
	/* -- writer hot line: this CPU's contexts (state, gate: any CPU) -- */
	/*
	 * The guard word: the writer's one compare (I7, I12).  First, so that
	 * its address is the buffer's own (no extra register for the commit).
	 *
	 *    63 ........... 32 31 ............. 0
	 *   +-----------------+------------------+
	 *   |      gate       |       nest       |
	 *   +-----------------+------------------+
	 *
	 * gate is 0 while state is RB_STATE_RECORDING, 1 while it is OFF, 2
	 * otherwise, so guard < level bit says both "recording" and "my
	 * level is free", and a writer turned away tells "off" by gate alone.
	 */
	union {
		uint64_t guard;
		struct {
			uint32_t nest;	/* active writer levels, publish flags (I7, I8) */
			uint32_t gate;	/* RB_GATE_*: state, as the writer asks (I12) */
		};
	};
	uint64_t write;		/* tail page {gen:32 | offset:32} (I1) */
	uint64_t tail_base;	/* base stamp of the tail page */
	uint8_t *tail_page;	/* the tail page */
	uint32_t state;		/* RB_STATE_*: what gate says, and why */
	uint32_t cap;		/* record bytes per page */
	uint32_t switching;	/* a context of this CPU is switching (I9) */
	uint32_t mode;		/* enum rb_mode */

	/* -- writer slow path: this CPU; stats read it -- */
	uint64_t tail_pos __aligned(CACHELINE_SIZE); /* position of the tail page */
	uint64_t fin_seq;	/* events on finalised pages */
	uint64_t fin_bytes;	/* record bytes on finalised pages */
	uint64_t tail_dropped;	/* dropped count when the tail page started */
	uint64_t prev_dropped;	/* ... when the page before the tail started */
	uint64_t overrun;	/* events lost to overwrite */
	uint64_t *slots;	/* N slot words (I4) */
	uint8_t **pages;	/* N + 1 page addresses, by page id */
	uint32_t tail_slot;	/* tail_pos % N */
	uint32_t nr_slots;	/* N */
	uint32_t page_size;	/* bytes per page */
	uint32_t cpu;		/* owning CPU, stored in page headers */

	/* -- shared: the writer publishes, the reader acquires -- */
	uint64_t commit_pos __aligned(CACHELINE_SIZE); /* (I3) */
	const char *stop_reason;	/* why recording stopped, or NULL */

	/* -- counters any context may bump (atomic, slow paths only) -- */
	uint64_t dropped __aligned(CACHELINE_SIZE); /* events dropped, all causes */
	uint64_t commit_overrun;	/* ... because the tail met uncommitted data */
	uint64_t busy;			/* ... because a switch was in progress */
	uint64_t rejected;		/* reserves with a bad size */
	uint64_t refused;		/* calls refused: no buffer, stopped, nesting */
	uint64_t recursion;		/* ... of which recursion or nesting limit */
	uint64_t voided;		/* reservations voided by an interrupt */
	uint64_t write_backwards;	/* stamps below the page base, clamped */
	uint64_t claim_raced;		/* slot claims that lost to the reader */

	/* -- reader: the one reader holding reader_busy -- */
	uint32_t reader_busy __aligned(CACHELINE_SIZE); /* try-lock */
	uint32_t reader_page;	/* id of the page outside the ring */
	uint64_t read_pos;	/* next position to take */
	uint64_t rd_seq;	/* seq expected of the next page */
	uint64_t rd_dropped;	/* dropped count seen on the previous page */
	uint64_t read;		/* events on pages taken */
	uint64_t read_bytes;	/* record bytes on pages taken */
	uint64_t lost;		/* events reported lost to the reader */
	uint64_t pages_read;	/* pages taken */
	uint64_t read_raced;	/* takes that lost to the writer's claim */
	uint64_t rd_last_ts;	/* last stamp on the pages taken (I10) */
	uint64_t read_backwards; /* stamps found below the one before them */
	uint64_t bad_pages;	/* pages taken that failed their checks, skipped */
};

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "the guard word puts nest in its low half: little-endian only");

/* Configuration of one CPU's buffer. */
struct rb_cpu_config {
	uint32_t cpu;		/* owning CPU id (< 65536) */
	uint32_t nr_pages;	/* ring pages N, 2 .. RB_MAX_PAGES */
	uint32_t page_size;	/* power of two, RB_PAGE_SIZE_MIN .. _MAX */
	uint32_t mode;		/* enum rb_mode */
	bool start_off;		/* start with recording off */
	/*
	 * The first page's base is the calling CPU's clock plus base_adjust
	 * (at 0 if that would be negative).  When another CPU builds the
	 * buffer, base_adjust is a lower bound of the owning CPU's clock minus
	 * the caller's: a base after the owner's clock would clamp its first
	 * stamps to it (I10's write-time clamp, counted as write_backwards).
	 * 0 when the caller is the owner or the clocks are one.
	 */
	int64_t base_adjust;
};

/* Counters of one CPU; exact once the CPU's writers are quiescent. */
struct rb_stats {
#define RB_STATS_FIELD(name, what) uint64_t name;	/* what: in RB_COUNTERS_* */
	RB_COUNTERS_DUMPED(RB_STATS_FIELD)
	RB_COUNTERS_LOCAL(RB_STATS_FIELD)
#undef RB_STATS_FIELD
	uint32_t state;		/* RB_STATE_* */
	const char *stop_reason; /* why recording stopped, or NULL */
};

/* A page handed to the reader. */
struct rb_read {
	const void *page;	/* the page; valid until the next take on this CPU */
	uint32_t page_size;	/* its size */
	uint32_t entries;	/* data events on it */
	uint64_t pos;		/* its sequence number on this CPU */
	uint64_t lost_overrun;	/* events overwritten since the previous take */
	uint64_t lost_dropped;	/* events dropped since the previous take */
};

/* All CPUs' buffers, as the kernel wires them. */
struct ring_buffer {
	uint32_t nr_cpus;			/* entries in cpus */
	struct rb_cpu_buffer *const *cpus;	/* per-CPU buffers, NULL if absent */
};

/* ---- setup and control (any CPU unless noted) ---- */

/* Bytes a struct rb_cpu_buffer with nr_pages ring pages needs. */
size_t ring_buffer_cpu_size(uint32_t nr_pages);

/*
 * Initialise cb (cb_size bytes, from ring_buffer_cpu_size()) over
 * cfg->nr_pages + 1 pages of cfg->page_size bytes each, 8-byte aligned,
 * handed in by the caller and owned by the buffer until the caller stops
 * using it.  No writer or reader may use cb during the call.  Returns 0 or
 * -RB_EINVAL.
 */
int ring_buffer_cpu_init(struct rb_cpu_buffer *cb, size_t cb_size,
			 const struct rb_cpu_config *cfg, void *const pages[]);

/*
 * The buffer of cpu; never NULL.  Without one (rb NULL, cpu out of range or
 * not set up) it returns a shared placeholder that refuses and counts every
 * call, so callers need no checks of their own.
 */
struct rb_cpu_buffer *ring_buffer_cpu(const struct ring_buffer *rb, uint32_t cpu);
/* That placeholder, by name: for static initialisers (a CPU's buffer pointer). */
extern struct rb_cpu_buffer rb_cpu_absent;

/* Turn recording on or off; no effect on a stopped or absent buffer. */
void ring_buffer_record_on(struct rb_cpu_buffer *cb);
void ring_buffer_record_off(struct rb_cpu_buffer *cb);

/*
 * Stop recording on cb for good and report why (an integrity stop).  The
 * reader still takes the pages that were complete before the stop; the
 * tail page and anything after the stop are not readable.
 */
void ring_buffer_stop(struct rb_cpu_buffer *cb, const char *why);

/* Any CPU, any time; exact once the CPU's writers are quiescent. */
void ring_buffer_stats(const struct rb_cpu_buffer *cb, struct rb_stats *st);

/* ---- writer (owning CPU only) ---- */

/*
 * End the tail page early so the reader can take it: owning CPU, any
 * context, also while recording is off.  Afterwards every event stored and
 * every drop counted before the call is on a readable page, once the
 * outermost writer on this CPU has committed (at once if the caller is not
 * inside a reservation).  Does nothing if that already holds.  Returns 0;
 * -RB_EFULL when no page is free: discard mode with the ring unread, the
 * ring full of uncommitted data, or, in overwrite mode, a next page that is
 * complete but not yet published (a 2-page ring whose other page this very
 * flush closed; a drop by an interrupt during the flush's own switch that
 * needs one more page to carry it): read, then flush again; -RB_EBUSY from an interrupt
 * that landed inside a page switch; -RB_EAGAIN if interrupts kept
 * switching; or a refusal (-RB_ENOBUF, -RB_ESTOPPED, -RB_ERECURSION).
 */
int ring_buffer_flush(struct rb_cpu_buffer *cb);

/* ---- reader (one at a time, any CPU) ---- */

/*
 * Take the oldest complete page of cb.  Returns 1 and fills *rd, 0 when no
 * complete page is waiting, or a negative error.  Also after an integrity
 * stop, for the pages complete before it.  Every page is checked before it
 * is handed out (header, records, stamp order); a malformed one stops
 * recording and is skipped, its events counted as lost on the next page.  The previous page taken
 * goes back into the ring: the caller must be done with it.  The page's
 * lost field counts the events lost between the previous page taken and
 * this one: stored but overwritten, or dropped after the previous page
 * started and before this one did.
 */
int ring_buffer_read_page(struct rb_cpu_buffer *cb, struct rb_read *rd);

/* ---- slow paths of the inline functions below; not for callers ---- */

#define RB_SLOW_AFTER_XADD	1u	/* the caller's xadd returned w, not w0 */
#define RB_SLOW_CMPXCHG		2u	/* reserve with cmpxchg */

/* A reservation's outcome, returned in two registers. */
struct rb_reservation {
	void *data;		/* payload, or NULL */
	int err;		/* 0 or a negated RB_E* code */
};

struct rb_reservation rb_reserve_slow(struct rb_cpu_buffer *cb, uint32_t len,
				      unsigned how, uint64_t w, uint64_t w0);
struct rb_reservation rb_refuse(struct rb_cpu_buffer *cb, uint32_t state);
struct rb_reservation rb_reject_size(struct rb_cpu_buffer *cb);
struct rb_reservation rb_refuse_nesting(struct rb_cpu_buffer *cb);
struct rb_reservation rb_reserve_gated(struct rb_cpu_buffer *cb, uint32_t len,
				       unsigned how, uint32_t bit);
void rb_commit_slow(struct rb_cpu_buffer *cb);
void rb_publish(struct rb_cpu_buffer *cb);

/* Slot word (I4): | pos (47 bits) | consumed (1) | page id (16) |. */
#define RB_SLOT_ID_MASK		0xffffull
#define RB_SLOT_CONSUMED	(1ull << 16)
#define RB_SLOT_POS_SHIFT	17

static inline uint64_t rb_slot_make(uint64_t pos, bool consumed, uint32_t id)
{
	return pos << RB_SLOT_POS_SHIFT | (consumed ? RB_SLOT_CONSUMED : 0) | id;
}

static inline uint64_t rb_slot_pos(uint64_t s)
{
	return s >> RB_SLOT_POS_SHIFT;
}

static inline bool rb_slot_consumed(uint64_t s)
{
	return (s & RB_SLOT_CONSUMED) != 0;
}

static inline uint32_t rb_slot_id(uint64_t s)
{
	return (uint32_t)(s & RB_SLOT_ID_MASK);
}

static inline uint32_t rb_gen(uint64_t w)
{
	return (uint32_t)(w >> 32);
}

static inline uint32_t rb_off(uint64_t w)
{
	return (uint32_t)w;
}

/* nest is shared with interrupts on this CPU only: relaxed is enough (I7). */
static __always_inline uint32_t rb_nest_load(const struct rb_cpu_buffer *cb)
{
	return __atomic_load_n(&cb->nest, __ATOMIC_RELAXED);
}

/*
 * Where a reservation's payload is, as the fast path finds it: base + at +
 * rb_spot_bias(len), base the tail page and at the record's end offset.
 * A slow path's payload comes as base = payload - bias, at = 0.  Kept in
 * two parts so that the caller's stores after either path can address the
 * payload as bias(base, at), with no register of its own.
 */
struct rb_spot {
	uintptr_t base;
	uint64_t at;
	int err;		/* 0 or a negated RB_E* code */
};

static __always_inline ptrdiff_t rb_spot_bias(uint32_t len, const bool fixed)
{
	if (!fixed)
		return 0;	/* a length known only now: the payload itself */
	return (ptrdiff_t)(RB_PAGE_HEADER_SIZE + rb_data_header_size(len)) -
	       (ptrdiff_t)rb_data_record_size(len);
}

static __always_inline void *rb_spot_data(struct rb_spot s, uint32_t len, const bool fixed)
{
	/* Opaque to the compiler, or it adds the two before the paths meet. */
	__asm__("" : "+r"(s.base), "+r"(s.at));
	return s.err ? NULL : (void *)(s.base + s.at + (uintptr_t)rb_spot_bias(len, fixed));
}

/*
 * A reservation that left the fast path, as a spot.  With a head word
 * (rb_head_word()) the payload's first word is stored here; the fast path
 * stores it with the record word.
 */
static __always_inline struct rb_spot
rb_spot_rest(struct rb_reservation r, uint32_t len, const bool fixed, const bool use_head,
	     uint64_t head)
{
	if (use_head && r.data)
		rb_store32((uint8_t *)r.data, (uint32_t)(head >> 32));
	return (struct rb_spot){ (uintptr_t)r.data - (uintptr_t)rb_spot_bias(len, fixed), 0,
				 r.err };
}

/*
 * The reservation fast path: recording on, size valid, level free, delta
 * fits 27 bits, no interrupt in the window and room on the tail page.
 * Everything else goes to rb_reserve_slow(), which owns the same nest bit.
 * fixed: len is a compile-time constant (the same answer wherever the spot
 * is used: the caller asks once); a spot for any other len is the payload
 * address itself (bias 0), as computing the bias would cost more.  With
 * use_head, the record's first 8 bytes are head_fn(head) | delta, one store
 * (ring_buffer_reserve_head()).
 */
static __always_inline struct rb_spot
rb_reserve_common(struct rb_cpu_buffer *cb, uint32_t len, const bool fixed,
		  const bool use_cmpxchg, uint64_t bit, const bool use_head, uint64_t head,
		  uint64_t (*const head_fn)(uint64_t))
{
	const unsigned how = use_cmpxchg ? RB_SLOW_CMPXCHG : 0;
	uint32_t rec, delta, end;
	uint64_t w0, w;
	uint8_t *page, *rp, *data = NULL;

	if (unlikely(len - 1u >= RB_MAX_PAYLOAD))
		return rb_spot_rest(rb_reject_size(cb), len, fixed, false, 0);

	/*
	 * One compare for "recording" (gate 0, I12) and the recursion guard
	 * (I7): no active writer at our level or above.  A flag, or an
	 * invalid level (bit 0), also fails it; the slow path sorts that out.
	 * A plain read, so it can be a compare in memory: an interrupt after
	 * it gives back the level bits it found (I7), so the answer holds.
	 */
	if (unlikely(cb->guard >= bit)) {
		/* Tracing off: answered inline, one compare more (in memory,
		 * as the guard's: a stale answer is one read a moment ago). */
		if (cb->gate == RB_GATE_OFF)
			return (struct rb_spot){ 0, 0, -RB_EOFF };
		return rb_spot_rest(rb_reserve_gated(cb, len, how, (uint32_t)bit), len, fixed,
				    use_head, use_head ? head_fn(head) : 0);
	}
	arch_rb_step(RB_STEP_FAST_GUARD);
	arch_local_or32(&cb->nest, bit);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	arch_rb_step(RB_STEP_FAST_NEST);
	if (use_head)
		head = head_fn(head);	/* only now: a refused writer never pays */

	rec = rb_data_record_size(len);
	/*A*/ w0 = __atomic_load_n(&cb->write, __ATOMIC_ACQUIRE);
	arch_rb_step(RB_STEP_FAST_W);
	page = __atomic_load_n(&cb->tail_page, __ATOMIC_RELAXED);
	arch_rb_step(RB_STEP_FAST_A);
	/*B*/ if (unlikely(!arch_cycles_since(&cb->tail_base, &delta) ||
			   delta >= RB_DELTA_LIMIT))
		return rb_spot_rest(rb_reserve_slow(cb, len, how, 0, 0), len, fixed,
				    use_head, head);
	arch_rb_step(RB_STEP_FAST_B);

	if (use_cmpxchg) {
		if (unlikely(rb_off(w0) + rec > cb->cap))
			return rb_spot_rest(rb_reserve_slow(cb, len, how, 0, 0), len, fixed,
					    use_head, head);
		/*C*/ w = arch_local_cmpxchg(&cb->write, w0, w0 + rec);
		arch_rb_step(RB_STEP_FAST_C);
		if (unlikely(w != w0))
			return rb_spot_rest(rb_reserve_slow(cb, len, how, 0, 0), len, fixed,
					    use_head, head);
	} else {
		/*C*/ w = arch_local_xadd(&cb->write, rec);
		arch_rb_step(RB_STEP_FAST_C);
		/* No wrap: offsets stay far below 2^32 - rec (I11). */
		/*D*/ if (unlikely(w != w0 || rb_off(w0) + rec > cb->cap))
			return rb_spot_rest(rb_reserve_slow(cb, len, how | RB_SLOW_AFTER_XADD,
							    w, w0), len, fixed, use_head, head);
	}

	/*
	 * D held: nothing reserved or switched since A, so page and base were
	 * the tail's and the stamp is ordered (I1, I10).  The space is ours.
	 * The record is found from its end, the 32-bit sum the cap check
	 * made: already zero-extended, where the offset alone would need it.
	 */
	arch_rb_step(RB_STEP_FAST_D);
	end = rb_off(w0) + rec;
	rp = page + ((ptrdiff_t)RB_PAGE_HEADER_SIZE - (ptrdiff_t)rec) + (uint64_t)end;
	if (use_head)
		/*E*/ rb_store64(rp, head | delta);
	else
		/*E*/ data = rb_put_data(rp, len, delta);
	arch_rb_step(RB_STEP_FAST_STORE);
	arch_local_add32(&((struct rb_page_header *)page)->entries, 1);
	arch_rb_step(RB_STEP_FAST_E);
	if (!fixed)
		return (struct rb_spot){ (uintptr_t)data, 0, 0 };
	return (struct rb_spot){ (uintptr_t)page, end, 0 };
}

static __always_inline struct rb_reservation
rb_reserve_bit(struct rb_cpu_buffer *cb, uint32_t len, const bool use_cmpxchg, uint64_t bit)
{
	const bool fixed = __builtin_constant_p(len);
	struct rb_spot s = rb_reserve_common(cb, len, fixed, use_cmpxchg, bit, false, 0, NULL);

	return (struct rb_reservation){ rb_spot_data(s, len, fixed), s.err };
}

static __always_inline struct rb_reservation
rb_reserve(struct rb_cpu_buffer *cb, uint32_t len, const bool use_cmpxchg)
{
	return rb_reserve_bit(cb, len, use_cmpxchg, arch_trace_level_bit());
}

/*
 * Reserve len payload bytes (1 .. RB_MAX_PAYLOAD; rounded up to 4) on the
 * calling CPU's buffer cb and stamp the event.  On success *data points at
 * the payload (4-byte aligned) and the caller must fill it and call
 * ring_buffer_commit(cb) from the same context, with no other reserve of
 * that context in between.  On failure nothing is reserved, no commit is
 * due, and the result is -RB_EOFF, -RB_EINVAL, -RB_ENOBUF, -RB_ESTOPPED,
 * -RB_ERECURSION or -RB_EFULL.
 */
static __always_inline int ring_buffer_reserve(struct rb_cpu_buffer *cb,
					       uint32_t len, void **data)
{
	struct rb_reservation r = rb_reserve(cb, len, CONFIG_TRACE_RESERVE_CMPXCHG);

	*data = r.data;
	return r.err;
}

/* The two reservation methods by name, for tests and benchmarks. */
static __always_inline int ring_buffer_reserve_xadd(struct rb_cpu_buffer *cb,
						    uint32_t len, void **data)
{
	struct rb_reservation r = rb_reserve(cb, len, false);

	*data = r.data;
	return r.err;
}

static __always_inline int ring_buffer_reserve_cmpxchg(struct rb_cpu_buffer *cb,
						       uint32_t len, void **data)
{
	struct rb_reservation r = rb_reserve(cb, len, true);

	*data = r.data;
	return r.err;
}

/*
 * Finish the innermost reservation on cb.  The outermost writer publishes
 * the pages its nest completed; nested ones leave that to it (I8).
 */
static __always_inline void ring_buffer_commit_bit(struct rb_cpu_buffer *cb, uint64_t bit)
{
	/* Payload stores stay before the release of the bit: an interrupt
	 * after /F/ is outermost and may publish our page. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	arch_rb_step(RB_STEP_COMMIT);
	/*F, G*/ if (unlikely(!arch_local_sub32_zero(&cb->nest, bit))) {
		arch_rb_step(RB_STEP_F);
		rb_commit_slow(cb);
	} else {
		arch_rb_step(RB_STEP_F);
	}
}

static __always_inline void ring_buffer_commit(struct rb_cpu_buffer *cb)
{
	ring_buffer_commit_bit(cb, arch_trace_level_bit());
}

/*
 * The same pair with the caller's arch_trace_level_bit(), read once for
 * both (a generated writer keeps it in a register instead of reading it
 * again at the commit).  The level cannot change between the two: every
 * interrupt gives back the level it found.
 */
static __always_inline int ring_buffer_reserve_bit(struct rb_cpu_buffer *cb, uint32_t len,
						   void **data, uint64_t bit)
{
	struct rb_reservation r = rb_reserve_bit(cb, len, CONFIG_TRACE_RESERVE_CMPXCHG, bit);

	*data = r.data;
	return r.err;
}

/*
 * The same with the record's first 8 bytes but the delta known in advance:
 * head_fn(head), where head = rb_head_word(len, first payload word) and
 * head_fn adds what the caller keeps elsewhere (the context bits of an
 * event header), called only once the writer is past the guard.  On
 * success the payload's first word is written: the caller fills the rest.
 * len: a multiple of 4 from 4 to RB_INLINE_MAX, a constant; head_fn a
 * constant too (inlined).
 */
static __always_inline int ring_buffer_reserve_head(struct rb_cpu_buffer *cb, uint32_t len,
						    void **data, uint64_t bit, uint64_t head,
						    uint64_t (*const head_fn)(uint64_t))
{
	struct rb_spot s;

	_Static_assert(RB_INLINE_MAX % 4 == 0, "inline lengths are whole words");
	s = rb_reserve_common(cb, len, true, CONFIG_TRACE_RESERVE_CMPXCHG, bit, true, head,
			      head_fn);
	*data = rb_spot_data(s, len, true);
	return s.err;
}

/*
 * Is recording off on cb (gate RB_GATE_OFF)? Then every writer is answered
 * -RB_EOFF, uncounted, as the fast path's guard answers it: a writer whose
 * own work before its reservation is costly (trace_printk's encoding) asks
 * first. A plain read: a change racing with it is a call a moment earlier.
 */
static inline bool ring_buffer_recording_off(const struct rb_cpu_buffer *cb)
{
	return __atomic_load_n(&cb->gate, __ATOMIC_RELAXED) == RB_GATE_OFF;
}

/* Reserve, copy len bytes from src, commit. */
static inline int ring_buffer_write(struct rb_cpu_buffer *cb, const void *src,
				    uint32_t len)
{
	void *data;
	int ret = ring_buffer_reserve(cb, len, &data);

	if (ret == 0) {
		__builtin_memcpy(data, src, len);
		ring_buffer_commit(cb);
	}
	return ret;
}

#endif
