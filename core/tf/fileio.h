/* The file primitives under trial factoring's records (worktodo,
 * checkpoints, results): whole-file reads, atomic rewrites, durable
 * appends, line splitting, the CRC-32 of checkpoints and JSON results, and
 * the crash hook of the finishing steps. */
#ifndef LODE_TF_FILEIO_H
#define LODE_TF_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CRC-32 (poly 0xEDB88320, init and xorout 0xFFFFFFFF: zlib.crc32). */
uint32_t lode_tf_crc32(const void *data, size_t len);

/* Makes a rename or unlink in path's directory durable. 0 or -1 (errno). */
int lode_tf_fsync_dir_of(const char *path);

/* Writes text to path through path.tmp, fsync, rename and fsync of the
 * directory: at every instant path holds the old or the new text, whole.
 * 0, or -1 with errno set and no path.tmp left behind. */
int lode_tf_write_atomic(const char *path, const char *text, size_t len);

/* The whole content of a regular file, NUL-terminated for convenience (it
 * may hold NUL bytes: use *len); free() it. NULL with errno set: EISDIR
 * for a directory, EINVAL for anything else that is not a regular file (a
 * FIFO is not waited on). */
char *lode_tf_read_file(const char *path, size_t *len);

/* Appends text (whole lines) to path (created 0644) and fsyncs it. A file
 * whose last line was cut short (a full disk) gets a newline first, so that
 * the new line stays a line of its own; a failed append is cut off again.
 * 0, or -1 with errno set. */
int lode_tf_append_record(const char *path, const char *text, size_t len);

/* The next line of text[0..len) from *pos: its bytes without the newline
 * and a final CR (*n of them at *line). false at the end. */
bool lode_tf_next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n);

/* A file read a line at a time in constant memory, whatever its size (a
 * 2 GiB worktodo or proof file without a newline is one long line, not 2
 * GiB of RAM). Lines are split as lode_tf_next_line splits them. */
#define LODE_TF_LINE_KEEP 4096 /* the bytes of a line kept; the rest is counted */
typedef struct lode_tf_lines lode_tf_lines;
/* Opens path as lode_tf_read_file would (EISDIR, EINVAL for what is not a
 * regular file; a FIFO is not waited on). NULL with errno set. */
lode_tf_lines *lode_tf_lines_open(const char *path);
/* The next line: 1 with its first min(*full, LODE_TF_LINE_KEEP) bytes at
 * *line (NUL-terminated; valid until the next call) and its whole length
 * in *full; 0 at the end; -1 on a read error (errno set). */
int lode_tf_lines_next(lode_tf_lines *r, const char **line, size_t *full);
/* For a reader that gives up at the first line longer than limit bytes (a
 * proof file's lines are short): that line is returned as soon as it is
 * known to be longer (*full > limit, not its whole length) and the file is
 * read no further (the next call returns 0). */
void lode_tf_lines_stop_after(lode_tf_lines *r, size_t limit);
void lode_tf_lines_close(lode_tf_lines *r);

/* Test hook: LODE_TF_CRASH_AT=STEP kills the process (SIGKILL, as a power
 * cut would) the first time it reaches STEP; tests/test_tf.py uses it to
 * check every step of the finishing order (lode_tf_job_finish) and of the
 * worktodo.add merge. */
void lode_tf_crash_point(const char *step);

#endif
