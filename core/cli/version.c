/* `lode -V` / `lode --version`: the build (version, git commit, compiler,
 * build type), each backend compiled in with what it finds on this machine
 * (its describe operation: runtime and driver versions, platforms, CPU
 * paths, the sensors library), and the versions of the libraries lode
 * links, as built against and as loaded where the library tells. */
#include <curl/curl.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <stdio.h>
#include <string.h>

#include <lode_git_commit.h> /* generated at build time (core/cli/CMakeLists.txt) */

#ifdef LODE_HAVE_MICROHTTPD
#include <microhttpd.h>
#endif

#include "core/cli/commands.h"
#include "core/dispatch/registry.h"

#ifndef LODE_BUILD_COMPILER
#define LODE_BUILD_COMPILER "unknown"
#endif
#ifndef LODE_BUILD_TYPE
#define LODE_BUILD_TYPE "unknown"
#endif
#ifndef LODE_BUILD_OPTIONS
#define LODE_BUILD_OPTIONS ""
#endif

int cmd_version(void)
{
    printf("lode %s\n", LODE_VERSION);
    printf("build: commit %s, %s, %s, C %ld (%s)\n", LODE_GIT_COMMIT, LODE_BUILD_COMPILER, LODE_BUILD_TYPE,
           (long)__STDC_VERSION__, LODE_BUILD_OPTIONS);

    printf("backends compiled in:");
    for (size_t b = 0; b < lode_backend_count(); b++)
        printf(" %s", lode_backend_name(b));
    printf("\n");

    /* Each library as the headers said at build time, and the one loaded
     * now where it can tell (a shared library may be newer). */
    printf("libraries:\n");
    printf("  jansson: %s (built with %s)\n", jansson_version_str(), JANSSON_VERSION);
    const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);
    printf("  libcurl: %s (built with %s)%s%s\n", curl != NULL ? curl->version : "unknown", LIBCURL_VERSION,
           curl != NULL && curl->ssl_version != NULL ? ", TLS by " : "",
           curl != NULL && curl->ssl_version != NULL ? curl->ssl_version : "");
    printf("  OpenSSL: %s (built with %s)\n", OpenSSL_version(OPENSSL_VERSION), OPENSSL_VERSION_TEXT);
#ifdef LODE_HAVE_MICROHTTPD
    printf("  libmicrohttpd: %s\n", MHD_get_version());
#endif
#ifdef LODE_SYSTEMD_VERSION
    /* libsystemd has no version call: the version built against. */
    printf("  libsystemd: %s (built with)\n", LODE_SYSTEMD_VERSION);
#endif

    for (size_t b = 0; b < lode_backend_count(); b++) {
        char why[LODE_WHY_LEN], text[4096];
        int usable = lode_backend_probe(b, why);
        printf("%s: %s%s\n", lode_backend_name(b), usable == 0 ? "available" : "unavailable: ",
               usable == 0 ? "" : why);
        lode_backend_describe(b, text, sizeof text);
        fputs(text, stdout);
    }
    return 0;
}
