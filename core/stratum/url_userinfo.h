/* The "user:password" part of pool and proxy URLs, one rule for both: the
 * user name runs to the first ':', the password from there to the '@' before
 * the host (the last one: a host has none), so a raw ':', '@' or '/' in a
 * password is read as written; percent escapes (%2F, %40, %3A, %25) are
 * decoded in both, as URLs write them. A '%' that does not start two hex
 * digits, a control character, or an escape of NUL or a control character
 * is an error (the message never quotes the credentials). */
#ifndef LODE_STRATUM_URL_USERINFO_H
#define LODE_STRATUM_URL_USERINFO_H

#include <stdbool.h>
#include <stddef.h>

/* text[0..len) is the user info (without the '@'). user and pass get the
 * decoded parts (cap bytes each, NUL included); *has_pass: a ':' was there.
 * what names the URL in messages ("pool URL", "proxy URL"). Returns 0, or -1
 * with a reason in err. */
int lode_stratum_userinfo_parse(const char *text, size_t len, const char *what, char *user, char *pass,
                                size_t cap, bool *has_pass, char *err, size_t err_len);

#endif
