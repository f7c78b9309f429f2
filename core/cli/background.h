/* --background (core/cli/background.c). */
#ifndef LODE_CLI_BACKGROUND_H
#define LODE_CLI_BACKGROUND_H


/* Forks: in the parent, waits until
 * the child runs and returns 0, or returns the child's exit status once it
 * has ended, having copied the child's stderr (its errors) to its own;
 * returns EXIT_RUNTIME if it cannot fork. In the child, which is detached
 * (setsid, stdin and stdout on /dev/null, stderr a pipe to the parent),
 * returns -1: go on. */
int cli_background_start(void);
/* Tells the parent the child runs (devices self-tested, the work started)
 * and puts stderr on /dev/null; nothing outside --background or twice. */
void cli_background_running(void);

#endif
