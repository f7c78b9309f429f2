/* The plain reference scrypt (RFC 7914), for any N, r, p: the oracle for the
 * Litecoin proof of work, scrypt(P = header, S = header, N=1024, r=1, p=1,
 * dkLen = 32). Written from the RFC, deliberately unoptimised. */
#ifndef LODE_CORE_SCRYPT_REF_H
#define LODE_CORE_SCRYPT_REF_H

#include <stddef.h>
#include <stdint.h>

/* RFC 7914 section 3: 64-byte block in, 64-byte block out. */
void lode_ref_salsa20_8(const uint8_t in[64], uint8_t out[64]);
/* Section 4: in and out are 128*r bytes. */
void lode_ref_scrypt_blockmix(const uint8_t *in, uint8_t *out, unsigned r);
/* Section 5: b is 128*r bytes, transformed in place. Returns -1 if the
 * scratchpad cannot be allocated. */
int lode_ref_scrypt_romix(uint8_t *b, unsigned r, uint64_t n);
/* Section 6. Returns 0, or -1 on bad parameters or no memory. */
int lode_ref_scrypt(const void *password, size_t password_len, const void *salt,
                    size_t salt_len, uint64_t n, unsigned r, unsigned p, uint8_t *out,
                    size_t out_len);
/* Litecoin's PoW hash of an 80-byte header (aborts only if 128 KiB cannot be
 * allocated, which a self-test would have caught). */
void lode_ref_scrypt_pow(const uint8_t header[80], uint8_t hash[32]);

#endif
