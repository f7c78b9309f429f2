#include "core/base/sensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/text.h"

/* A reading is a few digits; a wild one (1e300) is clamped, so it cannot
 * crowd the others out. */
static void append(char *out, size_t len, size_t *used, const char *fmt, double v)
{
    lode_appendf(out, len, used, fmt, v > 1e9 ? 1e9 : v < -1e9 ? -1e9 : v);
}

void lode_sensors_format(const lode_sensors *s, char *out, size_t len)
{
    if (len == 0)
        return;
    out[0] = '\0';
    size_t used = 0;
    if (s->present & LODE_SENSOR_TEMP)
        append(out, len, &used, " %.0fC", s->temp_c);
    if (s->present & LODE_SENSOR_POWER)
        append(out, len, &used, " %.0fW", s->power_w);
    if (s->present & LODE_SENSOR_FAN)
        append(out, len, &used, " fan %.0f%%", s->fan_percent);
    if (s->present & LODE_SENSOR_SM_CLOCK)
        append(out, len, &used, " %.0fMHz", s->sm_clock_mhz);
    if (s->present & LODE_SENSOR_MEM_CLOCK)
        append(out, len, &used, " mem %.0fMHz", s->mem_clock_mhz);
    if ((s->present & LODE_SENSOR_THROTTLE) && s->throttle[0] != '\0' && strcmp(s->throttle, "none") != 0) {
        lode_appendf(out, len, &used, " throttle %.*s", (int)strnlen(s->throttle, sizeof s->throttle),
                     s->throttle);
    }
}

/* A whole word as a finite number. */
static int number(const char *text, size_t n, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, text, n);
    buf[n] = '\0';
    char *end = NULL;
    double v = strtod(buf, &end);
    if (end != buf + n || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int lode_sensors_parse(const char *text, lode_sensors *s)
{
    static const struct {
        const char *key;
        uint32_t bit;
        size_t offset;
    } keys[] = {
        {"temp", LODE_SENSOR_TEMP, offsetof(lode_sensors, temp_c)},
        {"power", LODE_SENSOR_POWER, offsetof(lode_sensors, power_w)},
        {"fan", LODE_SENSOR_FAN, offsetof(lode_sensors, fan_percent)},
        {"sm", LODE_SENSOR_SM_CLOCK, offsetof(lode_sensors, sm_clock_mhz)},
        {"mem", LODE_SENSOR_MEM_CLOCK, offsetof(lode_sensors, mem_clock_mhz)},
        {"energy", LODE_SENSOR_ENERGY, offsetof(lode_sensors, energy_j)},
    };
    int bad = 0;
    const char *p = text;
    for (;;) {
        p += strspn(p, " \t\r\n");
        size_t n = strcspn(p, " \t\r\n");
        if (n == 0)
            break;
        const char *eq = memchr(p, '=', n);
        bool known = false;
        if (eq != NULL) {
            size_t key_len = (size_t)(eq - p), value_len = n - key_len - 1;
            const char *value = eq + 1;
            if (key_len == 8 && strncmp(p, "throttle", 8) == 0 && value_len > 0 &&
                value_len < sizeof s->throttle) {
                memcpy(s->throttle, value, value_len);
                s->throttle[value_len] = '\0';
                s->present |= LODE_SENSOR_THROTTLE;
                known = true;
            }
            for (size_t k = 0; k < sizeof keys / sizeof keys[0] && !known; k++) {
                double v;
                if (strlen(keys[k].key) == key_len && strncmp(p, keys[k].key, key_len) == 0 &&
                    number(value, value_len, &v) == 0) {
                    memcpy((char *)s + keys[k].offset, &v, sizeof v);
                    s->present |= keys[k].bit;
                    known = true;
                }
            }
        }
        bad += !known;
        p += n;
    }
    return bad;
}
