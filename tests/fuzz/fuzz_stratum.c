/* libFuzzer entry: one received stratum line through the parser, and every
 * notify that parses through notify -> lode_job -> header, under ASan/UBSan. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/job.h"
#include "core/stratum/stratum_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lode_stratum_msg msg;
    char err[256];
    if (lode_stratum_parse_line((const char *)data, size, &msg, err, sizeof err) != 0)
        return 0;
    if (msg.kind == LODE_STRATUM_NOTIFY) {
        /* Session values picked from the input so they vary too. */
        lode_stratum_session session = {.algo = size % 2 ? LODE_ALGO_SCRYPT : LODE_ALGO_SHA256D,
                                         .extranonce1_len = size % 9,
                                         .extranonce2_size = 1 + size % LODE_EXTRANONCE_MAX,
                                         .difficulty = 1.0 + (double)(size % 1000),
                                         .version_mask = 0x1fffe000,
                                         .ntime_roll_max = 300,
                                         .generation = 1};
        lode_job job;
        if (lode_stratum_notify_to_job(&msg.u.notify, &session, false, &job, err, sizeof err) == 0) {
            uint8_t en2[LODE_EXTRANONCE_MAX] = {0}, header[80];
            lode_job_header(&job, en2, job.ntime, job.version, header);
            lode_job_free(&job);
        }
    } else if (msg.kind == LODE_STRATUM_RESPONSE) {
        char sid[LODE_JOB_ID_MAX];
        uint8_t en1[LODE_EXTRANONCE_MAX];
        size_t en1_len, en2_size;
        uint32_t mask;
        lode_stratum_parse_subscribe_result(msg.u.response.result, sid, en1, &en1_len, &en2_size, err, sizeof err);
        lode_stratum_parse_configure_result(msg.u.response.result, &mask, err, sizeof err);
    } else if (msg.kind != LODE_STRATUM_RESPONSE) {
        free(lode_stratum_build_reply_error(msg.id, 20, "unknown method"));
    }
    lode_stratum_msg_free(&msg);
    return 0;
}
