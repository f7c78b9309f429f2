/* Payout address -> the scriptPubKey a coinbase output pays to.
 *
 * Understood: bech32 / bech32m segwit addresses (BIP 173, BIP 350) with the
 * human-readable parts of Litecoin (ltc, tltc, rltc) and Bitcoin (bc, tb,
 * bcrt), and base58check P2PKH / P2SH addresses with either chain's version
 * bytes. Checksums are always verified; anything else is an error that says
 * what is wrong. */
#ifndef LODE_GBT_ADDRESS_H
#define LODE_GBT_ADDRESS_H

#include <stddef.h>
#include <stdint.h>

/* The longest script: witness version op + push of a 40-byte program. */
#define LODE_ADDRESS_SCRIPT_MAX 42

typedef struct lode_address {
    uint8_t script[LODE_ADDRESS_SCRIPT_MAX];
    size_t script_len;
    /* Static descriptions for log lines: "litecoin regtest", "p2wpkh". */
    const char *network;
    const char *kind;
} lode_address;

/* Parses address into out. Returns 0, or -1 with a message in err. */
int lode_address_parse(const char *address, lode_address *out, char *err, size_t err_len);

#endif
