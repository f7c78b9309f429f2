/* The two conventions every client and parser of lode shares: the pause
 * before a retry (core/base/backoff.h) and the error text a failing call
 * leaves (core/base/errmsg.h). */
#include <math.h>
#include <string.h>

#include "core/base/backoff.h"
#include "core/base/errmsg.h"
#include "tests/test_util.h"

static void backoff_doubles_to_the_cap(void)
{
    const double want[] = {1, 2, 4, 8, 16, 30, 30};
    for (unsigned attempt = 0; attempt < sizeof want / sizeof want[0]; attempt++) {
        double got = lode_backoff_s(1, attempt, 30);
        CHECK(got == want[attempt], "attempt %u: %g s, want %g", attempt, got, want[attempt]);
    }
    CHECK(lode_backoff_s(0.25, 3, 60) == 2.0, "0.25 s doubled 3 times: %g", lode_backoff_s(0.25, 3, 60));
    CHECK(lode_backoff_s(90, 0, 60) == 60, "a base above the cap is the cap: %g", lode_backoff_s(90, 0, 60));
    CHECK(lode_backoff_s(1, 4000000000u, 60) == 60, "a long run of failures stays at the cap");
    CHECK(lode_backoff_s(1, 200, HUGE_VAL) == ldexp(1, 200), "no cap: 2^200 s");
    CHECK(lode_backoff_s(0, 7, 60) == 0, "no base, no pause");
}

static void fail_writes_and_returns(void)
{
    char err[16];
    memset(err, 'x', sizeof err);
    CHECK(lode_fail(err, sizeof err, "bad %s at %d", "nonce", 42) == -1, "the return is -1");
    CHECK(strcmp(err, "bad nonce at 42") == 0, "got '%s'", err);
    CHECK(lode_fail(err, 8, "a longer message than eight") == -1, "the return is -1 when cut");
    CHECK(strcmp(err, "a longe") == 0, "cut to the buffer: '%s'", err);
    CHECK(lode_fail(NULL, 0, "nowhere %d", 1) == -1, "no buffer still fails");
    err[0] = 'k';
    CHECK(lode_fail(err, 0, "not written") == -1 && err[0] == 'k', "a zero length writes nothing");
}

int main(void)
{
    backoff_doubles_to_the_cap();
    fail_writes_and_returns();
    return test_summary();
}
