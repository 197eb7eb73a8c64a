/* fnv.h - the FNV-1a 64-bit hash that checkpoint files (the table job's and the
 * block job's .partial) put in their unit markers: a row altered, dropped or
 * reordered changes it. Not a cryptographic hash: it guards against accidents. */
#ifndef MDSD_FNV_H
#define MDSD_FNV_H

#include <stddef.h>
#include <stdint.h>

#define MDSD_FNV_OFFSET 0xcbf29ce484222325ULL
#define MDSD_FNV_PRIME 0x100000001b3ULL

static inline uint64_t mdsd_fnv1a(uint64_t h, const char *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)bytes[i];
        h *= MDSD_FNV_PRIME;
    }
    return h;
}

#endif
