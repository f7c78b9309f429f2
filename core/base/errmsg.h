#ifndef LODE_ERRMSG_H
#define LODE_ERRMSG_H

#include <stddef.h>

/* The error convention of lode's parsers and clients: a call that fails
 * writes why into the caller's err buffer (cut to err_len; nothing when err
 * is NULL or err_len 0) and returns -1, so a failure path is one line:
 *     return lode_fail(err, err_len, "bad nonce %s", text); */
int lode_fail(char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
