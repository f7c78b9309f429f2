/* Pool and proxy URLs (core/stratum/stratum_conn.h, url_userinfo.h): the
 * forms users write, those refused with their reason, credentials with
 * percent escapes decoded, raw ':', '@' and '/' in a password read as
 * written, a stray '%' refused, no message quoting a credential; pins and
 * the client's refusals at create time. */
#include <stdint.h>
#include <string.h>

#include "core/stratum/stratum_client.h"
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

static void test_create_errors(void)
{
    const char *bad_urls[] = {"http://pool:3333", "stratum+tcp://pool", "stratum+tcp://:3333", "stratum+tcp://pool:0",
                              "stratum+tcp://pool:70000", "stratum+tcp://pool:33x", "stratum+tcp://[::1:3333"};
    char err[256];
    for (size_t i = 0; i < sizeof bad_urls / sizeof bad_urls[0]; i++) {
        lode_pool_config pc = {.url = bad_urls[i], .user = "u"};
        lode_stratum_config cfg;
        lode_stratum_config_defaults(&cfg);
        cfg.pools = &pc;
        cfg.pool_count = 1;
        err[0] = '\0';
        lode_stratum *s = lode_stratum_create(&cfg, err, sizeof err);
        CHECK(s == NULL && err[0] != '\0', "URL %s accepted", bad_urls[i]);
        lode_stratum_free(s);
    }
    lode_pool_config pc = {.url = "stratum+ssl://pool:3333", .user = "u", .cert_pin = "abcd"};
    lode_stratum_config cfg;
    lode_stratum_config_defaults(&cfg);
    cfg.pools = &pc;
    cfg.pool_count = 1;
    CHECK(lode_stratum_create(&cfg, err, sizeof err) == NULL, "short pin accepted");
    pc.url = "stratum+tcp://pool:3333";
    pc.cert_pin = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    CHECK(lode_stratum_create(&cfg, err, sizeof err) == NULL, "pin on plain TCP accepted");
    cfg.pool_count = 0;
    CHECK(lode_stratum_create(&cfg, err, sizeof err) == NULL, "no pools accepted");

}

/* Pool URLs as users write them, and those refused with their reason. */
static void test_url_parse(void)
{
    char err[256];
    lode_stratum_url u;
    CHECK(lode_stratum_url_parse("stratum+tls://[::1]:443", &u, err, sizeof err) == 0 && u.tls &&
          strcmp(u.host, "::1") == 0 && strcmp(u.port, "443") == 0, "IPv6 URL");
    CHECK(lode_stratum_url_parse("stratum+tcp://pool.example:3333/", &u, err, sizeof err) == 0 && !u.tls, "trailing slash");
    /* Credentials, as cpuminer users paste them; the password runs to the last '@'. */
    CHECK(lode_stratum_url_parse("stratum+tcp://wallet.rig1:p@ss:w0rd@pool.example:3333", &u, err, sizeof err) == 0 &&
              u.has_user && u.has_pass && strcmp(u.user, "wallet.rig1") == 0 && strcmp(u.pass, "p@ss:w0rd") == 0 &&
              strcmp(u.host, "pool.example") == 0 && strcmp(u.port, "3333") == 0 && !u.tls,
          "user:pass@ in the URL");
    CHECK(lode_stratum_url_parse("stratum+ssl://wallet@[2001:db8::1]:443", &u, err, sizeof err) == 0 && u.tls &&
              u.has_user && !u.has_pass && strcmp(u.user, "wallet") == 0 && strcmp(u.host, "2001:db8::1") == 0,
          "user@ and an IPv6 host");
    CHECK(lode_stratum_url_parse("stratum+tcp://me:@pool:1", &u, err, sizeof err) == 0 && u.has_pass && u.pass[0] == '\0',
          "an empty password");
    CHECK(lode_stratum_url_parse("stratum+tcps://pool.example:3334", &u, err, sizeof err) == 0 && u.tls, "stratum+tcps is TLS");
    CHECK(lode_stratum_url_parse("pool.example:3333", &u, err, sizeof err) == 0 && !u.tls &&
              strcmp(u.host, "pool.example") == 0 && !u.has_user, "bare host:port is stratum+tcp");
    CHECK(lode_stratum_url_parse("[::1]:3333", &u, err, sizeof err) == 0 && strcmp(u.host, "::1") == 0, "bare [::1]:port");
    CHECK(lode_stratum_url_parse("w.1:x@10.0.0.2:3333", &u, err, sizeof err) == 0 && strcmp(u.user, "w.1") == 0 &&
              strcmp(u.pass, "x") == 0 && strcmp(u.host, "10.0.0.2") == 0, "bare user:pass@host:port");
    char shown[300];
    lode_stratum_url_parse("stratum+tcps://me:secret@pool:5", &u, err, sizeof err);
    lode_stratum_url_format(&u, shown, sizeof shown);
    CHECK(strcmp(shown, "stratum+ssl://pool:5") == 0, "format leaves the credentials out");
    struct {
        const char *url, *why;
    } bad[] = {
        {"ftp://pool:3333", "scheme"},
        {"stratum+udp://pool:3333", "scheme"},
        {"stratum+tcp://pool.example", "no :port"},
        {"pool.example", "no :port"},
        {"stratum+tcp://pool:0", "port"},
        {"stratum+tcp://pool:65536", "port"},
        {"stratum+tcp://pool:33x", "port"},
        {"stratum+tcp://pool:-1", "port"},
        {"stratum+tcp://[::1]3333", "IPv6"},
        {"stratum+tcp://::1:3333", "invalid host"},
        {"stratum+tcp://:3333", "host empty"},
        {"stratum+tcp://:secret@pool:3333", "no user name"},
        {"stratum+tcp://a\tb:secret@pool:3333", "control"},
        {"", "no pool URL"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(lode_stratum_url_parse(bad[i].url, &u, err, sizeof err) != 0 && strstr(err, bad[i].why) != NULL &&
                  strstr(err, "secret") == NULL,
              "bad URL refused with its reason (and no password in it)");
    }
    /* Overlong: the URL, the host, the user and the password each. */
    char longer[4096];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    CHECK(lode_stratum_url_parse(longer, &u, err, sizeof err) != 0 && strstr(err, "longer than") != NULL, "overlong URL");
    snprintf(longer, sizeof longer, "stratum+tcp://%0300d:1", 7);
    CHECK(lode_stratum_url_parse(longer, &u, err, sizeof err) != 0 && strstr(err, "too long") != NULL, "overlong host");
    snprintf(longer, sizeof longer, "stratum+tcp://u:%0300d@pool:1", 7);
    CHECK(lode_stratum_url_parse(longer, &u, err, sizeof err) != 0 && strstr(err, "longer than") != NULL &&
              strstr(err, "0000") == NULL, "overlong password");
}

/* Proxy URLs, their display and certificate pins. */
static void test_proxies_and_pins(void)
{
    char err[256];
    char shown[300];
    CHECK(lode_stratum_proxy_check("socks5://127.0.0.1:1080", err, sizeof err) == 0, "socks5 proxy");
    CHECK(lode_stratum_proxy_check("socks5h://u:p@proxy:1080", err, sizeof err) == 0, "socks5h proxy with credentials");
    CHECK(lode_stratum_proxy_check("http://proxy:3128", err, sizeof err) == 0, "http proxy");
    CHECK(lode_stratum_proxy_check("https://proxy:3128", err, sizeof err) != 0, "https proxy refused (curl would own the TLS)");
    CHECK(lode_stratum_proxy_check("socks4://proxy:1080", err, sizeof err) == 0, "socks4 proxy");
    CHECK(lode_stratum_proxy_check("socks4a://u@proxy:1080", err, sizeof err) == 0, "socks4a proxy with a user id");
    CHECK(lode_stratum_proxy_check("socks6://proxy:1080", err, sizeof err) != 0 && strstr(err, "socks4a://") != NULL,
          "an unknown scheme refused, naming those known");
    CHECK(lode_stratum_proxy_check("socks5://u:secret@", err, sizeof err) != 0 && strstr(err, "no host") != NULL &&
              strstr(err, "secret") == NULL, "proxy without a host");
    lode_stratum_proxy_display("socks5://u:secret@proxy:1080", shown, sizeof shown);
    CHECK(strcmp(shown, "socks5://proxy:1080") == 0, "proxy display leaves the credentials out");
    uint8_t pin[32];
    CHECK(lode_stratum_pin_parse("00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff", pin) == 0 &&
          pin[1] == 0x11, "pin with colons");
}

int main(void)
{
    test_pool_urls();
    test_proxy_urls();
    test_create_errors();
    test_url_parse();
    test_proxies_and_pins();
    return test_summary();
}
