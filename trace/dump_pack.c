/*
 * The compact dump's coder: a binary range coder with adaptive
 * probabilities, and the models of <trace/dump_pack.h> on top of it.
 * Encoder and decoder share every model function: each takes a coder
 * that either writes the bit given or reads it, so the two cannot make
 * different decisions.
 *
 * Range coder (the carry-less form with a cache byte, after Subbotin and
 * LZMA's description; written here from the arithmetic):
 *
 *   the coder holds an interval [low, low + range) of a number written
 *   most significant byte first; range stays in [2^24, 2^32).
 *   A bit with probability p/4096 of being 0 splits the range at
 *   bound = (range >> 12) * p: 0 keeps [low, low + bound), 1 keeps the rest.
 *   When range drops below 2^24, the top byte of low is settled except for
 *   a carry: it is held back (cache) with any 0xff bytes after it
 *   (cache_n) until a later carry resolves them.
 *
 *   I1: low < 2^32 + 2^32 after an addition; the bit 32 is the carry into
 *       the held bytes, added when they go out.
 *   I2: the first byte out is always 0 (the interval starts within
 *       [0, 2^32)): it is not sent, and the decoder starts with 4 bytes.
 *   I3: the encoder's flush sends 4 bytes after the last shift; the decoder
 *       reads exactly as many bytes as the encoder sent, so a payload with
 *       bytes left over, or one that runs out, is not one a packer made.
 *
 * A probability moves after each bit by 1/2 of its error, then 1/4, 1/8
 * as it has seen 2, 6 bits (PK_ADAPT caps the shift at 3): a frame is
 * short (a few hundred events) and starts knowing nothing, so models
 * must learn fast; a count in the upper half of each pk_prob says how far.
 */
#include <stddef.h>

#include <trace/dump_pack.h>
#include <trace/ring_format.h>

#define PK_PROB_BITS	12
#define PK_ONE		(1u << PK_PROB_BITS)
#define PK_ADAPT	3
#define PK_TOP		(1u << 24)

enum { OP_EVENT = 0, OP_RAW = 1 };

struct rc {
	bool dec;		/* decoding */
	uint32_t gen;		/* the frame's generation: integer codes set up for it */
	bool bad;		/* out of room (enc) or of input (dec) */
	uint64_t low;		/* enc: I1 */
	uint32_t range;
	uint32_t code;		/* dec: the value read, minus low */
	uint8_t cache;		/* enc: the held byte */
	uint32_t cache_n;	/* enc: held bytes (the cache and 0xff's) */
	bool first;		/* enc: the first byte is not sent (I2) */
	uint8_t *buf;		/* enc: output; dec: input */
	uint32_t pos, size;
};

static void rc_put(struct rc *c, uint8_t b)
{
	if (c->first) {
		c->first = false;
		return;
	}
	if (c->pos >= c->size) {
		c->bad = true;
		return;
	}
	c->buf[c->pos++] = b;
}

static void rc_shift(struct rc *c)
{
	if ((uint32_t)c->low < 0xff000000u || (c->low >> 32) != 0) {
		uint8_t carry = (uint8_t)(c->low >> 32), b = c->cache;

		do {
			rc_put(c, (uint8_t)(b + carry));
			b = 0xff;
		} while (--c->cache_n != 0);
		c->cache = (uint8_t)(c->low >> 24);
	}
	c->cache_n++;
	c->low = (c->low & 0x00ffffffu) << 8;
}

static uint8_t rc_get(struct rc *c)
{
	if (c->pos >= c->size) {
		c->bad = true;
		c->pos++;		/* counted: the reader reports how far past */
		return 0;
	}
	return c->buf[c->pos++];
}

static void rc_enc_init(struct rc *c, uint8_t *out, uint32_t size)
{
	*c = (struct rc){ .range = 0xffffffffu, .cache_n = 1, .first = true, .buf = out,
			  .size = size };
}

static void rc_dec_init(struct rc *c, const uint8_t *in, uint32_t len)
{
	*c = (struct rc){ .dec = true, .range = 0xffffffffu, .buf = (uint8_t *)in, .size = len };
	for (int i = 0; i < 4; i++)
		c->code = c->code << 8 | rc_get(c);
}

static void rc_flush(struct rc *c)
{
	for (int i = 0; i < 5; i++)
		rc_shift(c);
}

static void rc_norm(struct rc *c)
{
	while (c->range < PK_TOP) {
		c->range <<= 8;
		if (c->dec)
			c->code = c->code << 8 | rc_get(c);
		else
			rc_shift(c);
	}
}

/* One bit with the adaptive probability *p: writes bit, or returns the one read. */
/* The shift a probability adapts by, after the bits it has seen (PK_ADAPT at most). */
#define PK_SEEN_MAX	6
static const uint8_t pk_shift[PK_SEEN_MAX + 1] = { 1, 1, 2, 2, 2, 2, PK_ADAPT };

static uint32_t rc_bit(struct rc *c, pk_prob *p, uint32_t bit)
{
	uint32_t prob = *p & 0xffffu, n = *p >> 16;
	uint32_t bound = (c->range >> PK_PROB_BITS) * prob;
	uint32_t shift = pk_shift[n];
	if (c->dec)
		bit = c->code >= bound;
	if (!bit) {
		c->range = bound;
		prob += (PK_ONE - prob) >> shift;
	} else {
		if (c->dec)
			c->code -= bound;
		else
			c->low += bound;
		c->range -= bound;
		prob -= prob >> shift;
	}
	if (prob < 31)
		prob = 31;
	if (prob > PK_ONE - 31)
		prob = PK_ONE - 31;
	*p = (n < PK_SEEN_MAX ? n + 1 : n) << 16 | prob;
	rc_norm(c);
	return bit;
}

/*
 * n bits with probability 1/2, most significant first, up to 8 at a time:
 * k bits split the range into 2^k equal parts (range >> k each; range is
 * at least 2^24, so a part is at least 2^16 and one byte of normalisation
 * brings it back).  A decoder that finds a part number past 2^k - 1 (the
 * range's remainder, which no encoder uses) has a payload no packer made.
 */
static uint64_t rc_direct(struct rc *c, uint64_t v, uint32_t n)
{
	uint64_t r = 0;

	while (n) {
		uint32_t k = n < 8 ? n : 8, part;

		n -= k;
		part = (uint32_t)(v >> n) & ((1u << k) - 1);
		c->range >>= k;
		if (c->dec) {
			part = c->code / c->range;
			if (part >> k) {
				c->bad = true;
				part = 0;
			}
			c->code -= part * c->range;
		} else {
			c->low += (uint64_t)part * c->range;
		}
		r = r << k | part;
		rc_norm(c);
	}
	return r;
}

/* A symbol of depth bits through a binary tree of probabilities (p[1 .. 2^depth)). */
static uint32_t rc_tree(struct rc *c, pk_prob *p, uint32_t depth, uint32_t sym)
{
	uint32_t m = 1;

	for (uint32_t i = depth; i-- > 0;)
		m = m << 1 | rc_bit(c, &p[m], (sym >> i) & 1u);
	return m - (1u << depth);
}

/*
 * An integer: its bit length through the tree len (depth levels), the two
 * bits under its top bit through mant[length], the rest as plain bits.
 */
static uint64_t rc_num(struct rc *c, pk_prob *len, uint32_t depth,
		       pk_prob (*mant)[1u << PK_MANT_BITS],
		       uint32_t max_bits, uint64_t v)
{
	uint32_t nb = v ? 64u - (uint32_t)__builtin_clzll(v) : 0, top, m = 1;
	uint64_t r;

	nb = rc_tree(c, len, depth, nb);
	if (nb > max_bits) {
		c->bad = true;	/* only a decoder can meet this */
		return 0;
	}
	if (nb <= 1)
		return nb;
	r = 1;
	top = nb - 1 < PK_MANT_BITS ? nb - 1 : PK_MANT_BITS;
	for (uint32_t i = 0; i < top; i++) {
		uint32_t bit = (uint32_t)(v >> (nb - 2 - i)) & 1u;

		bit = rc_bit(c, &mant[nb][m], bit);
		m = m << 1 | bit;
		r = r << 1 | bit;
	}
	return r << (nb - 1 - top) | rc_direct(c, v, nb - 1 - top);
}

/* Fill n 16-bit probabilities at p with one half, 4 at a time (n a multiple of 4). */
static void prob_fill(pk_prob *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = PK_ONE / 2;
}

static uint64_t num64(struct rc *c, struct pk_num64 *n, uint64_t v)
{
	_Static_assert(sizeof(n->len) % 8 == 0 && sizeof(n->mant) % 8 == 0, "whole words");
	if (n->gen != c->gen) {
		prob_fill(n->len, sizeof(n->len) / sizeof(pk_prob));
		prob_fill(n->mant[0], sizeof(n->mant) / sizeof(pk_prob));
		n->gen = c->gen;
	}
	return rc_num(c, n->len, 7, n->mant, 64, v);
}

static uint32_t num32(struct rc *c, struct pk_num32 *n, uint32_t v)
{
	_Static_assert(sizeof(n->len) % 8 == 0 && sizeof(n->mant) % 8 == 0, "whole words");
	if (n->gen != c->gen) {
		prob_fill(n->len, sizeof(n->len) / sizeof(pk_prob));
		prob_fill(n->mant[0], sizeof(n->mant) / sizeof(pk_prob));
		n->gen = c->gen;
	}
	return (uint32_t)rc_num(c, n->len, 6, n->mant, 32, v);
}

static uint64_t zig(uint64_t d)
{
	return d << 1 ^ (uint64_t)((int64_t)d >> 63);
}

static uint64_t unzig(uint64_t z)
{
	return z >> 1 ^ (0 - (z & 1u));
}

/* A byte; ctx is the class of the byte before (0, letter, digit, other). */
static uint32_t byte_class(uint32_t b)
{
	if (b == 0)
		return 0;
	if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '_')
		return 1;
	return b >= '0' && b <= '9' ? 2 : 3;
}

static void raw_bytes(struct rc *c, struct pk_model *m, uint8_t *p, uint32_t n)
{
	uint32_t ctx = 0;

	for (uint32_t i = 0; i < n && !c->bad; i++) {
		uint32_t b = rc_tree(c, m->byte[ctx], 8, c->dec ? 0 : p[i]);

		if (c->dec)
			p[i] = (uint8_t)b;
		ctx = byte_class(b);
	}
}

static void model_reset(struct pk_work *w)
{
	const uint32_t n = offsetof(struct pk_model, time) / sizeof(pk_prob);

	_Static_assert(offsetof(struct pk_model, time) % 8 == 0, "whole words before time");
	prob_fill((pk_prob *)&w->m, n);
	if (++w->gen == 0)	/* 0 marks a code never set up */
		w->gen = 1;
	w->s.nr_slots = 0;
	w->s.last_slot = PK_SLOTS;
	w->s.last_op = 2;
	w->s.ext = 0;
	w->s.has_abs = false;
	__builtin_memset(w->s.recent, 0, sizeof(w->s.recent));
}

/* The stamp a data record's delta is relative to (<trace/ring_format.h>). */
static uint64_t stamp_ref(const struct pk_state *s, uint64_t base)
{
	return s->has_abs ? s->abs : base + (s->ext << RB_DELTA_BITS);
}

/* After a raw run p[0 .. n): a time extend or absolute stamp for the next record. */
static void after_raw(struct pk_state *s, const uint8_t *p, uint32_t n)
{
	uint32_t kind = n >= 4 ? rb_record_kind(rb_load32(p)) : RB_KIND_INVALID;

	s->ext = 0;
	s->has_abs = false;
	if (n == RB_EXTEND_SIZE && kind == RB_KIND_EXTEND) {
		s->ext = rb_record_arg(rb_load32(p));
	} else if (n == RB_ABS_SIZE && kind == RB_KIND_ABS) {
		s->abs = rb_load64(p + 4);
		s->has_abs = true;
	}
}

/* Column word i of a payload belongs to (its models and recent values). */
static uint32_t col_of(uint32_t i)
{
	return i - 1 < PK_COLS ? i - 1 : PK_COLS - 1;
}

/*
 * Payload word i (from 1) of an event in slot: one of its column's recent
 * values, or the difference from the slot's last word i.
 */
static uint32_t bit_len(uint32_t v)
{
	return v ? 32u - (uint32_t)__builtin_clz(v) : 0;
}

static uint32_t code_word(struct rc *c, struct pk_work *w, uint32_t slot, uint32_t i, uint32_t v)
{
	struct pk_state *s = &w->s;
	uint32_t col = col_of(i), *rec = s->recent[col], hit = PK_RECENT, d = 0;
	uint32_t last = s->last[slot][i];
	int32_t *score = &s->score[slot][col];

	if (!c->dec)
		for (uint32_t k = 0; k < PK_RECENT; k++)
			if (rec[k] == v) {
				hit = k;
				break;
			}
	hit = rc_tree(c, w->m.hit[slot][col], 3, hit);
	if (hit < PK_RECENT) {
		v = rec[hit];
	} else if (hit == PK_RECENT && *score > 0) {	/* values beat differences so far */
		v = num32(c, &w->m.value[slot][col], v);
		hit = PK_RECENT - 1;	/* the oldest makes room */
	} else if (hit == PK_RECENT) {
		d = (uint32_t)zig((uint64_t)(int64_t)(int32_t)(v - last));
		d = num32(c, &w->m.field[slot][col], d);
		v = last + (uint32_t)unzig(d);
		hit = PK_RECENT - 1;
	} else {
		c->bad = true;
		return 0;
	}
	/* Which would have been shorter, decaying: the next word's choice. */
	*score += (int32_t)bit_len((uint32_t)zig((uint64_t)(int64_t)(int32_t)(v - last))) -
		  (int32_t)bit_len(v) - *score / 8;
	for (uint32_t k = hit; k > 0; k--)
		rec[k] = rec[k - 1];
	rec[0] = v;
	s->last[slot][i] = v;
	return v;
}

/*
 * One record at rec (encoder: there; decoder: written there), room bytes
 * of commit left.  Returns its size, 0 on a decoding error.
 */
static uint32_t code_event(struct rc *c, struct pk_work *w, uint8_t *rec, uint32_t room,
			   uint64_t base)
{
	struct pk_state *s = &w->s;
	uint32_t kind = 0, hw = 0, slot = PK_SLOTS, delta = 0;
	uint64_t ref = stamp_ref(s, base), stamp = 0, z;

	if (!c->dec) {
		kind = rb_record_kind(rb_load32(rec));
		delta = rb_record_arg(rb_load32(rec));
		hw = rb_load32(rec + 4);
		for (uint32_t k = 0; k < s->nr_slots; k++)
			if (s->slots[k] == hw) {
				slot = k;
				break;
			}
	}
	slot = rc_tree(c, w->m.slot[s->last_slot], 4, slot);
	if (slot > PK_SLOTS || (slot < PK_SLOTS && slot >= s->nr_slots))
		return 0;
	if (slot == PK_SLOTS) {		/* a new header word: it takes a slot */
		hw = (uint32_t)rc_direct(c, hw, 32);
		slot = s->nr_slots < PK_SLOTS ? s->nr_slots++ : (s->last_slot + 1) % PK_SLOTS;
		s->slots[slot] = hw;
		s->kinds[slot] = (uint8_t)((hw >> TRACE_ENT_WORDS_SHIFT) + 1u);
		__builtin_memset(s->last[slot], 0, sizeof(s->last[slot]));
		__builtin_memset(s->score[slot], 0, sizeof(s->score[slot]));
	}
	hw = s->slots[slot];
	s->last_slot = slot;
	if (!rc_bit(c, &w->m.kind[slot], kind != s->kinds[slot]))
		kind = s->kinds[slot];
	else
		kind = (uint32_t)rc_direct(c, kind, 5);
	if (kind < 1 || kind > RB_KIND_DATA_MAX || 4u + 4u * kind > room)
		return 0;
	s->kinds[slot] = (uint8_t)kind;

	z = num64(c, &w->m.time[slot], zig(ref + delta - s->stamp));
	stamp = s->stamp + unzig(z);
	if (c->dec) {
		if (stamp - ref >= RB_DELTA_LIMIT)
			return 0;
		delta = (uint32_t)(stamp - ref);
		rb_store32(rec, rb_record_word(kind, delta));
		rb_store32(rec + 4, hw);
	}
	s->stamp = stamp;
	s->ext = 0;
	s->has_abs = false;
	for (uint32_t i = 1; i < kind && !c->bad; i++) {
		uint32_t v = c->dec ? 0 : rb_load32(rec + 4 + 4 * i);

		v = code_word(c, w, slot, i, v);
		if (c->dec)
			rb_store32(rec + 4 + 4 * i, v);
	}
	return c->bad ? 0 : 4u + 4u * kind;
}

/* Size of the record at p as raw bytes (encoder): never past room, at least 1. */
static uint32_t raw_size(const uint8_t *p, uint32_t room)
{
	uint32_t n = room, word, kind;

	if (room < 4)
		return room;
	word = rb_load32(p);
	kind = rb_record_kind(word);
	if (kind == RB_KIND_DATA_LONG && room >= 8 && rb_load32(p + 4) <= room - 8)
		n = 8 + rb_load32(p + 4);
	else if (kind == RB_KIND_PADDING && rb_record_arg(word) >= 4)
		n = rb_record_arg(word);
	else if (kind == RB_KIND_EXTEND)
		n = RB_EXTEND_SIZE;
	else if (kind == RB_KIND_ABS)
		n = RB_ABS_SIZE;
	return n <= room ? n : room;
}

/* Is the record at p one code_event() takes (encoder)? */
static bool is_event(const uint8_t *p, uint32_t room)
{
	uint32_t kind = room >= 4 ? rb_record_kind(rb_load32(p)) : 0;

	return kind >= 1 && kind <= RB_KIND_DATA_MAX && 4u + 4u * kind <= room;
}

/* The page header's and frame info's fields, in coding order. */
#define PK_HEAD_FIELDS(X) \
	X(hdr.base_ts) X(hdr.seq) X(hdr.dropped) X(hdr.pos) X(hdr.commit) X(hdr.entries) \
	X(hdr.lost) X(hdr.cpu) X(hdr.version) X(hdr.flags) X(lost_overrun) X(lost_dropped)

struct pk_head {
	struct rb_page_header hdr;
	uint64_t lost_overrun, lost_dropped;
	uint64_t cpu_diff, pos_diff;	/* info's against the header's: 0 as sent */
};

/*
 * A page: the header, then records up to commit.  page points at the
 * header (encoder: the page; decoder: where it is rebuilt, room bytes).
 * Returns NULL or why it cannot be decoded.
 */
static const char *code_page(struct rc *c, struct pk_work *w, struct pk_head *h,
			     uint8_t *page, uint32_t room)
{
	struct pk_state *s = &w->s;
	uint32_t pos = 0, commit;
	uint8_t *rec;

#define PK_CODE_FIELD(f) h->f = (__typeof__(h->f))num64(c, &w->m.head, h->f);
	PK_HEAD_FIELDS(PK_CODE_FIELD)
#undef PK_CODE_FIELD
	h->cpu_diff = num64(c, &w->m.head, h->cpu_diff);
	h->pos_diff = num64(c, &w->m.head, h->pos_diff);
	if (c->bad)
		return "its page header does not decode";
	commit = h->hdr.commit;
	if (commit > room - RB_PAGE_HEADER_SIZE)
		return "its page's commit is more than a page holds";
	s->stamp = h->hdr.base_ts;
	rec = page + RB_PAGE_HEADER_SIZE;
	while (pos < commit) {
		uint32_t left = commit - pos, op = OP_RAW, n;

		if (!c->dec && is_event(rec + pos, left))
			op = OP_EVENT;
		op = rc_bit(c, &w->m.op[s->last_op][0], op);
		s->last_op = op;
		if (op == OP_EVENT) {
			n = code_event(c, w, rec + pos, left, h->hdr.base_ts);
			if (!n)
				return "an event record does not decode";
		} else {
			n = c->dec ? 0 : raw_size(rec + pos, left);
			n = (uint32_t)num64(c, &w->m.raw, n - 1u) + 1u;
			if (c->bad || n > left || n == 0)
				return "a raw run does not decode";
			raw_bytes(c, &w->m, rec + pos, n);
			after_raw(s, rec + pos, n);
		}
		pos += n;
	}
	return c->bad ? "its coded data ends early" : 0;
}

uint32_t dump_pack_page(struct dump_pack *pk, const struct dump_page_info *info,
			const void *page)
{
	struct rc c;
	struct pk_head h;

	__builtin_memcpy(&h.hdr, page, sizeof(h.hdr));
	if (info->data_len != RB_PAGE_HEADER_SIZE + h.hdr.commit ||
	    info->data_len > RB_PAGE_SIZE_MAX)
		return 0;
	h.lost_overrun = info->lost_overrun;
	h.lost_dropped = info->lost_dropped;
	h.cpu_diff = zig(info->cpu - (uint64_t)h.hdr.cpu);
	h.pos_diff = zig(info->pos - h.hdr.pos);
	model_reset(&pk->w);
	pk->out[0] = DUMP_FRAME_PAGE;
	rc_enc_init(&c, pk->out + 1, sizeof(pk->out) - 1);
	c.gen = pk->w.gen;
	code_page(&c, &pk->w, &h, (uint8_t *)page, info->data_len);
	rc_flush(&c);
	if (c.bad || 1u + c.pos >= sizeof(*info) + info->data_len)
		return 0;
	return 1u + c.pos;
}

/*
 * Does p[0 .. len) parse as a SYMS/PRINTK table (<trace/dump_format.h>:
 * u64 end, u32 count, count x (u64 addr, u16 n, n bytes)) with nothing
 * left over?  The packer codes only such payloads as tables.
 */
static bool is_table(const uint8_t *p, uint32_t len)
{
	uint32_t pos = 12, count;

	if (len < 12)
		return false;
	count = rb_load32(p + 8);
	for (uint32_t i = 0; i < count; i++) {
		uint16_t n;

		if (len - pos < 10)
			return false;
		__builtin_memcpy(&n, p + pos + 8, 2);
		if (len - pos - 10 < n)
			return false;
		pos += 10u + n;
	}
	return pos == len;
}

/*
 * A table of len bytes at p (encoder: there; decoder: written there, len
 * checked to fit): header, then each entry as the difference of its
 * address from the one before, its name's length, the bytes it shares
 * with the name before and the rest.  Returns false on a decoding error.
 */
static bool code_table(struct rc *c, struct pk_model *m, uint8_t *p, uint32_t len)
{
	uint64_t end = c->dec ? 0 : rb_load64(p), addr = 0;
	uint32_t count = c->dec ? 0 : rb_load32(p + 8), pos = 12, prev = 0, prev_n = 0;

	end = num64(c, &m->head, end);
	count = (uint32_t)num64(c, &m->head, count);
	if (c->bad || len < 12)
		return false;
	if (c->dec) {
		rb_store64(p, end);
		rb_store32(p + 8, count);
	}
	for (uint32_t i = 0; i < count && !c->bad; i++) {
		uint64_t a = c->dec ? 0 : rb_load64(p + pos);
		uint16_t n16 = 0;
		uint32_t n, pre = 0;

		if (len - pos < 10)
			return false;
		if (!c->dec)
			__builtin_memcpy(&n16, p + pos + 8, 2);
		a = addr + unzig(num64(c, &m->sym_addr, zig(a - addr)));
		n = (uint32_t)num64(c, &m->sym_len, n16);
		if (!c->dec)
			while (pre < n && pre < prev_n && p[pos + 10 + pre] == p[prev + 10 + pre])
				pre++;
		pre = (uint32_t)num64(c, &m->sym_pre, pre);
		if (c->bad || n > 0xffffu || len - pos - 10 < n || pre > n || pre > prev_n)
			return false;
		if (c->dec) {
			n16 = (uint16_t)n;
			rb_store64(p + pos, a);
			__builtin_memcpy(p + pos + 8, &n16, 2);
			__builtin_memmove(p + pos + 10, p + prev + 10, pre);
		}
		raw_bytes(c, m, p + pos + 10 + pre, n - pre);
		addr = a;
		prev = pos;
		prev_n = n;
		pos += 10 + n;
	}
	return !c->bad && pos == len;
}

uint32_t dump_pack_bytes(struct dump_pack *pk, uint32_t type, const void *payload, uint32_t len)
{
	struct rc c;

	if (len > DUMP_MAX_PAYLOAD)
		return 0;
	model_reset(&pk->w);
	pk->out[0] = (uint8_t)type;
	rc_enc_init(&c, pk->out + 1, sizeof(pk->out) - 1);
	c.gen = pk->w.gen;
	num64(&c, &pk->w.m.head, len);
	if (rc_bit(&c, &pk->w.m.table, (type == DUMP_FRAME_SYMS || type == DUMP_FRAME_PRINTK) &&
		   is_table(payload, len)))
		code_table(&c, &pk->w.m, (uint8_t *)payload, len);
	else
		raw_bytes(&c, &pk->w.m, (uint8_t *)payload, len);
	rc_flush(&c);
	if (c.bad || 1u + c.pos >= len)
		return 0;
	return 1u + c.pos;
}

const char *dump_unpack(struct pk_work *w, const uint8_t *in, uint32_t len, uint8_t *out,
			uint32_t out_size, uint32_t *type, uint32_t *out_len)
{
	struct rc c;
	const char *why = 0;

	*out_len = 0;
	if (len < 1)
		return "it is empty";
	*type = in[0];
	model_reset(w);
	rc_dec_init(&c, in + 1, len - 1);
	c.gen = w->gen;
	if (*type == DUMP_FRAME_PAGE) {
		const uint32_t isz = sizeof(struct dump_page_info);
		struct dump_page_info info;
		struct pk_head h;

		if (out_size < isz + RB_PAGE_HEADER_SIZE)
			return "no room";
		__builtin_memset(&h, 0, sizeof(h));
		why = code_page(&c, w, &h, out + isz, out_size - isz);
		if (why)
			return why;
		info = (struct dump_page_info){
			.cpu = (uint32_t)(h.hdr.cpu + unzig(h.cpu_diff)),
			.data_len = RB_PAGE_HEADER_SIZE + h.hdr.commit,
			.pos = h.hdr.pos + unzig(h.pos_diff),
			.lost_overrun = h.lost_overrun,
			.lost_dropped = h.lost_dropped,
		};
		__builtin_memcpy(out, &info, isz);
		__builtin_memcpy(out + isz, &h.hdr, sizeof(h.hdr));
		*out_len = isz + info.data_len;
	} else {
		uint64_t n = num64(&c, &w->m.head, 0);

		if (c.bad || n > out_size)
			return "its length is more than a frame holds";
		if (!rc_bit(&c, &w->m.table, 0))
			raw_bytes(&c, &w->m, out, (uint32_t)n);
		else if (!code_table(&c, &w->m, out, (uint32_t)n))
			return "its table does not decode";
		*out_len = (uint32_t)n;
	}
	if (c.bad)
		return "its coded data ends early";
	if (c.pos != c.size)
		return "it has bytes after its coded data";
	return 0;
}
