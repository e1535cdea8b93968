/*
 * Moved to <lib/crc32.h> (a CRC is not tracing's). This header forwards
 * for the files not yet changed over (drivers/block/); it goes once they
 * include <lib/crc32.h>.
 */
#include "lib/crc32.h"
