/* libFuzzer target: the getblocktemplate parser, then job and block
 * assembly on whatever it accepts, and the address parser on the input's
 * first bytes. Nothing may crash, leak or read out of bounds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/gbt/address.h"
#include "core/gbt/block.h"
#include "core/gbt/template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];

    char address[128];
    size_t address_len = size < sizeof address - 1 ? size : sizeof address - 1;
    memcpy(address, data, address_len);
    address[address_len] = '\0';
    lode_address payout;
    int address_ok = lode_address_parse(address, &payout, err, sizeof err) == 0;

    lode_gbt_template t;
    if (lode_gbt_template_parse_text((const char *)data, size, &t, err, sizeof err) != 0)
        return 0;
    static const uint8_t default_script[] = {0x00, 0x14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                             11,   12,   13, 14, 15, 16, 17, 18, 19, 20};
    lode_gbt_job_params params = {
        .algo = LODE_ALGO_SCRYPT,
        .payout_script = address_ok ? payout.script : default_script,
        .payout_script_len = address_ok ? payout.script_len : sizeof default_script,
        .job_id = "fuzz",
        .clean = true,
    };
    lode_job job;
    if (lode_gbt_build_job(&t, &params, &job, err, sizeof err) == 0) {
        uint8_t en2[8] = {0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3};
        uint8_t header[80];
        lode_job_header(&job, en2, job.ntime, job.version, header);
        uint8_t *block = NULL;
        size_t block_len = 0;
        if (lode_gbt_build_block(&t, &job, header, en2, &block, &block_len, err, sizeof err) != 0)
            abort(); /* a header made from the job must always fit its template */
        free(block);
        lode_job_free(&job);
    }
    lode_gbt_template_free(&t);
    return 0;
}
