/* The worktodo file of trial factoring (mfaktc's format,
 * docs/GIMPS.md): one assignment a line, Factor=[AID,]exponent,bit_min,bit_max.
 *
 * The file is handled as bytes: a line with a NUL or a megabyte of text is
 * just a malformed line, reported (cut, unprintable bytes escaped) and kept;
 * removing a finished line rewrites every other byte as it was (temporary
 * file, fsync, rename, fsync of the directory). worktodo.add beside it is
 * merged in, and FILE.lock keeps a second process off the file. */
#ifndef LODE_TF_WORKTODO_H
#define LODE_TF_WORKTODO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LODE_TF_LINE_MAX 100 /* mfaktc's worktodo limit */
#define LODE_TF_ECHO_MAX 80  /* bytes of a malformed line shown in its message */

typedef struct lode_tf_assignment {
    char aid[64]; /* "" or "N/A" or the key */
    uint32_t p;
    unsigned bit_min, bit_max;
    char line[LODE_TF_LINE_MAX + 2]; /* the worktodo line as read (no newline, no final CR) */
    size_t line_len;
} lode_tf_assignment;

/* One line (raw bytes, any content, no newline): 1 = an assignment (into
 * *a), 0 = blank or a comment (// or \\), -1 = malformed (why). */
int lode_tf_worktodo_parse_line(const char *raw, size_t len, lode_tf_assignment *a, char *why, size_t why_len);

/* Shows at most LODE_TF_ECHO_MAX bytes of s[0..n) with every byte that is
 * not printable ASCII (and the backslash) as \xNN, and the full length when
 * it was cut. out_len >= 4 * LODE_TF_ECHO_MAX + 32 never cuts. */
void lode_tf_worktodo_escape(const char *s, size_t n, char *out, size_t out_len);

/* Reads the file's valid assignments into *list (in order; free() it);
 * malformed lines are counted in *bad_lines and, if log, named (file:line,
 * escaped). 0, or -1 with errno set. */
int lode_tf_worktodo_load(const char *path, lode_tf_assignment **list, size_t *count, int *bad_lines, bool log);

/* Removes the first line equal to the assignment's from the file (re-read
 * now: the user may have edited it) through lode_tf_write_atomic; every
 * other byte stays as it is. A keyless line that PrimeNet registered while
 * it ran ("Factor=KEY," + the rest of the line as it was read) is removed
 * as well. 0 also when the line or the file is gone; -1 with errno set
 * (the file is unchanged). */
int lode_tf_worktodo_remove(const char *path, const lode_tf_assignment *a);

/* Replaces the first line equal to the assignment's by line[0..len) (no
 * newline; the original's CR and newline stay), or removes it when line is
 * NULL; otherwise as lode_tf_worktodo_remove. PrimeNet's key put into a
 * line, and the next stage of a line run in stages. */
int lode_tf_worktodo_replace(const char *path, const lode_tf_assignment *a, const char *line, size_t len);

/* Appends whole lines (text[0..len), a newline added where the last lacks
 * one) to the file through lode_tf_write_atomic (created when missing; a
 * last line without a newline gets one first). 0, or -1 with errno set
 * (the file is unchanged). Every rewrite of this header's functions
 * (remove, replace, append, merge) is one at a time within the process. */
int lode_tf_worktodo_append(const char *path, const char *text, size_t len);

/* a's worktodo line with its bit_min raised to bit_min (the rest of the
 * line as it was; Factor=[AID,]p,bit_min,bit_max when that would be longer
 * than LODE_TF_LINE_MAX), into out. Its length, or -1 when out is too
 * small. */
int lode_tf_worktodo_raised(const lode_tf_assignment *a, unsigned bit_min, char *out, size_t out_len);

/* Appends worktodo.add (beside the worktodo file) to it: the .add file is
 * first renamed to worktodo.add.merging; the worktodo file is rewritten
 * with it at its end, then the .merging file is removed. A kill before the
 * removal leaves a .merging file whose text already ends the worktodo file:
 * the next call only removes it (no assignment is added twice). Crash hook
 * steps: add-renamed, add-merged. Returns the bytes merged (0: nothing to
 * merge), or -1 with errno set (nothing lost; a worktodo.add that is not a
 * regular file is left alone). */
long lode_tf_worktodo_merge_add(const char *worktodo);

/* Whether a run can start on the worktodo file: 0 when it is a regular
 * file, or missing with a worktodo.add beside it (the merge creates it);
 * -1 with "cannot read FILE: why" otherwise (a missing file or directory,
 * a directory, a FIFO). Called before lode_tf_worktodo_lock, so that an
 * unusable worktodo leaves no FILE.lock behind. */
int lode_tf_worktodo_check(const char *worktodo, char *why, size_t why_len);

/* Locks the worktodo file for this process (flock on FILE.lock, which
 * holds the pid; the lock dies with the process, the file stays). Returns
 * the descriptor to keep open, or -1 (logged: "in use by another lode tf"
 * naming the pid, or why the lock failed). */
int lode_tf_worktodo_lock(const char *worktodo);

#endif
