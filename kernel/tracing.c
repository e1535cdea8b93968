/*
 * Tracing set-up: one ring buffer per CPU, its pages from the page
 * allocator (never sharing a page with code: the allocator hands out RAM
 * outside the kernel image), wired to the CPU's per-CPU area so a writer
 * finds its buffer with one %gs load. Before this runs, and for a CPU
 * without a buffer, percpu.rb points at the ring buffer's placeholder,
 * which refuses and counts every call.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"
#include "kernel/tracing.h"

#define TRACE_PAGES_DEFAULT	64	/* 256 KiB per CPU */

static const char *const mode_names[] = { "overwrite", "discard", NULL };

static uint64_t opt_pages = TRACE_PAGES_DEFAULT;
static int opt_mode = RB_MODE_OVERWRITE;
CMDLINE_OPTION(trace_pages, .name = "trace.pages", .type = OPT_UINT, .var = &opt_pages,
	       .min = 2, .max = RB_MAX_PAGES,
	       .help = "ring buffer pages (4 KiB) per CPU");
CMDLINE_OPTION(trace_mode, .name = "trace.mode", .type = OPT_ENUM, .var = &opt_mode,
	       .choices = mode_names,
	       .help = "overwrite (flight recorder) or discard (drop new events when full)");

struct ring_buffer trace_rb;
uint32_t trace_pages;
int trace_mode;

static struct rb_cpu_buffer *buffers[MAX_CPUS];
static void *page_tables[MAX_CPUS];	/* each CPU's array of page pointers */
static bool recording;

void arch_trace_warn(unsigned cpu, const char *why)
{
	struct percpu *pc = cpu < MAX_CPUS ? cpus[cpu] : NULL;

	if (pc && this_cpu()->nmi_depth) {	/* no printk in NMI: keep it */
		pc->trace_stop_why = why;
		return;
	}
	printk("trace: cpu=%u recording stopped: %s\n", cpu, why);
}

void trace_report_stops(void)
{
	for (unsigned c = 0; c < cpu_count; c++) {
		struct percpu *pc = cpus[c];
		const char *why = pc ? pc->trace_stop_why : NULL;
		if (why) {
			pc->trace_stop_why = NULL;
			printk("trace: cpu=%u recording stopped: %s\n", c, why);
		}
	}
}

/* Pages one CPU's buffer takes: ring + reader page + the struct. */
static uint64_t pages_per_cpu(uint32_t n)
{
	return n + 1 + (ring_buffer_cpu_size(n) + PAGE_SIZE - 1) / PAGE_SIZE +
	       ((n + 1) * sizeof(void *) + PAGE_SIZE - 1) / PAGE_SIZE;
}

static bool alloc_cpu(unsigned c, uint32_t n, int mode)
{
	uint64_t meta = (ring_buffer_cpu_size(n) + PAGE_SIZE - 1) / PAGE_SIZE;
	uint64_t tab = ((n + 1) * sizeof(void *) + PAGE_SIZE - 1) / PAGE_SIZE;
	uint64_t cb_phys = pmm_alloc(meta, 1), tab_phys = pmm_alloc(tab, 1);
	uint64_t data_phys = pmm_alloc(n + 1, 1);
	struct rb_cpu_config cfg = {
		.cpu = c, .nr_pages = n, .page_size = RB_PAGE_SIZE_DEFAULT,
		.mode = (uint32_t)mode, .start_off = !recording,
	};
	void **pages;

	if (!cb_phys || !tab_phys || !data_phys) {
		if (cb_phys) pmm_free(cb_phys, meta);
		if (tab_phys) pmm_free(tab_phys, tab);
		if (data_phys) pmm_free(data_phys, n + 1);
		return false;
	}
	pages = (void **)(uintptr_t)tab_phys;
	for (uint32_t i = 0; i <= n; i++)
		pages[i] = (void *)(uintptr_t)(data_phys + i * PAGE_SIZE);
	buffers[c] = (struct rb_cpu_buffer *)(uintptr_t)cb_phys;
	page_tables[c] = pages;
	if (ring_buffer_cpu_init(buffers[c], meta * PAGE_SIZE, &cfg, pages))
		return false;
	return true;
}

static void free_cpu(unsigned c, uint32_t n)
{
	if (!buffers[c])
		return;
	pmm_free((uintptr_t)buffers[c], (ring_buffer_cpu_size(n) + PAGE_SIZE - 1) / PAGE_SIZE);
	pmm_free((uintptr_t)((void **)page_tables[c])[0], n + 1);
	pmm_free((uintptr_t)page_tables[c], ((n + 1) * sizeof(void *) + PAGE_SIZE - 1) / PAGE_SIZE);
	buffers[c] = NULL;
	page_tables[c] = NULL;
}

static void noop(void *arg)
{
	(void)arg;
}

/* After this, no CPU is inside a write: each ran a call with recording off. */
static void quiesce(void)
{
	for (unsigned c = 0; c < cpu_count; c++)
		if (cpus[c])
			cpus[c]->rb = ring_buffer_cpu(NULL, 0);	/* the placeholder */
	for (unsigned c = 1; c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online && smp_call_async(c, noop, NULL))
			smp_call_wait(c, 5000);
}

static bool build(uint32_t n, int mode)
{
	struct pmm_stats st;
	uint64_t need;

	pmm_get_stats(&st);
	need = pages_per_cpu(n) * cpu_count;
	if (need > st.free_pages / 2) {
		uint32_t fit = n;
		while (fit > 2 && pages_per_cpu(fit) * cpu_count > st.free_pages / 4)
			fit /= 2;
		printk("trace: trace.pages=%u needs %llu MiB for %u CPUs but only %llu MiB are "
		       "free; using trace.pages=%u\n", n,
		       (unsigned long long)(need * PAGE_SIZE >> 20), cpu_count,
		       (unsigned long long)(st.free_pages * PAGE_SIZE >> 20), fit);
		n = fit;
	}
	for (unsigned c = 0; c < cpu_count; c++) {
		if (!cpus[c])
			continue;
		if (!alloc_cpu(c, n, mode)) {
			printk("trace: cpu=%u: no memory for %u pages; no buffer\n", c, n);
			continue;
		}
	}
	trace_pages = n;
	trace_mode = mode;
	trace_rb.nr_cpus = cpu_count;
	trace_rb.cpus = buffers;
	for (unsigned c = 0; c < cpu_count; c++)
		if (cpus[c])
			cpus[c]->rb = ring_buffer_cpu(&trace_rb, c);
	return true;
}

void tracing_init(void)
{
	recording = true;
	build((uint32_t)opt_pages, opt_mode);
	printk("trace: cpus=%u pages_per_cpu=%u page_size=%u mode=%s reserve=%s recording=on\n",
	       cpu_count, trace_pages, RB_PAGE_SIZE_DEFAULT, mode_names[trace_mode],
	       CONFIG_TRACE_RESERVE_CMPXCHG ? "cmpxchg" : "xadd");
}

bool tracing_reconfigure(uint32_t pages, int mode)
{
	uint32_t old = trace_pages;

	quiesce();
	for (unsigned c = 0; c < cpu_count; c++)
		free_cpu(c, old);
	return build(pages, mode);
}

void tracing_start(void)
{
	recording = true;
	for (unsigned c = 0; c < cpu_count; c++)
		ring_buffer_record_on(ring_buffer_cpu(&trace_rb, c));
}

void tracing_stop(void)
{
	recording = false;
	for (unsigned c = 0; c < cpu_count; c++)
		ring_buffer_record_off(ring_buffer_cpu(&trace_rb, c));
}

bool tracing_on(void)
{
	return recording;
}

static void flush_here(void *arg)
{
	(void)arg;
	ring_buffer_flush(this_cpu_rb());
}

void tracing_flush_all(void)
{
	for (unsigned c = 0; c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online && smp_call_async(c, flush_here, NULL))
			smp_call_wait(c, 5000);
}

/*
 * Out-of-line copies of the write path, for counting its instructions
 * (objdump -d build/kernel.elf) and for the benchmarks: an 8-byte-payload
 * event, exactly what trace_event1() inlines into its callers.
 */
__noinline int trace_probe_event1(uint32_t v)
{
	return trace_event1(TEV_BENCH, v);
}
