/* The assignments of a run (class_driver.h): each in stages or whole, one
 * after another, with worktodo.txt read again after each. */
#include "core/tf/class_driver.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/log.h"

static bool exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Whether a runs in stages: as d->stages says, unless an earlier run left
 * a checkpoint that says otherwise (its work is kept, and a stage already
 * reported is not reported again by a whole run). */
static bool staged(const lode_tf_driver *d, const lode_tf_assignment *a)
{
    if (a->bit_max - a->bit_min < 2)
        return false;
    char path[4096];
    lode_tf_checkpoint_path(d->ckp_dir, a, path, sizeof path);
    if (exists(path)) {
        if (d->stages)
            lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: %s covers the whole range: it runs whole, not in stages",
                     a->p, a->bit_min, a->bit_max, path);
        return false;
    }
    lode_tf_assignment first = *a;
    first.bit_max = a->bit_min + 1;
    lode_tf_checkpoint_path(d->ckp_dir, &first, path, sizeof path);
    if (exists(path) && !d->stages) {
        lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: %s is of its first stage: it runs in stages", a->p, a->bit_min,
                 a->bit_max, path);
        return true;
    }
    return d->stages;
}

int lode_tf_driver_run(lode_tf_driver *d, const lode_tf_assignment *a)
{
    if (!staged(d, a))
        return lode_tf_driver_run_range(d, a, NULL);
    /* Stage by stage: each a result of its own, the line's bit_min raised
     * after each (lode_tf_driver_finish), as mfaktc's Stages=1. */
    lode_tf_assignment line = *a;
    for (;;) {
        lode_tf_assignment stage = line;
        stage.bit_max = line.bit_min + 1;
        int factors = 0;
        int status = lode_tf_driver_run_range(d, &stage, &factors);
        char next[LODE_TF_LINE_MAX + 2];
        int n = status == LODE_TF_DONE ? lode_tf_driver_next_line(d, &stage, factors, next, sizeof next) : -1;
        if (n < 0) {
            if (status == LODE_TF_DONE && factors > 0 && stage.bit_max < line.bit_max)
                lode_log(LODE_LOG_INFO, "M%u: a factor in 2^%u..2^%u: 2^%u..2^%u is not run "
                         "(--stop-after-factor %d)", a->p, stage.bit_min, stage.bit_max, stage.bit_max,
                         line.bit_max, d->stop_after_factor);
            return status;
        }
        memcpy(line.line, next, (size_t)n + 1);
        line.line_len = (size_t)n;
        line.bit_min = stage.bit_max;
        if (d->stop != NULL && d->stop())
            return LODE_TF_STOPPED;
    }
}

int lode_tf_driver_run_list(lode_tf_driver *d, lode_tf_assignment **list, size_t *count)
{
    int status = LODE_TF_DONE;
    for (size_t i = 0; status == LODE_TF_DONE && i < *count; i++) {
        status = lode_tf_driver_run(d, &(*list)[i]);
        if (status == LODE_TF_DONE && d->stop != NULL && d->stop())
            status = LODE_TF_STOPPED;
        if (status != LODE_TF_DONE || d->worktodo == NULL)
            continue;
        /* New work dropped into worktodo.add meanwhile: merge it, and go on
         * with whatever the file now holds (the finished line is gone; lines
         * added to the file itself meanwhile are read too). */
        if (lode_tf_worktodo_merge_add(d->worktodo) < 0)
            lode_log(LODE_LOG_ERROR, "cannot merge worktodo.add into %s: %s", d->worktodo, strerror(errno));
        lode_tf_assignment *fresh;
        size_t n;
        int bad;
        if (lode_tf_worktodo_load(d->worktodo, &fresh, &n, &bad, false) == 0) {
            free(*list);
            *list = fresh;
            *count = n;
            i = (size_t)-1; /* from the top of the file again */
        } else {
            lode_log(LODE_LOG_ERROR, "cannot read %s again: %s; going on with the assignments read before",
                     d->worktodo, strerror(errno));
        }
    }
    return status;
}
