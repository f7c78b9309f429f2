/* The progress line of trial factoring: one line per interval with where
 * the assignment stands, its rates, the ETA and every device's sensors:
 *
 *   M66362159 73-74 class 4619: 100.0%, 86.3 G candidates/s, 14402.33 GHz-days/day, ETA 0s, 1130 GHz-days/kWh; cuda:0 64C 531W 1980MHz
 *
 * The credit per kWh is the GHz-days/day at the devices' mean power since
 * each began testing (lode_tf_run_watts), there only when every device that
 * tested candidates has its energy measured. Devices without sensors are
 * left out; with none at all the line ends at the ETA (or the credit). Rates are written as every line of lode writes them
 * (lode_format_rate). */
#ifndef LODE_TF_PROGRESS_LINE_H
#define LODE_TF_PROGRESS_LINE_H

#include <stddef.h>

#include "core/dispatch/dispatch.h"
#include "core/tf/worktodo.h"

typedef struct lode_tf_progress_figures {
    const lode_tf_assignment *assignment;
    unsigned class_index;    /* the class just finished */
    double percent;          /* classes done of the needed ones, 0 to 100 */
    double candidates_per_s; /* since the run started */
    double ghz_days_per_day;
    double eta_s;
} lode_tf_progress_figures;

/* The mean watts of the run's devices that tested candidates, since each
 * began, and in *joules (may be NULL) their energy; NAN when one of them
 * has no energy measured. */
double lode_tf_run_watts(lode_dispatcher *m, double *joules);

/* The line (without a newline) into out; m gives the devices' last sensor
 * readings (the dispatcher's monitor: no device is asked). */
void lode_tf_progress_line(const lode_tf_progress_figures *f, lode_dispatcher *m, char *out, size_t len);

#endif
