/* rng.h - random streams. Every random result is a function of a user seed
 * and a stream identity (position, verifier, ...), never of the thread that
 * computes it: streams are seeded from splitmix64(seed, a, b).
 *
 * Generator: GSL's taus2 (L'Ecuyer's maximally equidistributed combined
 * Tausworthe, period 2^88): fast, and seeding is cheap enough to reseed per
 * position. */
#ifndef MDSD_RNG_H
#define MDSD_RNG_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

/* Mixes a seed with two stream coordinates into a 64-bit stream seed. */
uint64_t mdsd_seed_mix(uint64_t seed, uint64_t a, uint64_t b);

/* FNV-1a hash of a name, to use as a stream coordinate (e.g. a verifier). */
uint64_t mdsd_seed_name(const char *name);

/* Allocates a taus2 generator seeded with stream_seed (NULL on failure). */
gsl_rng *mdsd_rng_alloc(uint64_t stream_seed);

/* Reseeds an existing generator for another stream. */
void mdsd_rng_reseed(gsl_rng *r, uint64_t stream_seed);

#define MDSD_RNG_NAME "taus2"

#endif
