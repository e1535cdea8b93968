/*
 * The compact dump: a frame's payload range-coded into a PACK frame
 * (<trace/dump_format.h>), shared by the kernel, which packs, and the host
 * reader, which unpacks.  docs/dump-format.md §2 has the format and its
 * figures.
 *
 * A PACK frame stands for one frame of the old encoding (the "inner"
 * frame): its payload is the inner type (one byte) and the inner payload
 * range-coded with adaptive models that start afresh in every frame, so a
 * frame decodes alone and a damaged one costs only itself.  Unpacking
 * gives back the inner payload byte for byte; the reader then takes it as
 * if the inner frame had arrived, so the text cannot differ.
 *
 * A PAGE is coded record by record: each event's header word as one of
 * the last 8 seen on the page, its stamp as the difference from the
 * previous event's, each further payload word as one of the last 4 values
 * in its column, or as the difference from the same event's word before
 * or the word itself, whichever has been shorter on the page so far.
 * Anything else on a page (padding, time extends, absolute stamps, long
 * records, a malformed tail) is coded as raw bytes, so every page packs.
 * SYMS and PRINTK tables are coded entry by entry (address difference,
 * name length, the bytes it shares with the name before, the rest);
 * anything else byte by byte.
 */
#ifndef TRACE_DUMP_PACK_H
#define TRACE_DUMP_PACK_H

#include <stdbool.h>
#include <stdint.h>

#include <trace/dump_format.h>

#define PK_SLOTS	8u	/* header words remembered on a page */
#define PK_COLS		4u	/* payload word columns with models of their own */
#define PK_RECENT	4u	/* recent values per column */
#define PK_WORDS_MAX	(RB_INLINE_MAX / 4u)	/* payload words of an inline record */

/* An adaptive code for integers of up to 64 (or 32) bits: length, then bits. */
#ifndef PK_MANT_BITS
/* A probability of a 0 bit: 12 bits in the low half, the bits it has seen (to 30) above. */
typedef uint32_t pk_prob;

#define PK_MANT_BITS	4u
#endif	/* bits under the top one that a model predicts */

struct pk_num64 {
	uint64_t gen;		/* the frame it was last set up for (set up on first use) */
	pk_prob len[128];	/* bit length 0..64, a 7-level binary tree */
	pk_prob mant[65][1u << PK_MANT_BITS];	/* bits under the top one, per length */
};

struct pk_num32 {
	uint64_t gen;		/* as pk_num64's */
	pk_prob len[64];	/* bit length 0..32, a 6-level binary tree */
	pk_prob mant[33][1u << PK_MANT_BITS];	/* bits under the top one, per length */
};

/*
 * Every probability of one frame's coding (12-bit, of a 0 bit).  The
 * arrays before time are set up for each frame; the integer codes (most
 * of the bytes, few of them used on a page) when a frame first uses them.
 */
struct pk_model {
	pk_prob op[3][2];			/* record is an event or raw; ctx: last op */
	pk_prob slot[PK_SLOTS + 1][16];	/* header slot or 8 = new; ctx: last slot */
	pk_prob kind[PK_SLOTS];		/* the record's kind is the slot's last */
	pk_prob hit[PK_SLOTS][PK_COLS][8];	/* recent value 0..3 or 4 = coded */
	pk_prob byte[4][256];			/* raw bytes; ctx: class of the last */
	pk_prob table;				/* a frame's bytes parse as a SYMS table */
	pk_prob pad[1];				/* the arrays above: whole 8-byte words */
	struct pk_num64 time[PK_SLOTS];		/* zigzag stamp difference */
	struct pk_num32 field[PK_SLOTS][PK_COLS]; /* zigzag word difference */
	struct pk_num32 value[PK_SLOTS][PK_COLS]; /* or the word itself */
	struct pk_num64 head;			/* page and frame header fields */
	struct pk_num64 raw;			/* raw run lengths */
	struct pk_num64 sym_addr;		/* a table's address differences */
	struct pk_num64 sym_len;		/* its name lengths */
	struct pk_num64 sym_pre;		/* bytes a name shares with the one before */
};

/* What the page coder remembers between records (both sides alike). */
struct pk_state {
	uint32_t slots[PK_SLOTS];		/* header words */
	uint8_t kinds[PK_SLOTS];		/* the last kind seen with each */
	uint32_t nr_slots;			/* slots filled (then replaced round robin) */
	uint32_t last_slot;			/* context: PK_SLOTS before the first */
	uint32_t last_op;			/* context: 2 before the first */
	uint32_t last[PK_SLOTS][PK_WORDS_MAX];	/* each slot's last payload words */
	uint32_t recent[PK_COLS][PK_RECENT];	/* recent values per column, newest first */
	int32_t score[PK_SLOTS][PK_COLS];	/* > 0: words cost fewer bits than differences */
	uint64_t stamp;				/* the last event's stamp (base first) */
	uint64_t ext;				/* a time extend's bits for the next record */
	uint64_t abs;				/* an absolute stamp for the next record */
	bool has_abs;
};

struct pk_work {
	struct pk_model m;
	struct pk_state s;
	uint32_t gen;				/* frames coded, from 1 (0: never) */
};

/*
 * A packer's memory: the models and one coded payload.  A kernel keeps
 * one per writer that may run at once; it is not on any fast path.
 */
struct dump_pack {
	struct pk_work w;
	uint8_t out[DUMP_MAX_PAYLOAD];		/* the PACK frame's payload */
	uint8_t in[DUMP_MAX_PAYLOAD];		/* a description frame's, before packing */
};

/*
 * Pack a PAGE frame's payload (info, then info->data_len page bytes) into
 * pk->out.  Returns the PACK payload's length, or 0 when it does not pay
 * (as long as the plain frame, or the page's commit disagrees with
 * data_len): the caller sends the PAGE frame instead.
 */
uint32_t dump_pack_page(struct dump_pack *pk, const struct dump_page_info *info,
			const void *page);

/* Pack any other frame's payload the same way (byte by byte); 0: send it plain. */
uint32_t dump_pack_bytes(struct dump_pack *pk, uint32_t type, const void *payload,
			 uint32_t len);

/*
 * Unpack a PACK payload (in, len) into out (at most out_size bytes):
 * the inner type into *type and the inner payload's length into *out_len.
 * Returns NULL, or why the payload is not one a packer made.
 */
const char *dump_unpack(struct pk_work *w, const uint8_t *in, uint32_t len, uint8_t *out,
			uint32_t out_size, uint32_t *type, uint32_t *out_len);

#endif
