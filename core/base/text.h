/* Building a text in a fixed buffer, piece by piece. */
#ifndef LODE_BASE_TEXT_H
#define LODE_BASE_TEXT_H

#include <stddef.h>

/* Appends printf-style text at buf + *used (len: the buffer's size) and
 * moves *used on. Past the end the text is cut (buf stays terminated) and
 * *used becomes len, so later appends do nothing. */
void lode_appendf(char *buf, size_t len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
