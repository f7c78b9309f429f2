/* Trial factoring's checkpoint file, M<p>_<bit_min>_<bit_max>.ckp: the
 * progress of one assignment and, once it is finished, the record that
 * stops its result from being reported twice. Text, written whole by
 * rename (lode_tf_write_atomic):
 *
 *   lode-tf-checkpoint 1
 *   exponent P
 *   bits B1 B2
 *   next_class C            every needed class below C is done
 *   classes_done N          needed classes done (of 960)
 *   class_log L             length of the --class-log file when saved
 *   factors F k1 k2 ...     the factors so far, as k (q = 2kp + 1)
 *   proof T N k1 k2 ...     the proof so far (core/tf/proof.h): t and the
 *                           N listed q of the classes done, as k; absent
 *                           when the run keeps no proof (an older lode's
 *                           checkpoint, or LODE_TF_NO_PROOF)
 *   partial 1               } finished only: the run stopped after a factor
 *                           }   (--stop-after-factor 2): the result covers the
 *                           }   classes below next_class; absent: all of them
 *   aid KEY                 } finished only: the assignment key the state is about,
 *   results_offset R        }   and "result pending" with the results files'
 *   legacy_offset G         }   lengths before the append (-1: no legacy file),
 *   reported 1              }   or "reported"
 *   crc32 XXXXXXXX          CRC-32 of every byte before this line
 */
#ifndef LODE_TF_CHECKPOINT_H
#define LODE_TF_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tf/worktodo.h"

#define LODE_TF_MAX_FACTORS 64
/* Entries of a proof: t keeps the expectation below 2 000, so a list
 * past this is not a correct run's (5 standard deviations are 224). */
#define LODE_TF_PROOF_MAX 4096

enum { LODE_TF_CKP_RUNNING, LODE_TF_CKP_PENDING, LODE_TF_CKP_REPORTED };

typedef struct lode_tf_progress {
    unsigned next_class;   /* every needed class below it is done */
    unsigned classes_done; /* needed classes done */
    uint64_t k[LODE_TF_MAX_FACTORS];
    int factors;
    long class_log_offset; /* length of the class log when saved */
    int state;             /* LODE_TF_CKP_*: a finished assignment's result */
    bool partial;          /* finished after a factor with classes left (not all ran) */
    long results_offset;   /* LODE_TF_CKP_PENDING: the results files' lengths */
    long legacy_offset;    /*   before the result was appended (-1: none) */
    char aid[64];          /* the assignment key the state is about */
    bool proof_kept;       /* the proof below covers every class done */
    unsigned proof_bits;   /* its t */
    unsigned proof_count;
    uint64_t proof_k[LODE_TF_PROOF_MAX]; /* the listed q of the classes done, as k */
} lode_tf_progress;

/* A fresh assignment's progress: nothing done, no offsets, no proof kept. */
void lode_tf_progress_init(lode_tf_progress *pr);

/* DIR/M<p>_<bit_min>_<bit_max>.ckp */
void lode_tf_checkpoint_path(const char *dir, const lode_tf_assignment *a, char *out, size_t len);

/* The record's text (the format above; the aid comes from a) into buf.
 * Returns its length, or -1 when it does not fit. */
int lode_tf_checkpoint_format(const lode_tf_assignment *a, const lode_tf_progress *pr, char *buf, size_t size);

/* The buffer size lode_tf_checkpoint_format needs for pr at most. */
size_t lode_tf_checkpoint_size(const lode_tf_progress *pr);

/* lode_tf_checkpoint_format, written by lode_tf_write_atomic. 0, or -1 with
 * errno set (the previous file, if any, is untouched). */
int lode_tf_checkpoint_save(const char *path, const lode_tf_assignment *a, const lode_tf_progress *pr);

/* Reads a record's text (len bytes, any content) for assignment a: 1 = it
 * is a's (*pr filled), 0 = another assignment's (other exponent or bits),
 * -1 = damaged (checksum, truncated, NUL bytes, out-of-range fields, or a
 * finished state before the last class that is not partial). A finished state recorded for
 * another assignment key comes back as running (the classes are kept: the
 * new key gets its own result). */
int lode_tf_checkpoint_parse(const char *text, size_t len, const lode_tf_assignment *a, lode_tf_progress *pr);

/* The file at path: 1 = resumed, 0 = no usable checkpoint (none, or another
 * assignment's), -1 = a damaged one (logged; the assignment starts over). */
int lode_tf_checkpoint_load(const char *path, const lode_tf_assignment *a, lode_tf_progress *pr);

/* Removes the checkpoints in dir that say "reported" for a range inside no
 * assignment of list (a stage's is inside its line): a run killed between
 * removing (or raising) the worktodo line and removing the checkpoint
 * leaves one. */
void lode_tf_checkpoint_remove_stale(const char *dir, const lode_tf_assignment *list, size_t count);

#endif
