#include "core/tf/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/base/tf_ref.h"
#include "core/tf/fileio.h"

void lode_tf_progress_init(lode_tf_progress *pr)
{
    *pr = (lode_tf_progress){.results_offset = -1, .legacy_offset = -1};
}

void lode_tf_checkpoint_path(const char *dir, const lode_tf_assignment *a, char *out, size_t len)
{
    snprintf(out, len, "%s/M%u_%u_%u.ckp", dir, a->p, a->bit_min, a->bit_max);
}

/* Appends to buf[*n..size); false once it does not fit. */
static bool add(char *buf, size_t size, int *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static bool add(char *buf, size_t size, int *n, const char *fmt, ...)
{
    if (*n < 0 || (size_t)*n >= size) {
        *n = -1;
        return false;
    }
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *n, size - (size_t)*n, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= size - (size_t)*n) {
        *n = -1;
        return false;
    }
    *n += w;
    return true;
}

int lode_tf_checkpoint_format(const lode_tf_assignment *a, const lode_tf_progress *pr, char *buf, size_t size)
{
    int n = 0;
    add(buf, size, &n, "lode-tf-checkpoint 1\nexponent %u\nbits %u %u\nnext_class %u\nclasses_done %u\n"
        "class_log %ld\nfactors %d", a->p, a->bit_min, a->bit_max, pr->next_class, pr->classes_done,
        pr->class_log_offset, pr->factors);
    for (int i = 0; i < pr->factors && i < LODE_TF_MAX_FACTORS; i++)
        add(buf, size, &n, " %llu", (unsigned long long)pr->k[i]);
    add(buf, size, &n, "\n");
    if (pr->proof_kept) {
        add(buf, size, &n, "proof %u %u", pr->proof_bits, pr->proof_count);
        for (unsigned i = 0; i < pr->proof_count && i < LODE_TF_PROOF_MAX; i++)
            add(buf, size, &n, " %llu", (unsigned long long)pr->proof_k[i]);
        add(buf, size, &n, "\n");
    }
    if (pr->state != LODE_TF_CKP_RUNNING) {
        if (pr->partial)
            add(buf, size, &n, "partial 1\n");
        add(buf, size, &n, "aid %s\n", a->aid);
        if (pr->state == LODE_TF_CKP_PENDING)
            add(buf, size, &n, "results_offset %ld\nlegacy_offset %ld\n", pr->results_offset, pr->legacy_offset);
        else
            add(buf, size, &n, "reported 1\n");
    }
    if (n < 0)
        return -1;
    uint32_t crc = lode_tf_crc32(buf, (size_t)n);
    add(buf, size, &n, "crc32 %08X\n", crc);
    return n;
}

size_t lode_tf_checkpoint_size(const lode_tf_progress *pr)
{
    /* The fixed lines with a 63-byte key, and 21 bytes a number. */
    return 1024 + 21 * ((size_t)LODE_TF_MAX_FACTORS + (pr->proof_kept ? pr->proof_count : 0));
}

int lode_tf_checkpoint_save(const char *path, const lode_tf_assignment *a, const lode_tf_progress *pr)
{
    const size_t size = lode_tf_checkpoint_size(pr);
    char *buf = malloc(size);
    if (buf == NULL)
        return -1; /* errno: ENOMEM */
    int n = lode_tf_checkpoint_format(a, pr, buf, size);
    int rc = -1;
    if (n < 0)
        errno = EOVERFLOW;
    else
        rc = lode_tf_write_atomic(path, buf, (size_t)n);
    free(buf);
    return rc;
}

/* "proof T N k1 .. kN" (line: its text, up to its newline) into q. */
static bool parse_proof(const char *line, lode_tf_progress *q)
{
    int used = 0;
    if (sscanf(line, "proof %u %u%n", &q->proof_bits, &q->proof_count, &used) != 2 ||
        q->proof_bits > LODE_TF_PROOF_MAX_T || q->proof_count > LODE_TF_PROOF_MAX)
        return false;
    const char *s = line + used;
    for (unsigned i = 0; i < q->proof_count; i++) {
        if (*s != ' ')
            return false;
        char *end;
        errno = 0;
        q->proof_k[i] = strtoull(s + 1, &end, 10);
        if (end == s + 1 || errno != 0)
            return false;
        s = end;
    }
    return *s == '\n' && (q->proof_kept = true);
}

int lode_tf_checkpoint_parse(const char *data, size_t len, const lode_tf_assignment *a, lode_tf_progress *pr)
{
    char *text = malloc(len + 1); /* NUL-terminated for the scanning below */
    if (text == NULL)
        return -1;
    memcpy(text, data, len);
    text[len] = '\0';
    char *crc_at = NULL; /* the last "crc32 " line (an aid could hold the text) */
    for (char *s = text; (s = strstr(s, "\ncrc32 ")) != NULL; s++)
        crc_at = s + 1;
    unsigned crc = 0, p = 0, lo = 0, hi = 0;
    lode_tf_progress q;
    lode_tf_progress_init(&q);
    int rc = -1, used = 0;
    if (strlen(text) == len && crc_at != NULL && sscanf(crc_at, "crc32 %8X", &crc) == 1 &&
        lode_tf_crc32(text, (size_t)(crc_at - text)) == crc &&
        sscanf(text, "lode-tf-checkpoint 1\nexponent %u\nbits %u %u\nnext_class %u\nclasses_done %u\n"
               "class_log %ld\nfactors %d%n", &p, &lo, &hi, &q.next_class, &q.classes_done,
               &q.class_log_offset, &q.factors, &used) == 7 &&
        q.factors >= 0 && q.factors <= LODE_TF_MAX_FACTORS && q.next_class <= LODE_TF_CLASSES) {
        char *s = text + used;
        rc = 1;
        for (int i = 0; i < q.factors && rc == 1; i++) {
            char *end;
            errno = 0;
            q.k[i] = strtoull(s, &end, 10);
            if (end == s || errno != 0)
                rc = -1;
            s = end;
        }
        /* Optional "key value" lines up to the checksum. */
        for (s = strchr(s, '\n'); rc == 1 && s != NULL && s + 1 < crc_at; s = strchr(s + 1, '\n')) {
            char *l = s + 1, *end = strchr(l, '\n');
            size_t n = (size_t)(end - l);
            if (strncmp(l, "proof ", 6) == 0) {
                if (!parse_proof(l, &q))
                    rc = -1;
            } else if (strncmp(l, "aid ", 4) == 0 && n - 4 < sizeof q.aid)
                snprintf(q.aid, sizeof q.aid, "%.*s", (int)(n - 4), l + 4);
            else if (sscanf(l, "results_offset %ld", &q.results_offset) == 1)
                q.state = LODE_TF_CKP_PENDING;
            else if (sscanf(l, "legacy_offset %ld", &q.legacy_offset) == 1)
                ;
            else if (strncmp(l, "reported 1\n", 11) == 0)
                q.state = LODE_TF_CKP_REPORTED;
            else if (strncmp(l, "partial 1\n", 10) == 0)
                q.partial = true;
        }
        if (q.state == LODE_TF_CKP_RUNNING)
            q.partial = false;
        if (q.state != LODE_TF_CKP_RUNNING && q.next_class < LODE_TF_CLASSES && !q.partial)
            rc = -1;
        if (rc == 1 && (p != a->p || lo != a->bit_min || hi != a->bit_max))
            rc = 0;
        if (rc == 1 && q.state != LODE_TF_CKP_RUNNING && strcmp(q.aid, a->aid) != 0)
            q.state = LODE_TF_CKP_RUNNING, q.partial = false;
    }
    free(text);
    if (rc == 1)
        *pr = q;
    return rc;
}

int lode_tf_checkpoint_load(const char *path, const lode_tf_assignment *a, lode_tf_progress *pr)
{
    size_t len;
    char *text = lode_tf_read_file(path, &len);
    if (text == NULL)
        return 0;
    int rc = lode_tf_checkpoint_parse(text, len, a, pr);
    free(text);
    if (rc < 0)
        lode_log(LODE_LOG_WARN, "checkpoint %s is damaged (bad checksum): starting over", path);
    return rc;
}

void lode_tf_checkpoint_remove_stale(const char *dir_path, const lode_tf_assignment *list, size_t count)
{
    DIR *dir = opendir(dir_path);
    if (dir == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        lode_tf_assignment a = {0};
        char again[256];
        if (sscanf(e->d_name, "M%u_%u_%u.ckp", &a.p, &a.bit_min, &a.bit_max) != 3)
            continue;
        snprintf(again, sizeof again, "M%u_%u_%u.ckp", a.p, a.bit_min, a.bit_max);
        bool listed = strcmp(again, e->d_name) != 0;
        for (size_t i = 0; i < count && !listed; i++) /* inside a line: a stage of it */
            listed = list[i].p == a.p && list[i].bit_min <= a.bit_min && a.bit_max <= list[i].bit_max;
        char path[4096];
        lode_tf_checkpoint_path(dir_path, &a, path, sizeof path);
        lode_tf_progress pr;
        size_t len;
        char *text = listed ? NULL : lode_tf_read_file(path, &len);
        bool reported = text != NULL && strstr(text, "\nreported 1\n") != NULL;
        free(text);
        if (reported && lode_tf_checkpoint_load(path, &a, &pr) == 1) { /* any key: the line is gone */
            if (unlink(path) == 0)
                lode_log(LODE_LOG_INFO, "removed %s: its result is reported and its line is gone", path);
        }
    }
    closedir(dir);
}
