#include "rng.h"

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t mdsd_seed_mix(uint64_t seed, uint64_t a, uint64_t b)
{
    return splitmix64(splitmix64(splitmix64(seed) ^ a) ^ b);
}

uint64_t mdsd_seed_name(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
    return h;
}

/* gsl_rng_set seeds taus2 from 32 bits only; with ~10^5 streams per job that
 * invites collisions, so the three 32-bit Tausworthe words are written from
 * the full 64-bit stream seed (respecting taus2's minima s1 > 1, s2 > 7,
 * s3 > 15). Falls back to gsl_rng_set if the state is not three words. */
void mdsd_rng_reseed(gsl_rng *r, uint64_t stream_seed)
{
    gsl_rng_set(r, (unsigned long)(stream_seed ^ (stream_seed >> 32)));
    if (gsl_rng_size(r) != 3 * sizeof(unsigned long))
        return;
    unsigned long *word = gsl_rng_state(r);
    static const unsigned long minimum[3] = {2, 8, 16};
    uint64_t x = stream_seed;
    for (int i = 0; i < 3; i++) {
        x = splitmix64(x);
        unsigned long w = (unsigned long)(x & 0xffffffffUL);
        word[i] = w < minimum[i] ? w + minimum[i] : w;
    }
}

gsl_rng *mdsd_rng_alloc(uint64_t stream_seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    if (r)
        mdsd_rng_reseed(r, stream_seed);
    return r;
}
