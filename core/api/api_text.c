/* Text from outside lode (a pool's URL, a device's name, a node's reason)
 * made fit for JSON strings and Prometheus label values alike: both must
 * be UTF-8, and a scrape or a parser refuses the whole answer for one bad
 * byte. */
#include <stdlib.h>
#include <string.h>

#include "core/api/api_internal.h"

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0 when the
 * bytes there are not one: overlong forms, surrogates and code points
 * beyond U+10FFFF are not. */
static size_t utf8_sequence(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    size_t n;
    unsigned cp;
    if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        n = 2;
        cp = p[0] & 0x1fu;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3;
        cp = p[0] & 0x0fu;
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4;
        cp = p[0] & 0x07u;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* the NUL at the end stops here too */
            return 0;
        cp = (cp << 6) | (p[i] & 0x3fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

char *api_clean_text(const char *text)
{
    if (text == NULL)
        text = "";
    size_t len = strlen(text);
    char *out = malloc(len + 1); /* one '?' per bad byte: never longer */
    if (out == NULL)
        return NULL;
    const unsigned char *p = (const unsigned char *)text;
    size_t n = 0;
    while (*p) {
        size_t seq = utf8_sequence(p);
        bool control = seq == 1 && (*p < 0x20 || *p == 0x7f);
        bool c1 = seq == 2 && p[0] == 0xc2 && p[1] < 0xa0; /* U+0080..U+009F */
        if (seq == 0 || control || c1) {
            out[n++] = '?';
            p += seq ? seq : 1;
            continue;
        }
        memcpy(out + n, p, seq);
        n += seq;
        p += seq;
    }
    out[n] = '\0';
    return out;
}
