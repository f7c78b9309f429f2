#include "core/stratum/url_userinfo.h"

#include <stdio.h>
#include <string.h>

#include "core/base/hex.h"

/* Decodes in[0..len) into out (cap bytes). Returns 0, or -1 with err. */
static int decode_part(const char *in, size_t len, const char *what, const char *part, char *out, size_t cap,
                       char *err, size_t err_len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == '%') {
            int hi = i + 2 < len ? lode_hex_digit(in[i + 1]) : -1;
            int lo = hi >= 0 ? lode_hex_digit(in[i + 2]) : -1;
            if (lo < 0) {
                snprintf(err, err_len, "%s: a '%%' in the %s must start a %%XX escape (a '%%' itself is "
                         "written %%25)", what, part);
                return -1;
            }
            c = (unsigned char)(hi << 4 | lo);
            i += 2;
        }
        if (c < 0x20 || c == 0x7f) {
            snprintf(err, err_len, "%s: control characters in the %s", what, part);
            return -1;
        }
        if (n + 1 >= cap) {
            snprintf(err, err_len, "%s: %s longer than %zu characters", what, part, cap - 1);
            return -1;
        }
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return 0;
}

int lode_stratum_userinfo_parse(const char *text, size_t len, const char *what, char *user, char *pass,
                                size_t cap, bool *has_pass, char *err, size_t err_len)
{
    const char *colon = memchr(text, ':', len);
    size_t user_len = colon ? (size_t)(colon - text) : len;
    if (user_len == 0) {
        snprintf(err, err_len, "%s: no user name before '@'", what);
        return -1;
    }
    if (decode_part(text, user_len, what, "user name", user, cap, err, err_len) != 0)
        return -1;
    *has_pass = colon != NULL;
    pass[0] = '\0';
    if (colon == NULL)
        return 0;
    return decode_part(colon + 1, len - user_len - 1, what, "password", pass, cap, err, err_len);
}
