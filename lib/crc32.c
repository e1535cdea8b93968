/*
 * Table-driven CRC-32, one byte per step (Sarwate's method).
 *
 * The reflected register holds the remainder with its lowest bit being the
 * highest power of x.  One step feeds a byte: the low 8 bits of crc ^ byte
 * index a table of the remainders those 8 bits leave after 8 shifts, and
 * the rest of the register shifts down by 8.  Entry i of the table is what
 * eight single-bit steps (shift right, XOR the polynomial when the bit
 * shifted out was 1) make of i.
 *
 * The table is computed by the compiler from that definition, so there are
 * no 256 magic numbers to mistype; the host test checks it against a
 * bitwise CRC and the standard check value.
 */
#include <lib/crc32.h>

#define CRC32_POLY	0xedb88320u

/* One bit step, and eight of them: table entry c. */
#define CRC_BIT(c)	(((c) >> 1) ^ (CRC32_POLY & (0u - ((c) & 1u))))
#define CRC_BYTE(c)	CRC_BIT(CRC_BIT(CRC_BIT(CRC_BIT(CRC_BIT(CRC_BIT(CRC_BIT(CRC_BIT((uint32_t)(c)))))))))

#define CRC_T4(n)	CRC_BYTE(n), CRC_BYTE((n) + 1), CRC_BYTE((n) + 2), CRC_BYTE((n) + 3)
#define CRC_T16(n)	CRC_T4(n), CRC_T4((n) + 4), CRC_T4((n) + 8), CRC_T4((n) + 12)
#define CRC_T64(n)	CRC_T16(n), CRC_T16((n) + 16), CRC_T16((n) + 32), CRC_T16((n) + 48)

static const uint32_t crc32_table[256] = {
	CRC_T64(0), CRC_T64(64), CRC_T64(128), CRC_T64(192),
};

uint32_t crc32_update(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len--)
		crc = crc32_table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
	return crc;
}
