/* The end-of-run summary of lode tf (core/cli/tf_summary.c). */
#ifndef LODE_CLI_TF_SUMMARY_H
#define LODE_CLI_TF_SUMMARY_H

struct lode_dispatcher;
struct lode_tf_driver;

/* The end-of-run summary of lode tf (core/cli/tf_summary.c): the run's
 * assignments, factors and classes, and per device its rate over elapsed
 * seconds, candidates, proof entries and hardware errors. */
void cli_tf_summary(struct lode_dispatcher *m, struct lode_tf_driver *driver, double elapsed);

#endif
