/*
 * The function tracer: the site table, the tracers (nop, function,
 * function_graph), their hooks and shadow stacks, the filters and the
 * options. Design, costs and the text format in docs/ftrace.md; the
 * patching is arch/x86/ftrace.c's, the trampolines arch/x86/ftrace_entry.asm.
 *
 * Contract of the hooks: ftrace_entry() runs on any CPU, in any context
 * (task, IRQ, NMI, an exception handler), at the entry of any traced
 * function while its site holds the call; ftrace_return() runs where a
 * function whose return was taken over returns. Both are never traced
 * (this directory is built without sites) and call only what is not.
 * The setters are the contract of <kernel/ftrace.h>.
 *
 * Per CPU (struct ftrace_cpu, and the per-CPU ftrace_busy; only the
 * CPU itself and its own interrupts touch them):
 *
 *   busy     ftrace_busy, one bit per context level (the ring buffer's
 *            level_bit): a hook of that level is running. A hook finding
 *            its bit set returns at once (recursion guard: counted, nothing
 *            recorded); so does the trampoline's fast path, through here.
 *   stack    FTRACE_LEVELS shadow stacks, one per context level, so that
 *            an IRQ taken in the middle of traced code pushes on its own;
 *            columns by field, so that frame d's fields are d * 8 past
 *            their column's start (the trampolines index by d, unscaled):
 *
 *     stack[level]:  word | sp[0..62] | ret[0..62] | func[0..62] | calltime[0..62]
 *     word:          depth (frames in use) | busy << 32
 *     frame d:       sp[d] (the stack pointer the function returns with:
 *                    its return slot's address + 8), ret[d] (the real
 *                    return address), func[d], calltime[d] (the entry's stamp)
 *
 *            busy mirrors this level's ftrace_busy bit on a CPU with
 *            stacks, in the word the trampoline's depth check reads: a
 *            depth of 2^32 or more is past every limit, so the graph fast
 *            path leaves a running C hook's stack alone without a compare
 *            of its own. sp[-1] is the word: with no frames it reads 0,
 *            which no frame's sp is.
 *
 * Invariants:
 *   G1: a frame is pushed before its function's return slot is changed,
 *       and the slot is changed at most once per call: every return that
 *       lands in ftrace_return_to_handler has its frame on the stack of
 *       its level (a function returns at the level it was entered at:
 *       interrupt entry and exit are untraced and restore the level).
 *   G2: frames of one level are pushed deeper down the stack as depth
 *       grows (calls nest; levels that could interleave have stacks of
 *       their own), so slots, and sp, decrease from frame 0 to the top.
 *   G3: ftrace_return() pops the frame whose sp is the one the return
 *       left (rsp; the slot returned through is rsp - 8). Frames above it
 *       have sps below it:
 *       their functions left without returning (a stack reset, a job that
 *       never returns); they are dropped and counted (stale), never
 *       returned to. No matching frame cannot happen (G1); if it did, there
 *       is no address to return to, and the kernel stops with a report.
 *   G4: a full stack means the call is not taken over (overrun counted):
 *       no entry event, no exit event, the return goes straight back.
 *   G5: ftrace_return() works whatever the tracer is now: a function
 *       entered under function_graph may return after a switch to nop.
 *       The stacks are never freed.
 *
 * The trampolines (arch/x86/ftrace_entry.asm) do the common case of
 * ftrace_entry()'s graph push and ftrace_return()'s pop themselves, in the
 * same order (G1, G3), through ftrace_stacks[][] and
 * ftrace_graph_fast_limit; whatever they do not handle comes here before
 * they have changed anything. Their reasoning is in their file.
 *
 * Switching tracers: the mode (which the C hook reads) is published
 * first, then the sites are rewritten: to NOPs (nop), to calls of the
 * tracer's own trampoline (ftrace_caller for function, ftrace_graph_caller
 * for function_graph: neither reads the mode), or from one trampoline to
 * the other. A call made meanwhile is traced the old way, the new way, or
 * not at all (a site under its int3 is passed over); a return taken over
 * before the switch is handled whatever the tracer is now (G5).
 */
#include <stddef.h>
#include <arch/acpi.h>
#include <arch/cpu.h>
#include <arch/exit.h>
#include <arch/ftrace.h>
#include <arch/percpu.h>
#include <arch/text_poke.h>
#include <arch/trap.h>
#include <arch/trace_arch.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/ftrace.h"
#include "kernel/ftrace_sites.h"
#include "kernel/ksyms.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"
#include "kernel/spinlock.h"
#include "kernel/trace_ctx.h"
#include "kernel/tracing.h"
#include "lib/format.h"
#include "ftrace_stack.h"

#define FTRACE_SITES_MAX	4096	/* table entries kept; more are dropped, reported */
#define FTRACE_LEVELS		4	/* ring-buffer context levels: task, softirq, IRQ, NMI */

/* Site flags. */
#define SITE_FILTER		0x01	/* named by ftrace.filter */
#define SITE_NOTRACE		0x02	/* named by ftrace.notrace */
#define SITE_GRAPH_FN		0x04	/* named by ftrace.graph_function */
#define SITE_SCRATCH		0x40	/* a list being checked */
#define SITE_ENABLED		0x80	/* holds the call */

struct ftrace_cpu {
	struct ftrace_stack *stack;	/* [FTRACE_LEVELS], or NULL: no graph on this CPU */
	uint64_t overrun;		/* G4 */
	uint64_t recursion;		/* busy bit found set */
	uint64_t stale;			/* G3 */
	uint64_t nostack;		/* graph entry without stacks */
} __aligned(CACHELINE_SIZE);

extern uint64_t __start_mcount_loc[], __stop_mcount_loc[];
extern char __text_start[], __text_end[];

struct ftrace_cpu ftrace_cpus[MAX_CPUS];	/* counts; the trampoline reads %gs:ftrace_overrun */
/* This CPU's level bits of hooks running (busy above), and overruns' low 32 bits. */
DEFINE_PER_CPU(uint32_t, ftrace_busy);
DEFINE_PER_CPU(uint32_t, ftrace_overrun);
/*
 * The shadow stacks by [cpu][level], never NULL: what each CPU's contexts
 * carry (trace_ctx_build()), which the trampolines read through
 * %gs:trace_ctx.graph_stack. A CPU without stacks has every entry at
 * ftrace_stack_none, whose depth is at every limit, so its calls go to the
 * C hook (which counts nostack).
 */
struct ftrace_stack ftrace_stack_none = { .depth = FTRACE_STACK_FRAMES };
struct ftrace_stack *ftrace_stacks[MAX_CPUS][TRACE_CTX_LEVELS] = {
	[0 ... MAX_CPUS - 1] = { [0 ... TRACE_CTX_LEVELS - 1] = &ftrace_stack_none },
};
static uint64_t *sites;			/* the table: __mcount_loc, prepared */
static unsigned nsites;
static uint8_t site_flags[FTRACE_SITES_MAX];
static uint64_t batch[FTRACE_SITES_MAX];	/* sites handed to the patcher */

static uint32_t ftrace_mode;		/* enum ftrace_tracer, read by the C hook */
static uint32_t graph_limit = FTRACE_STACK_FRAMES;	/* frames per level used */
static uint32_t graph_fn_on;		/* ftrace.graph_function is not empty */
/* The trampoline's depth check: graph_limit, or 0 (everything to the C hook)
 * while graph_fn_on; written under the lock (graph_fast_update()). 64 bits:
 * compared with the stack's word, depth | busy << 32. */
uint64_t ftrace_graph_fast_limit = FTRACE_STACK_FRAMES;
static struct spinlock lock;		/* serialises the setters */
static uint64_t cur_target;		/* the trampoline enabled sites call */
static bool ready;			/* ftrace_init() built the table */
static uint64_t n_dropped, n_refused, n_patches;

/* ---- options ---- */

static const char *const tracer_names[] = { "nop", "function", "function_graph", NULL };
static int opt_tracer = FTRACE_NOP;
static char opt_list[FTRACE_LISTS][FTRACE_LIST_MAX];
static char cur_list[FTRACE_LISTS][FTRACE_LIST_MAX];
static uint64_t opt_depth;
static const char *const list_options[FTRACE_LISTS] = {
	"ftrace.filter", "ftrace.notrace", "ftrace.graph_function",
};
static const uint8_t list_bits[FTRACE_LISTS] = { SITE_FILTER, SITE_NOTRACE, SITE_GRAPH_FN };

CMDLINE_OPTION(ftrace, .name = "ftrace", .type = OPT_ENUM, .var = &opt_tracer,
	       .choices = tracer_names,
	       .help = "function tracer from boot: nop, function or function_graph");
CMDLINE_OPTION(ftrace_filter, .name = "ftrace.filter", .type = OPT_STRING,
	       .var = opt_list[FTRACE_FILTER], .size = FTRACE_LIST_MAX,
	       .help = "trace only these functions (comma list of names and globs)");
CMDLINE_OPTION(ftrace_notrace, .name = "ftrace.notrace", .type = OPT_STRING,
	       .var = opt_list[FTRACE_NOTRACE], .size = FTRACE_LIST_MAX,
	       .help = "never trace these functions (comma list of names and globs)");
CMDLINE_OPTION(ftrace_graph_fn, .name = "ftrace.graph_function", .type = OPT_STRING,
	       .var = opt_list[FTRACE_GRAPH_FUNCTION], .size = FTRACE_LIST_MAX,
	       .help = "function_graph: only calls below these functions (names and globs)");
CMDLINE_OPTION(ftrace_depth, .name = "ftrace.graph_depth", .type = OPT_UINT,
	       .var = &opt_depth, .min = 0, .max = FTRACE_STACK_FRAMES,
	       .help = "function_graph: deepest nesting recorded per context (0: all 63)");

/* ---- the hooks ---- */

void ftrace_entry(uint64_t ip, uint64_t *slot);
uint64_t ftrace_return(uint64_t rsp);

static __always_inline void graph_entry(struct ftrace_cpu *fc, struct ftrace_stack *st,
					uint64_t ip, uint64_t *slot)
{
	uint32_t d;

	if (unlikely(!st)) {
		fc->nostack++;
		return;
	}
	d = st->depth;
	if (d >= __atomic_load_n(&graph_limit, __ATOMIC_RELAXED)) {
		if (d >= FTRACE_STACK_FRAMES) {
			fc->overrun++;	/* G4 */
			/* The copy the trampoline's exit event reads in one load. */
			this_cpu_write(ftrace_overrun, (uint32_t)fc->overrun);
		}
		return;
	}
	if (unlikely(__atomic_load_n(&graph_fn_on, __ATOMIC_RELAXED)) && d == 0) {
		int i = ftrace_sites_find(sites, nsites, ip);

		if (i < 0 || !(site_flags[i] & SITE_GRAPH_FN))
			return;
	}
	st->ret[d] = *slot;
	st->func[d] = ip;
	st->sp[d] = (uint64_t)(uintptr_t)(slot + 1);
	st->calltime[d] = arch_read_cycles();
	st->depth = d + 1;				/* G1: the frame first */
	barrier();					/* ... then the slot */
	*slot = (uint64_t)(uintptr_t)ftrace_return_to_handler;
	trace_funcgraph_entry((const void *)(uintptr_t)ip, d);
}

/*
 * A hook of this level starts (busy_take) or ends (busy_give): its
 * ftrace_busy bit, and on a CPU with stacks the copy in this level's stack
 * word. Both are this CPU's: interrupts on it see each store in order
 * (the percpu ops and barrier() are compiler barriers).
 */
static __always_inline struct ftrace_stack *busy_take(struct ftrace_cpu *fc, uint32_t bit)
{
	struct ftrace_stack *st = fc->stack ? fc->stack + this_cpu_read(trace_ctx.level) : NULL;

	this_cpu_or(ftrace_busy, bit);
	if (st)
		st->busy = 1;
	barrier();
	return st;
}

static __always_inline void busy_give(struct ftrace_stack *st, uint32_t bit)
{
	barrier();
	if (st)
		st->busy = 0;
	this_cpu_and(ftrace_busy, ~bit);
}

notrace void ftrace_entry(uint64_t ip, uint64_t *slot)
{
	struct ftrace_cpu *fc = &ftrace_cpus[percpu_read32(cpu)];
	uint32_t bit = arch_trace_level_bit();
	uint32_t m = __atomic_load_n(&ftrace_mode, __ATOMIC_RELAXED);
	struct ftrace_stack *st;

	if (unlikely(this_cpu_read(ftrace_busy) & bit)) {
		fc->recursion++;
		return;
	}
	st = busy_take(fc, bit);
	if (likely(m == FTRACE_FUNCTION))
		trace_function((const void *)(uintptr_t)ip, (const void *)(uintptr_t)*slot);
	else if (m == FTRACE_GRAPH)
		graph_entry(fc, st, ip, slot);
	busy_give(st, bit);
}

/*
 * The trampoline's fast paths after the level bit is taken, when
 * rb_reserve() would go to rb_reserve_slow(): the same call with the same
 * arguments (how, w, w0), then the event as the C writer fills it. The
 * graph's shadow-stack work is done by then (pushed, or popped).
 */
void ftrace_function_slow(uint64_t ip, uint64_t parent, unsigned how, uint64_t w, uint64_t w0);
void ftrace_graph_entry_slow(uint64_t func, uint32_t depth, unsigned how, uint64_t w, uint64_t w0);
void ftrace_graph_exit_slow(uint64_t func, uint64_t cycles, uint32_t depth, unsigned how,
			    uint64_t w, uint64_t w0);

#define SLOW_WRITE(name, how, w, w0, ...) do {					\
	struct rb_cpu_buffer *cb_ = this_cpu_rb();				\
	struct rb_reservation r_ = rb_reserve_slow(cb_, sizeof(struct trace_ev_##name), \
						   how, w, w0);			\
	struct trace_ev_##name *rec = r_.data;					\
										\
	if (!r_.err) {								\
		rec->hdr = trace_ent_word(TEV_##name, TRACE_ENT_WORDS(name));	\
		__VA_ARGS__;							\
		ring_buffer_commit(cb_);					\
	}									\
} while (0)

notrace void ftrace_function_slow(uint64_t ip, uint64_t parent, unsigned how, uint64_t w,
				  uint64_t w0)
{
	SLOW_WRITE(function, how, w, w0, rec->ip = ip; rec->parent_ip = parent);
}

notrace void ftrace_graph_entry_slow(uint64_t func, uint32_t depth, unsigned how, uint64_t w,
				     uint64_t w0)
{
	SLOW_WRITE(funcgraph_entry, how, w, w0, rec->func = func; rec->depth = depth);
}

notrace void ftrace_graph_exit_slow(uint64_t func, uint64_t cycles, uint32_t depth, unsigned how,
				    uint64_t w, uint64_t w0)
{
	SLOW_WRITE(funcgraph_exit, how, w, w0, rec->func = func; rec->cycles = cycles;
		   rec->depth = depth;
		   rec->overrun = (uint32_t)ftrace_cpus[percpu_read32(cpu)].overrun);
}

_Static_assert(FTRACE_LEVELS == TRACE_CTX_LEVELS, "a shadow stack for each context level");

static void __noreturn lost_return(uint64_t rsp)
{
	console_enter_panic_mode();
	printk("PANIC: ftrace: cpu=%u returned through the graph tracer with no shadow frame "
	       "for the slot at 0x%llx; no address to go back to\n", percpu_read32(cpu),
	       (unsigned long long)(rsp - 8));
	machine_exit(false);
}

notrace uint64_t ftrace_return(uint64_t rsp)
{
	struct ftrace_cpu *fc = &ftrace_cpus[percpu_read32(cpu)];
	uint32_t bit = arch_trace_level_bit();
	bool mine = !(this_cpu_read(ftrace_busy) & bit);	/* else: recursion, counted */
	struct ftrace_stack *st = fc->stack + this_cpu_read(trace_ctx.level);
	uint64_t ret, func, calltime, now;
	uint32_t d;

	if (likely(mine))
		busy_take(fc, bit);
	d = st->depth;
	while (d && st->sp[d - 1] < rsp) {	/* G3: frames of calls that never returned */
		d--;
		fc->stale++;
	}
	if (unlikely(!d || st->sp[d - 1] != rsp))
		lost_return(rsp);
	d--;
	ret = st->ret[d];
	func = st->func[d];
	calltime = st->calltime[d];
	barrier();				/* read the frame before giving it back */
	st->depth = d;
	if (likely(mine)) {
		now = arch_read_cycles();
		trace_funcgraph_exit((const void *)(uintptr_t)func, now - calltime, d,
				     (uint32_t)fc->overrun);
		busy_give(st, bit);
	} else {
		fc->recursion++;
	}
	return ret;
}

/* ---- the table ---- */

static const char *name_of(unsigned i, void *arg)
{
	uint64_t off = 1;
	const char *s;

	(void)arg;
	s = ksym_lookup(sites[i], &off);
	return s && off == 0 ? s : NULL;
}

unsigned ftrace_site_count(void)
{
	return nsites;
}

const char *ftrace_site_name(unsigned i)
{
	return i < nsites ? name_of(i, NULL) : NULL;
}

uint64_t ftrace_site_addr(unsigned i)
{
	return i < nsites ? sites[i] : 0;
}

bool ftrace_site_enabled(unsigned i)
{
	return i < nsites && (site_flags[i] & SITE_ENABLED);
}

static bool selected(unsigned i)
{
	uint8_t f = site_flags[i];

	return (!cur_list[FTRACE_FILTER][0] || (f & SITE_FILTER)) && !(f & SITE_NOTRACE);
}

bool ftrace_site_selected(unsigned i)
{
	return i < nsites && selected(i);
}

static void alloc_stacks(void)
{
	unsigned n = acpi.cpu_count > cpu_count ? acpi.cpu_count : cpu_count;
	uint64_t bytes = FTRACE_LEVELS * sizeof(struct ftrace_stack);
	uint64_t pages = (bytes + PAGE_SIZE - 1) / PAGE_SIZE;

	if (n > MAX_CPUS)
		n = MAX_CPUS;
	for (unsigned c = 0; c < n; c++) {
		uint64_t pa = pmm_alloc(pages, 1);

		if (!pa) {
			printk("ftrace: cpu=%u: no memory for shadow stacks; function_graph "
			       "skips it\n", c);
			continue;
		}
		memset((void *)(uintptr_t)pa, 0, pages * PAGE_SIZE);
		ftrace_cpus[c].stack = (struct ftrace_stack *)(uintptr_t)pa;
		for (unsigned l = 0; l < FTRACE_LEVELS; l++)
			ftrace_stacks[c][l] = ftrace_cpus[c].stack + l;
	}
	trace_ctx_build(percpu_read32(cpu));	/* the contexts were built before */
}

/* The trampoline's depth check follows graph_limit and graph_fn_on (under the lock). */
static void graph_fast_update(void)
{
	uint64_t lim = __atomic_load_n(&graph_limit, __ATOMIC_RELAXED);

	if (__atomic_load_n(&graph_fn_on, __ATOMIC_RELAXED))
		lim = 0;
	__atomic_store_n(&ftrace_graph_fast_limit, lim, __ATOMIC_RELEASE);
}

void ftrace_init(void)
{
	unsigned n = (unsigned)(__stop_mcount_loc - __start_mcount_loc), dropped = 0, bad = 0;

	sites = __start_mcount_loc;
	n = ftrace_sites_prepare(sites, n, (uint64_t)(uintptr_t)__text_start,
				 (uint64_t)(uintptr_t)__text_end, &dropped);
	if (n > FTRACE_SITES_MAX) {
		dropped += n - FTRACE_SITES_MAX;
		n = FTRACE_SITES_MAX;
	}
	/* The build's NOPs become one NOP; a site that is then not it is never patched (J5). */
	arch_ftrace_convert(sites, n);
	for (unsigned i = 0; i < n; i++) {
		if (arch_ftrace_site_is_nop(sites[i])) {
			sites[i - bad] = sites[i];
			continue;
		}
		if (bad++ < 4)
			printk("ftrace: site 0x%llx is not a 5-byte NOP; dropped\n",
			       (unsigned long long)sites[i]);
	}
	nsites = n - bad;
	n_dropped = dropped + bad;
	alloc_stacks();
	if (opt_depth)
		graph_limit = (uint32_t)opt_depth;
	graph_fast_update();
	ready = true;
	printk("ftrace: sites=%u dropped=%llu trampoline=0x%llx tracers=nop,function,function_graph\n",
	       nsites, (unsigned long long)n_dropped,
	       (unsigned long long)(uintptr_t)ftrace_caller);
}

/* ---- setters ---- */

static void lock_wait(void)
{
	text_sync_answer();
	cpu_relax();
}

static bool lock_take(void)
{
	if (!ready) {
		printk("ftrace: not initialised (a kernel built with FTRACE=0?)\n");
		return false;
	}
	/* The holder may wait in text_sync() for us, interrupts off here: answer it. */
	spin_lock_waiting(&lock, lock_wait);
	return true;
}

static void lock_give(void)
{
	spin_unlock(&lock);
}

static bool context_ok(const char *what)
{
	struct percpu *pc = this_cpu();

	/*
	 * Interrupts may be off (boot, ktests): the syncs need only the other
	 * CPUs to answer, and a static-key change made meanwhile on another
	 * CPU is answered from our own text_sync() wait.
	 */
	if (pc->irq_depth || pc->nmi_depth) {
		printk("ftrace: cpu=%u: %s asked in an interrupt handler; not changed\n",
		       pc->cpu, what);
		return false;
	}
	return true;
}

/* The trampoline a tracer's sites call (0: none, the NOP). */
static uint64_t tracer_target(uint32_t mode)
{
	if (mode == FTRACE_FUNCTION)
		return (uint64_t)(uintptr_t)ftrace_caller;
	if (mode == FTRACE_GRAPH)
		return (uint64_t)(uintptr_t)ftrace_graph_caller;
	return 0;
}

/*
 * Make every site hold what the tracer and filters say (under the lock):
 * enabled sites call the tracer's own trampoline (cur_target), so a switch
 * between function and function_graph rewrites them too.
 */
static void update_sites(void)
{
	uint64_t want_t = tracer_target(__atomic_load_n(&ftrace_mode, __ATOMIC_RELAXED));
	unsigned k;

	for (int pass = 0; pass < 3; pass++) {	/* off first, then retarget, then on */
		uint64_t from = pass == 2 ? 0 : cur_target, to = pass == 0 ? 0 : want_t;

		k = 0;
		for (unsigned i = 0; i < nsites; i++) {
			bool want = want_t && selected(i), have = site_flags[i] & SITE_ENABLED;

			if (pass == 0 ? have && !want :
			    pass == 1 ? have && want && from != to : want && !have)
				batch[k++] = sites[i];
		}
		if (!k)
			continue;
		n_refused += arch_ftrace_apply(batch, k, from, to);
		n_patches += k;
		/*
		 * The state of each site is what its bytes now say (a refused one
		 * kept its own): enabled if it calls the trampoline enabled sites
		 * call after this pass.
		 */
		for (unsigned i = 0; i < nsites; i++) {
			uint8_t insn[FTRACE_SITE_LEN];
			const uint8_t *p = (const uint8_t *)(uintptr_t)sites[i];

			arch_ftrace_insn(sites[i], pass ? want_t : cur_target, insn);
			if (!memcmp(p, insn, FTRACE_SITE_LEN))
				site_flags[i] |= SITE_ENABLED;
			else
				site_flags[i] &= (uint8_t)~SITE_ENABLED;
		}
	}
	if (want_t)
		cur_target = want_t;
}

int ftrace_set_tracer(enum ftrace_tracer t)
{
	if (t >= FTRACE_TRACERS || !context_ok("a tracer change") || !lock_take())
		return -1;
	/* The mode first, then the sites (see Switching tracers above). */
	__atomic_store_n(&ftrace_mode, t, __ATOMIC_RELEASE);
	update_sites();		/* off: the sites are NOPs before this returns */
	lock_give();
	return 0;
}

enum ftrace_tracer ftrace_tracer(void)
{
	return (enum ftrace_tracer)__atomic_load_n(&ftrace_mode, __ATOMIC_RELAXED);
}

const char *ftrace_tracer_name(enum ftrace_tracer t)
{
	return t < FTRACE_TRACERS ? tracer_names[t] : "?";
}

int ftrace_set_tracer_by_name(const char *name)
{
	for (int t = 0; t < FTRACE_TRACERS; t++)
		if (!strcmp(name, tracer_names[t]))
			return ftrace_set_tracer((enum ftrace_tracer)t);
	return -2;
}

/* The items of list not named in unknown, comma-separated, into kept. */
static void drop_unknown(const char *list, const char *unknown, char *kept)
{
	char item[FTRACE_LIST_MAX];
	size_t at = 0;

	while (*list) {
		size_t len = 0;

		while (list[len] && list[len] != ',')
			len++;
		memcpy(item, list, len);
		item[len] = 0;
		if (len && !cmdline_list_has(unknown, item)) {
			if (at)
				kept[at++] = ',';
			memcpy(kept + at, item, len);
			at += len;
		}
		list += len + (list[len] == ',');
	}
	kept[at] = 0;
}

int ftrace_set_list(enum ftrace_list which, const char *list, char *why, size_t cap)
{
	char unknown[FTRACE_LIST_MAX], kept[FTRACE_LIST_MAX];
	size_t len = strlen(list);
	int rc = 0;

	if (!why)
		cap = 0;
	if (which >= FTRACE_LISTS)
		return -1;
	if (len >= FTRACE_LIST_MAX) {
		ksnprintf(why, cap, "the list is longer than %u bytes; not changed",
			  FTRACE_LIST_MAX - 1);
		return -1;
	}
	if (!context_ok(list_options[which]) || !lock_take()) {
		ksnprintf(why, cap, "the function tracer cannot change now; not changed");
		return -1;
	}
	/*
	 * Items that match no function are left out and the rest applies. A list
	 * whose every item is unknown is refused: applied, an empty filter would
	 * widen tracing to every function, the opposite of what was asked.
	 */
	if (ftrace_filter_apply(list, nsites, name_of, NULL, site_flags, SITE_SCRATCH,
				unknown, sizeof(unknown))) {
		drop_unknown(list, unknown, kept);
		if (!kept[0]) {
			lock_give();
			ksnprintf(why, cap, "no traceable function matches %s; not changed",
				  unknown);
			return -1;
		}
		ksnprintf(why, cap, "no traceable function matches %s; left out (applied: %s)",
			  unknown, kept);
		list = kept;
		len = strlen(kept);
		rc = 1;
	}
	ftrace_filter_apply(list, nsites, name_of, NULL, site_flags, list_bits[which], NULL, 0);
	memcpy(cur_list[which], list, len + 1);
	if (which == FTRACE_GRAPH_FUNCTION) {
		__atomic_store_n(&graph_fn_on, list[0] != 0, __ATOMIC_RELEASE);
		graph_fast_update();
	} else
		update_sites();
	lock_give();
	return rc;
}

const char *ftrace_list_get(enum ftrace_list which)
{
	return which < FTRACE_LISTS ? cur_list[which] : "";
}

const char *ftrace_list_option(enum ftrace_list which)
{
	return which < FTRACE_LISTS ? list_options[which] : "?";
}

void ftrace_set_graph_depth(uint32_t depth)
{
	if (!depth || depth > FTRACE_STACK_FRAMES)
		depth = FTRACE_STACK_FRAMES;
	__atomic_store_n(&graph_limit, depth, __ATOMIC_RELAXED);
	if (ready && lock_take()) {	/* the trampoline's copy: one writer at a time */
		graph_fast_update();
		lock_give();
	}
}

uint32_t ftrace_graph_depth(void)
{
	return __atomic_load_n(&graph_limit, __ATOMIC_RELAXED);
}

void ftrace_get_stats(struct ftrace_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->sites = nsites;
	for (unsigned i = 0; i < nsites; i++)
		st->enabled += !!(site_flags[i] & SITE_ENABLED);
	st->dropped = n_dropped;
	st->refused = n_refused;
	st->patches = n_patches;
	st->int3_hits = arch_ftrace_int3_hits();
	for (unsigned c = 0; c < MAX_CPUS; c++) {
		const struct ftrace_cpu *fc = &ftrace_cpus[c];

		st->overrun += fc->overrun;
		st->recursion += fc->recursion;
		st->stale += fc->stale;
		st->nostack += fc->nostack;
		for (unsigned l = 0; fc->stack && l < FTRACE_LEVELS; l++) {
			/* The deepest frame ever used: frames keep their sp once written. */
			uint32_t d = FTRACE_STACK_FRAMES;

			while (d && !__atomic_load_n(&fc->stack[l].sp[d - 1], __ATOMIC_RELAXED))
				d--;
			if (d > st->max_depth)
				st->max_depth = d;
		}
	}
}

uint32_t ftrace_graph_depth_now(unsigned cpu, unsigned level)
{
	if (cpu >= MAX_CPUS || level >= FTRACE_LEVELS || !ftrace_cpus[cpu].stack)
		return 0;
	return __atomic_load_n(&ftrace_cpus[cpu].stack[level].depth, __ATOMIC_RELAXED);
}

uint64_t ftrace_graph_ret_addr(unsigned cpu, unsigned level, int *idx, uint64_t ret,
			       const uint64_t *slot)
{
	const struct ftrace_stack *st;
	uint32_t depth;
	int d;

	if (ret != (uint64_t)(uintptr_t)ftrace_return_to_handler || cpu >= MAX_CPUS ||
	    level >= TRACE_CTX_LEVELS)
		return ret;
	st = ftrace_stacks[cpu][level];
	depth = __atomic_load_n(&st->depth, __ATOMIC_RELAXED);
	if (depth > FTRACE_STACK_FRAMES)
		depth = FTRACE_STACK_FRAMES;
	/* G2: older frames lie further up the stack, where the walk goes. */
	for (d = (int)depth - 1 - *idx; d >= 0; d--) {
		if (st->sp[d] != (uint64_t)(uintptr_t)(slot + 1) ||
		    st->ret[d] == (uint64_t)(uintptr_t)ftrace_return_to_handler)
			continue;	/* another slot's, or a tail call's callee */
		*idx = (int)depth - d;
		return st->ret[d];
	}
	return ret;
}

/*
 * The backtrace's view of function_graph (TRAP_HOOK, <arch/trap.h>): a
 * slot holding the return trampoline maps back through the shadow stack
 * of the level the call was made at. The walk starts at the level the
 * report runs at (the trapped code's) and only moves down: a slot not
 * found at a level is an interrupted context's.
 *   u->word[0]  1 + the level searched now; 0 before the first trampoline
 *   u->word[1]  ftrace_graph_ret_addr()'s place on that level
 */
static uint64_t ftrace_unwind(struct trap_unwind *u, uint64_t ret, const uint64_t *slot)
{
	unsigned cpu = this_cpu()->cpu;

	if (ret != (uint64_t)(uintptr_t)ftrace_return_to_handler)
		return ret;
	if (!u->word[0])
		u->word[0] = 1u + this_cpu_read(trace_ctx.level);
	for (;;) {
		int idx = (int)u->word[1];
		uint64_t r = ftrace_graph_ret_addr(cpu, (unsigned)u->word[0] - 1, &idx, ret, slot);

		u->word[1] = (uint64_t)idx;
		if (r != ret || u->word[0] == 1)
			return r;	/* found, or on no level: printed as it is */
		u->word[0]--;		/* not this level's: an interrupted context's */
		u->word[1] = 0;
	}
}
TRAP_HOOK(ftrace, .name = "ftrace", .unwind = ftrace_unwind);

uint64_t ftrace_site_of(const char *name)
{
	for (unsigned i = 0; i < nsites; i++) {
		const char *s = name_of(i, NULL);

		if (s && !strcmp(s, name))
			return sites[i];
	}
	return 0;
}

void ftrace_boot(void)
{
	char why[2 * FTRACE_LIST_MAX + 96];
	bool refused = false;
	int rc = 0;

	if (!ready)
		return;
	for (int w = 0; w < FTRACE_LISTS; w++) {
		int r;

		if (!opt_list[w][0])
			continue;
		r = ftrace_set_list((enum ftrace_list)w, opt_list[w], why, sizeof(why));
		if (r)
			printk("ftrace: %s=%s: %s\n", list_options[w], opt_list[w], why);
		/* filter and graph_function narrow: refused, they would trace everything. */
		refused |= r < 0 && w != FTRACE_NOTRACE;
		rc |= r;
	}
	if (opt_tracer != FTRACE_NOP && refused) {
		printk("ftrace: ftrace=%s not started: a list that would narrow it was refused, "
		       "and every function would be traced instead; start it from the shell "
		       "(tracer %s) once the list is right\n", tracer_names[opt_tracer],
		       tracer_names[opt_tracer]);
		return;
	}
	if (opt_tracer != FTRACE_NOP)
		rc |= ftrace_set_tracer((enum ftrace_tracer)opt_tracer);
	if (opt_tracer != FTRACE_NOP || rc) {
		struct ftrace_stats st;

		ftrace_get_stats(&st);
		printk("ftrace: tracer=%s enabled=%u refused=%llu\n", tracer_names[opt_tracer],
		       st.enabled, (unsigned long long)st.refused);
	}
}
