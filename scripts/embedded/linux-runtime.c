// What Embedded Swift's standard library calls but does not define when it runs on Linux instead
// of bare metal: linked only into scripts/cross-build's binaries (a normal build gets these from
// libswiftCore).
#define _GNU_SOURCE
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *_swift_stdlib_strtod_clocale(const char *nptr, double *outResult);

// Double(_: String): strtod in the C locale, as swift/stdlib/public/stubs/Stubs.cpp does; the
// caller accepts the text only when the returned end is the end of the text. On overflow or
// underflow (ERANGE with +-HUGE_VAL or 0) it returns NULL, which the caller takes as "no number".
// Signaling NaN ("snan") is left out: JSON5 has no such literal.
const char *_swift_stdlib_strtod_clocale(const char *nptr, double *outResult) {
    static locale_t c_locale;
    if (c_locale == (locale_t)0) c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    char *end;
    errno = 0;
    double result = strtod_l(nptr, &end, c_locale);
    *outResult = result;
    if ((result == HUGE_VAL || result == -HUGE_VAL || result == 0.0) && errno == ERANGE) return NULL;
    return end;
}
