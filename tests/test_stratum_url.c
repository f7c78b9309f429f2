/* Credentials in pool and proxy URLs (core/stratum/url_userinfo.h): percent
 * escapes decoded, raw ':', '@' and '/' in a password read as written, a
 * stray '%' refused, and no message quoting a credential. */
#include <string.h>

#include "core/stratum/stratum_conn.h"
#include "tests/test_util.h"

static void test_pool_urls(void)
{
    lode_stratum_url u;
    char err[256];
    /* p/ss@w:rd, written with escapes and raw: the same password. */
    CHECK(lode_stratum_url_parse("stratum+tcp://puser:p%2Fss%40w%3Ard@127.0.0.1:3333", &u, err, sizeof err) == 0 &&
              strcmp(u.user, "puser") == 0 && strcmp(u.pass, "p/ss@w:rd") == 0 && strcmp(u.host, "127.0.0.1") == 0,
          "escaped password decoded: '%s' (%s)", u.pass, err);
    CHECK(lode_stratum_url_parse("stratum+tcp://puser:p/ss@w:rd@127.0.0.1:3333", &u, err, sizeof err) == 0 &&
              strcmp(u.pass, "p/ss@w:rd") == 0 && strcmp(u.host, "127.0.0.1") == 0,
          "raw password read to the last '@': '%s' (%s)", u.pass, err);
    CHECK(lode_stratum_url_parse("stratum+tcp://w%2Erig%3a1:100%25@pool:1", &u, err, sizeof err) == 0 &&
              strcmp(u.user, "w.rig:1") == 0 && strcmp(u.pass, "100%") == 0,
          "escapes in the user name, lowercase hex, %%25: '%s' '%s'", u.user, u.pass);
    static const char *stray[] = {"stratum+tcp://u:50%off@pool:1", "stratum+tcp://u:secret%@pool:1",
                                  "stratum+tcp://u:secret%4@pool:1", "stratum+tcp://u%zz:secret@pool:1"};
    for (size_t i = 0; i < sizeof stray / sizeof stray[0]; i++) {
        err[0] = '\0';
        CHECK(lode_stratum_url_parse(stray[i], &u, err, sizeof err) != 0 && strstr(err, "%25") != NULL &&
                  strstr(err, "secret") == NULL && strstr(err, "off") == NULL && u.pass[0] == '\0',
              "stray '%%' refused with how to write it: %s", err);
    }
    CHECK(lode_stratum_url_parse("stratum+tcp://u:se%0Acret@pool:1", &u, err, sizeof err) != 0 &&
              strstr(err, "control") != NULL && strstr(err, "cret") == NULL,
          "an escaped newline refused: %s", err);
    CHECK(lode_stratum_url_parse("stratum+tcp://u:a%00b@pool:1", &u, err, sizeof err) != 0, "an escaped NUL refused");
}

static void test_proxy_urls(void)
{
    char err[256], shown[300];
    CHECK(lode_stratum_proxy_check("socks5://puser:p%2Fss%40w%3Ard@127.0.0.1:1080", err, sizeof err) == 0,
          "escaped proxy password: %s", err);
    CHECK(lode_stratum_proxy_check("socks5://puser:p/ss@w:rd@127.0.0.1:1080", err, sizeof err) == 0,
          "raw proxy password: %s", err);
    lode_stratum_proxy_display("socks5://puser:p/ss@w:rd@127.0.0.1:1080", shown, sizeof shown);
    CHECK(strcmp(shown, "socks5://127.0.0.1:1080") == 0, "display without the credentials: %s", shown);
    err[0] = '\0';
    CHECK(lode_stratum_proxy_check("socks5://puser:50%secret@127.0.0.1:1080", err, sizeof err) != 0 &&
              strstr(err, "%25") != NULL && strstr(err, "secret") == NULL,
          "stray '%%' in a proxy password refused: %s", err);
}

int main(void)
{
    test_pool_urls();
    test_proxy_urls();
    return test_summary();
}
