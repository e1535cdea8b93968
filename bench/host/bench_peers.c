/* The peers of the bench-host binary (LTTng-UST has a binary of its own). */
#include "bench_host.h"

extern const struct bench_peer bench_peer_baretrace, bench_peer_floor;

const struct bench_peer *const bench_peers[] = {
	&bench_peer_baretrace,
	&bench_peer_floor,
	NULL,
};
