/* Address decoding, written from BIP 173 / BIP 350 (bech32, bech32m) and
 * the base58check definition (version byte || payload || first four bytes
 * of SHA-256d). */
#include "core/gbt/address.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/base/errmsg.h"
#include "core/base/sha256_ref.h"

#define BECH32_MAX_LEN 90
#define BECH32_CONST 1u
#define BECH32M_CONST 0x2bc830a3u
#define BASE58_MAX_LEN 64
#define OP_0 0x00
#define OP_1 0x51
#define OP_DUP 0x76
#define OP_HASH160 0xa9
#define OP_EQUAL 0x87
#define OP_EQUALVERIFY 0x88
#define OP_CHECKSIG 0xac

/* ---- bech32 / bech32m ---- */

static const char bech32_charset[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";

static uint32_t bech32_polymod_step(uint32_t chk, unsigned value)
{
    static const uint32_t generator[5] = {0x3b6a57b2u, 0x26508e6du, 0x1ea119fau, 0x3d4233ddu,
                                          0x2a1462b3u};
    uint32_t top = chk >> 25;
    chk = ((chk & 0x1ffffffu) << 5) ^ value;
    for (int i = 0; i < 5; i++)
        if ((top >> i) & 1u)
            chk ^= generator[i];
    return chk;
}

typedef struct segwit_network {
    const char *hrp;
    const char *network;
} segwit_network;

static const segwit_network segwit_networks[] = {
    {"ltc", "litecoin mainnet"}, {"tltc", "litecoin testnet"}, {"rltc", "litecoin regtest"},
    {"bc", "bitcoin mainnet"},   {"tb", "bitcoin testnet"},    {"bcrt", "bitcoin regtest"},
};

/* True if the string looks like a bech32 address of a known HRP (so its
 * errors are reported as bech32 errors rather than base58 ones). */
static const segwit_network *segwit_network_of(const char *lower, size_t sep)
{
    for (size_t i = 0; i < sizeof segwit_networks / sizeof segwit_networks[0]; i++)
        if (strlen(segwit_networks[i].hrp) == sep &&
            memcmp(segwit_networks[i].hrp, lower, sep) == 0)
            return &segwit_networks[i];
    return NULL;
}

/* The address in lower case (a bech32 address is all one case). */
static int lower_case(const char *address, size_t len, char *lower, char *err, size_t err_len)
{
    bool has_lower = false, has_upper = false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)address[i];
        if (c < 33 || c > 126)
            return lode_fail(err, err_len, "bech32 address has an invalid character");
        if (c >= 'a' && c <= 'z')
            has_lower = true;
        if (c >= 'A' && c <= 'Z') {
            has_upper = true;
            c = (unsigned char)(c - 'A' + 'a');
        }
        lower[i] = (char)c;
    }
    lower[len] = '\0';
    if (has_lower && has_upper)
        return lode_fail(err, err_len, "bech32 address mixes upper and lower case");
    return 0;
}

/* The witness program from its 5-bit groups (values[1 .. data_len - 6));
 * leftover bits must be fewer than 5 and zero. */
static int witness_program(const uint8_t *values, size_t data_len, uint8_t program[64], size_t *program_len,
                           char *err, size_t err_len)
{
    uint32_t acc = 0;
    unsigned bits = 0;
    *program_len = 0;
    for (size_t i = 1; i < data_len - 6; i++) {
        acc = (acc << 5) | values[i];
        bits += 5;
        if (bits >= 8) {
            bits -= 8;
            if (*program_len >= 64)
                return lode_fail(err, err_len, "bech32 witness program is too long");
            program[(*program_len)++] = (uint8_t)(acc >> bits);
        }
        acc &= (1u << bits) - 1u;
    }
    if (bits >= 5 || acc != 0)
        return lode_fail(err, err_len, "bech32 address has invalid padding");
    return 0;
}

static int parse_segwit(const char *address, size_t len, lode_address *out, char *err,
                        size_t err_len)
{
    char lower[BECH32_MAX_LEN + 1];
    if (lower_case(address, len, lower, err, err_len) != 0)
        return -1;
    const char *sep_ptr = strrchr(lower, '1');
    size_t sep = (size_t)(sep_ptr - lower);
    const segwit_network *net = segwit_network_of(lower, sep);
    if (!net)
        return lode_fail(err, err_len, "unknown bech32 prefix (expected ltc, tltc, rltc, bc, tb or bcrt)");
    size_t data_len = len - sep - 1;
    if (data_len < 6 + 1)
        return lode_fail(err, err_len, "bech32 address is too short");

    uint8_t values[BECH32_MAX_LEN];
    uint32_t chk = 1;
    for (size_t i = 0; i < sep; i++)
        chk = bech32_polymod_step(chk, (unsigned char)lower[i] >> 5);
    chk = bech32_polymod_step(chk, 0);
    for (size_t i = 0; i < sep; i++)
        chk = bech32_polymod_step(chk, (unsigned char)lower[i] & 31u);
    for (size_t i = 0; i < data_len; i++) {
        const char *pos = strchr(bech32_charset, lower[sep + 1 + i]);
        if (!pos)
            return lode_fail(err, err_len, "bech32 address has a character outside the bech32 set");
        values[i] = (uint8_t)(pos - bech32_charset);
        chk = bech32_polymod_step(chk, values[i]);
    }
    bool is_bech32m;
    if (chk == BECH32_CONST)
        is_bech32m = false;
    else if (chk == BECH32M_CONST)
        is_bech32m = true;
    else
        return lode_fail(err, err_len, "bech32 address checksum is wrong");

    unsigned witness_version = values[0];
    if (witness_version > 16)
        return lode_fail(err, err_len, "bech32 address has witness version %u (max 16)", witness_version);
    if (witness_version == 0 && is_bech32m)
        return lode_fail(err, err_len, "witness v0 address must use bech32, not bech32m");
    if (witness_version != 0 && !is_bech32m)
        return lode_fail(err, err_len, "witness v%u address must use bech32m (BIP 350)", witness_version);

    uint8_t program[64];
    size_t program_len;
    if (witness_program(values, data_len, program, &program_len, err, err_len) != 0)
        return -1;
    if (program_len < 2 || program_len > 40)
        return lode_fail(err, err_len, "witness program is %zu bytes (must be 2..40)", program_len);
    if (witness_version == 0 && program_len != 20 && program_len != 32)
        return lode_fail(err, err_len, "witness v0 program is %zu bytes (must be 20 or 32)",
                    program_len);

    out->script[0] = (uint8_t)(witness_version == 0 ? OP_0 : OP_1 + witness_version - 1);
    out->script[1] = (uint8_t)program_len;
    memcpy(out->script + 2, program, program_len);
    out->script_len = program_len + 2;
    out->network = net->network;
    out->kind = witness_version == 0 ? (program_len == 20 ? "p2wpkh" : "p2wsh")
                                     : (witness_version == 1 && program_len == 32 ? "p2tr"
                                                                                  : "witness");
    return 0;
}

/* ---- base58check ---- */

static const char base58_alphabet[] =
    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

typedef struct base58_version {
    uint8_t version;
    bool is_p2sh;
    const char *network;
} base58_version;

static const base58_version base58_versions[] = {
    {0x30, false, "litecoin mainnet"},
    {0x32, true, "litecoin mainnet"},
    {0x05, true, "litecoin or bitcoin mainnet"},
    {0x3a, true, "litecoin testnet/regtest"},
    {0x6f, false, "litecoin or bitcoin testnet/regtest"},
    {0xc4, true, "litecoin or bitcoin testnet/regtest"},
    {0x00, false, "bitcoin mainnet"},
};

static int parse_base58(const char *address, size_t len, lode_address *out, char *err,
                        size_t err_len)
{
    if (len > BASE58_MAX_LEN)
        return lode_fail(err, err_len, "address is too long");
    /* Big-endian base-256 number, built digit by digit. */
    uint8_t num[BASE58_MAX_LEN];
    size_t num_len = 0;
    size_t leading_zeros = 0;
    while (leading_zeros < len && address[leading_zeros] == '1')
        leading_zeros++;
    for (size_t i = 0; i < len; i++) {
        const char *pos = strchr(base58_alphabet, address[i]);
        if (!pos || address[i] == '\0')
            return lode_fail(err, err_len, "address has a character that is neither base58 nor bech32");
        unsigned carry = (unsigned)(pos - base58_alphabet);
        for (size_t j = 0; j < num_len; j++) {
            carry += (unsigned)num[num_len - 1 - j] * 58u;
            num[num_len - 1 - j] = (uint8_t)carry;
            carry >>= 8;
        }
        while (carry) {
            memmove(num + 1, num, num_len);
            num[0] = (uint8_t)carry;
            num_len++;
            carry >>= 8;
        }
    }
    size_t significant = 0;
    while (significant < num_len && num[significant] == 0)
        significant++;
    size_t decoded_len = leading_zeros + (num_len - significant);
    if (decoded_len != 25)
        return lode_fail(err, err_len, "base58 address decodes to %zu bytes (expected 25)", decoded_len);
    uint8_t decoded[25];
    memset(decoded, 0, leading_zeros);
    memcpy(decoded + leading_zeros, num + significant, num_len - significant);

    uint8_t digest[32];
    lode_ref_sha256d(decoded, 21, digest);
    if (memcmp(digest, decoded + 21, 4) != 0)
        return lode_fail(err, err_len, "base58 address checksum is wrong");

    const base58_version *kind = NULL;
    for (size_t i = 0; i < sizeof base58_versions / sizeof base58_versions[0]; i++)
        if (base58_versions[i].version == decoded[0])
            kind = &base58_versions[i];
    if (!kind)
        return lode_fail(err, err_len, "base58 address has unknown version byte 0x%02x", decoded[0]);

    if (kind->is_p2sh) {
        out->script[0] = OP_HASH160;
        out->script[1] = 20;
        memcpy(out->script + 2, decoded + 1, 20);
        out->script[22] = OP_EQUAL;
        out->script_len = 23;
        out->kind = "p2sh";
    } else {
        out->script[0] = OP_DUP;
        out->script[1] = OP_HASH160;
        out->script[2] = 20;
        memcpy(out->script + 3, decoded + 1, 20);
        out->script[23] = OP_EQUALVERIFY;
        out->script[24] = OP_CHECKSIG;
        out->script_len = 25;
        out->kind = "p2pkh";
    }
    out->network = kind->network;
    return 0;
}

int lode_address_parse(const char *address, lode_address *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    if (!address || !*address)
        return lode_fail(err, err_len, "no payout address given");
    size_t len = strnlen(address, BECH32_MAX_LEN + 1);
    if (len > BECH32_MAX_LEN)
        return lode_fail(err, err_len, "address is too long");
    /* A '1' after a known segwit prefix marks bech32; base58 never has the
     * lower-case 'l' of ltc/tltc/rltc, but "bc1..." could be base58 text, so
     * a known prefix decides. */
    const char *sep = strrchr(address, '1');
    if (sep && sep != address) {
        char prefix[8];
        size_t prefix_len = (size_t)(sep - address);
        if (prefix_len < sizeof prefix) {
            for (size_t i = 0; i < prefix_len; i++) {
                char c = address[i];
                prefix[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
            }
            if (segwit_network_of(prefix, prefix_len))
                return parse_segwit(address, len, out, err, err_len);
        }
    }
    return parse_base58(address, len, out, err, err_len);
}
