/*
 * The persistent range's layout and its validator (design in
 * <trace/persist.h>).  Portable: the kernel runs it at boot on the range
 * the previous boot left, the host tests on damaged copies.
 */
#include <stddef.h>
#include <lib/crc32.h>
#include <trace/persist.h>

const char *const persist_end_names[PERSIST_END_COUNT] = {
	"unknown", "panic", "watchdog", "reset",
};

_Static_assert(sizeof(struct persist_header) == 128, "persist_header is a format");
_Static_assert(sizeof(struct persist_cpu) == 88, "persist_cpu is a format");
_Static_assert(PERSIST_SLOT_BYTES >= sizeof(struct persist_header) +
	       PERSIST_MAX_CPUS * sizeof(struct persist_cpu), "a slot holds every record");

static uint64_t round_page(uint64_t b)
{
	return (b + PERSIST_PAGE - 1) / PERSIST_PAGE * PERSIST_PAGE;
}

bool persist_layout(struct persist_layout *l, uint64_t base, uint64_t size,
		    uint32_t nr_cpus, uint32_t nr_pages)
{
	size_t cb = ring_buffer_cpu_size(nr_pages);

	__builtin_memset(l, 0, sizeof(*l));
	if (!cb || nr_cpus == 0 || nr_cpus > PERSIST_MAX_CPUS || base % PERSIST_PAGE ||
	    size % PERSIST_PAGE)
		return false;
	l->base = base;
	l->size = size;
	l->nr_cpus = nr_cpus;
	l->nr_pages = nr_pages;
	l->header_bytes = (uint64_t)PERSIST_SLOTS * PERSIST_SLOT_BYTES;
	l->cb_off = 0;
	l->table_off = round_page(cb);
	l->seal_off = l->table_off + round_page(((uint64_t)nr_pages + 1) * sizeof(uint64_t));
	l->data_off = l->seal_off + round_page(((uint64_t)nr_pages + 1) * sizeof(uint32_t));
	l->area_bytes = l->data_off + ((uint64_t)nr_pages + 1) * PERSIST_PAGE;
	l->used = l->header_bytes + (uint64_t)nr_cpus * l->area_bytes;
	return l->used <= size;
}

uint32_t persist_fit_pages(uint64_t size, uint32_t nr_cpus, uint32_t want)
{
	struct persist_layout l;
	uint32_t lo = 2, hi = want > RB_MAX_PAGES ? RB_MAX_PAGES : want;

	if (hi < 2 || !persist_layout(&l, 0, size, nr_cpus, lo))
		return 0;
	while (lo < hi) {	/* the layout grows with N: bisect */
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (persist_layout(&l, 0, size, nr_cpus, mid))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

uint32_t persist_header_crc(const struct persist_header *h)
{
	struct persist_header copy = *h;
	uint32_t crc;

	copy.crc = 0;
	crc = crc32_update(CRC32_INIT, &copy, sizeof(copy));
	crc = crc32_update(crc, h->cpu, (size_t)h->nr_cpus * sizeof(struct persist_cpu));
	return crc32_final(crc);
}

void persist_header_store(struct persist_header *dst, const struct persist_header *src,
			  uint64_t bytes)
{
	uint8_t *d = (uint8_t *)dst;
	const uint8_t *s = (const uint8_t *)src;

	__atomic_store_n(&dst->magic, 0, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (uint64_t i = sizeof(dst->magic); i < bytes; i++)
		d[i] = s[i];
	/* release: the body before the magic (in program order, which is
	 * memory order for a reset on x86: stores are not reordered). */
	__atomic_store_n(&dst->magic, src->magic, __ATOMIC_RELEASE);
}

uint32_t persist_header_commit(uint8_t *mem, struct persist_header *work, uint64_t bytes)
{
	uint32_t k;

	work->gen++;
	k = (uint32_t)(work->gen % PERSIST_SLOTS);	/* the newest valid is the other one */
	work->crc = 0;
	work->crc = persist_header_crc(work);
	persist_header_store((struct persist_header *)(mem + persist_slot_off(k)), work, bytes);
	return k;
}

uint32_t persist_state_crc(const struct rb_walk_state *st, const uint64_t *slots, uint32_t n)
{
	uint32_t crc = crc32_update(CRC32_INIT, st, sizeof(*st));

	return crc32_final(crc32_update(crc, slots, (size_t)n * sizeof(uint64_t)));
}

/* What the walker's callbacks need to find one CPU's pages. */
struct persist_walk_ctx {
	const uint8_t *area;		/* the CPU's area */
	const struct persist_layout *l;
	uint32_t cpu;
	void *ctx;			/* the caller's */
	int (*page)(void *ctx, uint32_t cpu, const struct rb_walk_page *pg);
};

static const uint8_t *walk_page(void *ctx, uint32_t id)
{
	struct persist_walk_ctx *w = ctx;

	return id <= w->l->nr_pages ? w->area + w->l->data_off + (uint64_t)id * PERSIST_PAGE : NULL;
}

static bool walk_page_ok(void *ctx, uint32_t id)
{
	struct persist_walk_ctx *w = ctx;
	const uint32_t *seal = (const uint32_t *)(w->area + w->l->seal_off);

	return id <= w->l->nr_pages && seal[id] == crc32(walk_page(ctx, id), PERSIST_PAGE);
}

static int walk_emit(void *ctx, const struct rb_walk_page *pg)
{
	struct persist_walk_ctx *w = ctx;

	return w->page(w->ctx, w->cpu, pg);
}

/* P1: one slot's own consistency (version, CPU count, CRC).  NULL, or why not. */
static const char *check_slot(const struct persist_header *h)
{
	if (h->version != PERSIST_VERSION)
		return "format version differs";
	if (h->nr_cpus == 0 || h->nr_cpus > PERSIST_MAX_CPUS)
		return "CPU count out of range";
	if (h->crc != persist_header_crc(h))
		return "header checksum mismatch";
	return NULL;
}

/*
 * P1: the newest slot whose CRC holds (a rewrite torn by a reset leaves
 * its slot without magic or failing its CRC: the other is read), or NULL
 * and *why: the first slot's reason.  *any: some slot has magic.
 */
static const struct persist_header *pick_slot(const uint8_t *mem, bool *any, const char **why)
{
	const struct persist_header *best = NULL;

	*any = false;
	*why = NULL;
	for (uint32_t k = 0; k < PERSIST_SLOTS; k++) {
		const struct persist_header *h =
			(const struct persist_header *)(mem + persist_slot_off(k));
		const char *w;

		if (h->magic != PERSIST_MAGIC)
			continue;
		*any = true;
		w = check_slot(h);
		if (w) {
			if (!*why)
				*why = w;
			continue;
		}
		if (!best || h->gen > best->gen)
			best = h;
	}
	return best;
}

/* True if h (build_id_len checked) names an image other than ex's. */
static bool persist_foreign(const struct persist_header *h, const struct persist_expect *ex)
{
	return h->build_id_len != ex->build_id_len ||
	       __builtin_memcmp(h->build_id, ex->build_id, h->build_id_len);
}

/* P1: the chosen header against this image and window.  NULL, or why it is refused. */
static const char *check_header(const struct persist_header *h, const struct persist_expect *ex,
				struct persist_layout *l)
{
	if (h->build_id_len > PERSIST_BUILD_ID_MAX)
		return "build id length out of range";
	if (!ex->any_image && persist_foreign(h, ex))
		return "written by another kernel image (build id differs)";
	if (h->base != ex->base || h->size > ex->size)
		return "written for another range";
	if (!persist_layout(l, h->base, h->size, h->nr_cpus, h->nr_pages) ||
	    l->area_bytes / PERSIST_PAGE != h->cpu_area_pages)
		return "layout does not fit the range";
	if (h->end >= PERSIST_END_COUNT || h->sealed > 1 || h->reserved)
		return "end record out of range";
	return NULL;
}

int persist_check(const uint8_t *mem, const struct persist_expect *ex,
		  int (*page)(void *ctx, uint32_t cpu, const struct rb_walk_page *pg),
		  void (*done)(void *ctx, const struct persist_cpu_result *cr),
		  void *ctx, struct persist_result *res)
{
	const struct persist_header *h;
	struct persist_layout l;
	bool any;

	__builtin_memset(res, 0, sizeof(*res));
	if (ex->size < (uint64_t)PERSIST_SLOTS * PERSIST_SLOT_BYTES)
		return res->verdict = PERSIST_NONE;
	h = pick_slot(mem, &any, &res->why);
	if (!any)
		return res->verdict = PERSIST_NONE;
	if (!h)
		return res->verdict = PERSIST_REJECTED;
	res->why = check_header(h, ex, &l);
	if (h->build_id_len <= PERSIST_BUILD_ID_MAX && persist_foreign(h, ex)) {
		/* Named by a header whose CRC holds: the image that wrote it. */
		res->foreign = true;
		__builtin_memcpy(res->build_id, h->build_id, h->build_id_len);
		res->build_id_len = h->build_id_len;
		res->boot_id = h->boot_id;
		res->end = h->end < PERSIST_END_COUNT ? h->end : PERSIST_END_UNKNOWN;
		res->size = h->size;
		if (!ex->any_image)
			return res->verdict = PERSIST_FOREIGN;
	}
	if (res->why)
		return res->verdict = PERSIST_REJECTED;
	res->boot_id = h->boot_id;
	res->end = h->end;
	res->nr_cpus = h->nr_cpus;
	res->sealed = h->sealed;

	for (uint32_t c = 0; c < h->nr_cpus; c++) {
		const uint8_t *area = mem + persist_cpu_off(&l, c);
		const struct rb_cpu_buffer *cb = (const struct rb_cpu_buffer *)(area + l.cb_off);
		struct persist_walk_ctx pw = { area, &l, c, ctx, page };
		struct persist_cpu_result cr = { .cpu = c, .rec = &h->cpu[c] };
		struct rb_walk_state st;
		struct rb_walk w = {
			.st = &st, .slots = (const uint64_t *)(cb + 1), .cpu = c,
			.page = walk_page, .page_ok = h->sealed ? walk_page_ok : NULL, .ctx = &pw,
		};

		if (!h->cpu[c].present)
			continue;
		ring_walk_state(cb, &st);
		cr.st = &st;
		/*
		 * Sealed, but the state changed after the seal (a record
		 * stored late): the structure is still checked, and each page
		 * against its own seal, so only the pages that changed are
		 * refused, not the CPU's whole buffer.
		 */
		cr.state_changed = h->sealed &&
			h->cpu[c].state_crc != persist_state_crc(&st, w.slots, l.nr_pages);
		if (st.nr_slots != l.nr_pages)
			cr.why = "ring size is not the header's";
		else if (st.page_size != PERSIST_PAGE)	/* P3: pages are 4 KiB apart */
			cr.why = "page size is not the range's";
		else if (ring_walk(&w, walk_emit, &pw, &cr.walk))
			cr.why = cr.walk.why;
		else {
			cr.walked = true;
			cr.why = cr.walk.why;
			res->cpus_ok++;
			res->events += cr.walk.events;
			res->lost += cr.walk.lost;
			res->pages_refused += cr.walk.refused;
		}
		if (done)
			done(ctx, &cr);
	}
	if (res->cpus_ok == 0) {
		res->why = "no CPU's buffer passed its checks";
		return res->verdict = PERSIST_REJECTED;
	}
	return res->verdict = PERSIST_VALID;
}

void persist_seal_cpu(const struct persist_layout *l, uint8_t *area, struct persist_cpu *rec)
{
	const struct rb_cpu_buffer *cb = (const struct rb_cpu_buffer *)(area + l->cb_off);
	uint32_t *seal = (uint32_t *)(area + l->seal_off);
	struct rb_walk_state st;

	ring_walk_state(cb, &st);
	rec->state_crc = persist_state_crc(&st, (const uint64_t *)(cb + 1), l->nr_pages);
	for (uint32_t id = 0; id <= l->nr_pages; id++)
		seal[id] = crc32(area + l->data_off + (uint64_t)id * PERSIST_PAGE, PERSIST_PAGE);
}
