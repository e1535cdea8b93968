/*
 * The persistent trace range: ring buffers, their state and a header, at a
 * fixed physical range that the next boot of the same image finds, checks
 * and reads (docs/persist.md).  One definition of the layout, for the
 * kernel that writes it and the validator, which runs in the kernel at the
 * next boot and on the host in tests.  No pointer inside the range is ever
 * followed: every address is base + an offset this layout computes.
 *
 * LAYOUT (all offsets in 4 KiB pages from the range's base)
 *
 *   +--------------------+---------------------------------+-----+---------+
 *   | header (H pages)   | CPU 0 area                      | ... | CPU c-1 |
 *   +--------------------+---------------------------------+-----+---------+
 *   | persist_header     | struct rb_cpu_buffer + slots    |  M pages      |
 *   | persist_cpu[c]:    | page address table (N + 1)      |  T pages      |
 *   |  clock, seal CRC   | seal: a CRC-32 per page (N + 1) |  S pages      |
 *   |                    | N + 1 data pages, by page id    |  N + 1 pages  |
 *   +--------------------+---------------------------------+-----+---------+
 *
 *   H = two header slots, each a header and room for PERSIST_MAX_CPUS
 *   records (a fixed size: where slot 1 is does not depend on what slot 0
 *   says); M, T, S as the sizes of their parts round up.  Same base, size, CPU count and N: same layout,
 *   which the header records and the next boot compares before reading.
 *
 * TRUST
 *   P1 The header is the range's only self-describing part: magic, version,
 *      the image's build id and the layout it claims, covered by its CRC.
 *      It is kept twice (slots 0 and 1), each with its own CRC and a
 *      generation number; a rewrite goes to the slot that is not the newest
 *      valid one, magic last (persist_header_store()), so a reset at any
 *      instant leaves the previous version or the new one valid, never
 *      neither.  The newest slot whose CRC holds is read; if it fails the
 *      other checks, the range is rejected whole.
 *   P3 Every length and offset read from the range is checked against the
 *      range's layout before it is used: page size (the layout's 4 KiB),
 *      page ids, counts, commits, record lengths.
 *   P2 A CPU's buffer is then walked (<trace/ring_walk.h>), every field
 *      checked; a seal (written when the kernel itself ended the boot: a
 *      panic, a watchdog, the shell's reboot) adds a CRC of the walked state
 *      and of every page, so damaged bytes anywhere are refused, events
 *      included.  Without a seal (a reset from outside) only the structure
 *      is checked: an event's payload bytes cannot be verified.
 */
#ifndef TRACE_PERSIST_H
#define TRACE_PERSIST_H

#include <stdbool.h>
#include <stdint.h>

#include <trace/dump_format.h>
#include <trace/ring_walk.h>

#define PERSIST_MAGIC		0x5453525045524254ull	/* "BTREPRST" little-endian */
#define PERSIST_VERSION		2u	/* 2: two header slots, gen */
#define PERSIST_PAGE		4096u
#define PERSIST_BUILD_ID_MAX	32u
#define PERSIST_MAX_CPUS	256u	/* CPU records a header slot has room for */
/* One header slot: the header and PERSIST_MAX_CPUS records, whole pages. */
#define PERSIST_SLOT_BYTES	((128u + PERSIST_MAX_CPUS * 88u + PERSIST_PAGE - 1) / \
				 PERSIST_PAGE * PERSIST_PAGE)
#define PERSIST_SLOTS		2u

/* How the boot that wrote the range ended; recorded by persist_mark_end(). */
enum persist_end {
	PERSIST_END_UNKNOWN = 0,	/* no record: a reset from outside, a triple fault */
	PERSIST_END_PANIC = 1,		/* a fatal exception or panic */
	PERSIST_END_WATCHDOG = 2,	/* the hard-lockup watchdog */
	PERSIST_END_RESET = 3,		/* the kernel reset the machine (shell's reboot) */
	PERSIST_END_COUNT
};

extern const char *const persist_end_names[PERSIST_END_COUNT];

/* One CPU's record in the header page(s). */
struct persist_cpu {
	struct dump_clock clock;	/* its cycles-to-ns conversion and trust */
	uint32_t present;		/* 1: the CPU had a buffer here */
	uint32_t state_crc;		/* sealed: CRC of its walk state and slots */
};

struct persist_header {
	uint64_t magic;			/* PERSIST_MAGIC */
	uint32_t version;		/* PERSIST_VERSION */
	uint32_t crc;			/* CRC-32 of the header and CPU records, this field 0 */
	uint8_t build_id[PERSIST_BUILD_ID_MAX];	/* the image's build id, zero padded */
	uint32_t build_id_len;		/* its bytes */
	uint32_t nr_cpus;		/* CPU areas */
	uint64_t boot_id;		/* the boot that wrote it */
	uint64_t base;			/* physical base of the range */
	uint64_t size;			/* its bytes */
	uint32_t nr_pages;		/* N: ring pages per CPU */
	uint32_t cpu_area_pages;	/* pages per CPU area */
	uint64_t tsc_hz;		/* the boot's TSC rate, for dumps */
	uint64_t tsc_err_ppb;		/* ... and its bound */
	uint32_t end;			/* enum persist_end */
	uint32_t end_cpu;		/* the CPU that recorded it */
	uint32_t sealed;		/* 1: the seal CRCs are valid */
	uint32_t reserved;		/* zero */
	uint64_t gen;			/* rewrites so far: the newest valid slot is read */
	struct persist_cpu cpu[];	/* nr_cpus records */
};

/* Where everything is, from base, size, CPU count and N (bytes from base). */
struct persist_layout {
	uint64_t base, size;		/* the range */
	uint32_t nr_cpus, nr_pages;	/* c and N */
	uint64_t header_bytes;		/* H pages, in bytes */
	uint64_t area_bytes;		/* one CPU area */
	uint64_t cb_off, table_off, seal_off, data_off;	/* within an area */
	uint64_t used;			/* bytes of the range the layout takes */
};

/* Fill *l; false if c CPUs of N pages do not fit [base, base + size). */
bool persist_layout(struct persist_layout *l, uint64_t base, uint64_t size,
		    uint32_t nr_cpus, uint32_t nr_pages);
/* The largest N <= want (>= 2) that fits, or 0. */
uint32_t persist_fit_pages(uint64_t size, uint32_t nr_cpus, uint32_t want);

/* Offsets of CPU c's parts from base. */
static inline uint64_t persist_cpu_off(const struct persist_layout *l, uint32_t c)
{
	return l->header_bytes + (uint64_t)c * l->area_bytes;
}

static inline uint64_t persist_slot_off(uint32_t k)
{
	return (uint64_t)k * PERSIST_SLOT_BYTES;
}

uint32_t persist_header_crc(const struct persist_header *h);

/*
 * Write src (its CRC already set) into the header slot dst, atomic from
 * the next boot's point of view: dst's magic is cleared first and stored
 * last, so a reset in between leaves dst without magic (not a candidate)
 * and the other slot read.  bytes: the header and its CPU records.
 */
void persist_header_store(struct persist_header *dst, const struct persist_header *src,
			  uint64_t bytes);
/*
 * Rewrite the range's header (mem: the range) from the working copy work:
 * its gen advanced and CRC set, stored into the slot the previous rewrite
 * did not use (gen's parity), so the newest valid slot stays intact until
 * the new one is whole.  Returns the slot written.
 */
uint32_t persist_header_commit(uint8_t *mem, struct persist_header *work, uint64_t bytes);
/* CRC of a walk state and its N slot words, as sealed. */
uint32_t persist_state_crc(const struct rb_walk_state *st, const uint64_t *slots, uint32_t n);

/*
 * Seal CPU c's area (P2): the CRC of its walk state into rec, one CRC per
 * page into the area's seal.  Its writers must be quiescent.
 */
void persist_seal_cpu(const struct persist_layout *l, uint8_t *area, struct persist_cpu *rec);

/* What the next boot expects: this image, and where the range may be. */
struct persist_expect {
	const uint8_t *build_id;	/* this image's */
	uint32_t build_id_len;
	uint64_t base, size;		/* the window the header is looked for in: the
					 * header's base must be base, its range
					 * within size bytes of it */
	bool any_image;			/* true: a range another image wrote is read
					 * too (the user asked to decode it) */
};

enum persist_verdict {
	PERSIST_NONE = 0,		/* no header (no magic): nothing there */
	PERSIST_REJECTED = 1,		/* a header, refused: why says why */
	PERSIST_VALID = 2,		/* accepted, perhaps without some CPUs or pages */
	PERSIST_FOREIGN = 3,		/* a valid header (this format version, its CRC
					 * holds) that another image wrote, and
					 * !any_image: not read further */
};

struct persist_result {
	int verdict;			/* enum persist_verdict */
	const char *why;		/* REJECTED: why */
	uint64_t boot_id;		/* VALID: the previous boot's id */
	uint32_t end;			/* its enum persist_end */
	uint32_t nr_cpus;		/* CPU areas */
	uint32_t cpus_ok;		/* CPUs whose buffer was walked */
	uint32_t sealed;		/* 1: seals checked */
	uint64_t events, lost;		/* over every walked CPU */
	uint32_t pages_refused;		/* over every walked CPU */
	bool foreign;			/* the header names another image's build id
					 * (FOREIGN; or any_image and read anyway) */
	uint8_t build_id[PERSIST_BUILD_ID_MAX];	/* foreign: the image that wrote it */
	uint32_t build_id_len;		/* ... its bytes */
	uint64_t size;			/* foreign: the range's bytes, as its header says */
};

/* Per-CPU outcome, for the kernel to report each refusal. */
struct persist_cpu_result {
	uint32_t cpu;
	bool walked;			/* false: the CPU's state was refused */
	const char *why;		/* the first refusal (state or page), or NULL */
	struct rb_walk_result walk;	/* its counts */
	const struct rb_walk_state *st;	/* its walked state (valid during the callback) */
	const struct persist_cpu *rec;	/* its header record */
	bool state_changed;		/* sealed, but its state CRC no longer matches:
					 * read with each page's seal (one late record
					 * costs the pages it changed, not the CPU) */
};

/*
 * Check the range mapped at mem (size ex->size bytes) as the previous boot
 * left it.  For each readable page, oldest first per CPU, CPU by CPU,
 * page(ctx, cpu, pg) is called; after each CPU, done(ctx, cr).  Writes
 * nothing to mem.  Returns res->verdict.  A range another image wrote is
 * PERSIST_FOREIGN (its build id, boot id, end and size in res, nothing
 * walked) unless ex->any_image: then it is checked and read as this
 * image's would be, res->foreign set.  Both layouts are this format
 * version's (a header of another version is REJECTED before its build id
 * is looked at), so reading it follows the same checks, P1 to P3.
 */
int persist_check(const uint8_t *mem, const struct persist_expect *ex,
		  int (*page)(void *ctx, uint32_t cpu, const struct rb_walk_page *pg),
		  void (*done)(void *ctx, const struct persist_cpu_result *cr),
		  void *ctx, struct persist_result *res);

#endif
