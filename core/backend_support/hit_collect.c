/* Hit collection of the GPU backends (hit_collect.h). */
#include "core/backend_support/hit_collect.h"

#include "core/backend_support/kernel_params.h"
#include "core/base/log.h"
#include "core/base/status.h"

int lode_collect_nonce_hits(const char *label, const uint32_t *buffer, uint64_t start, uint64_t count,
                            const lode_nonce_hit_check *check, lode_hits *hits)
{
    const uint32_t n = buffer[LODE_HITS_COUNT];
    const uint32_t *nonces = buffer + LODE_HITS_NONCE0;
    if (n > LODE_HITS_CAP)
        return LODE_ERR_HITS_OVERFLOW;
    int rc = check->versions != NULL
                 ? sha256d_versions_push_hits(check->versions, hits, nonces, n, start, count, check->target)
                 : lode_hits_push_nonces(hits, nonces, n, start, count, check->keep, check->ctx);
    if (rc == LODE_ERR_DEVICE)
        lode_log(LODE_LOG_ERROR, "%s: kernel reported a nonce outside its range", label);
    return rc;
}

int lode_collect_factor_offsets(const char *label, uint64_t n0, uint32_t count, const uint32_t *found,
                                uint32_t nfound, lode_hits *hits)
{
    int rc = lode_hits_push_offsets(hits, n0, count, found, nfound);
    if (rc == LODE_ERR_DEVICE)
        lode_log(LODE_LOG_ERROR, "%s: a factor outside its launch", label);
    return rc;
}
