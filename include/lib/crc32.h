/*
 * CRC-32 (IEEE 802.3: polynomial 0x04C11DB7, reflected as 0xEDB88320,
 * initial value and final XOR 0xFFFFFFFF), as Ethernet, zlib and PNG use.
 * The check value of the nine ASCII bytes "123456789" is 0xCBF43926.
 *
 * Incremental: crc = crc32_update(CRC32_INIT, a, n); crc = crc32_update(crc,
 * b, m); result = crc32_final(crc).  Freestanding, pure, safe anywhere.
 */
#ifndef LIB_CRC32_H
#define LIB_CRC32_H

#include <stddef.h>
#include <stdint.h>

#define CRC32_INIT	0xffffffffu

uint32_t crc32_update(uint32_t crc, const void *buf, size_t len);

static inline uint32_t crc32_final(uint32_t crc)
{
	return crc ^ 0xffffffffu;
}

/* CRC-32 of one buffer. */
static inline uint32_t crc32(const void *buf, size_t len)
{
	return crc32_final(crc32_update(CRC32_INIT, buf, len));
}

#endif
