/* --background: the parent stays until the child runs.
 *
 * daemon(3) returns 0 to the shell before anything is checked, so a bad
 * option, device or worktodo ended in the log file alone (#39). Here the
 * child's stderr is a pipe to the parent, which copies it to its own
 * stderr, and a second pipe carries one byte once the child runs (its
 * devices passed their self-tests and the work started). The parent then
 * exits 0; if the child ends first, the parent exits with its status, its
 * error lines already shown. The child detaches as daemon(3) does: a new
 * session, stdin and stdout on /dev/null, and stderr too once it runs. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/cli/background.h"
#include "core/cli/messages.h"
#include "core/cli/signals.h"

#define RUNNING_BYTE 'R'

static int running_fd = -1; /* the child's end of the "running" pipe, until it runs */

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the parent's stderr is gone: nothing to tell */
        p += w;
        n -= (size_t)w;
    }
}

/* The child's status as the parent's: its exit status, or 128 + the signal
 * that killed it (as a shell says it). */
static int child_status(pid_t pid)
{
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR)
            return EXIT_RUNTIME;
    if (WIFEXITED(ws))
        return WEXITSTATUS(ws);
    cli_error("the background process (pid %ld) was killed by signal %d before it ran", (long)pid, WTERMSIG(ws));
    return 128 + WTERMSIG(ws);
}

/* The parent: copies the child's stderr to its own until the child runs
 * (0) or ends (its status). A signal to the parent (Ctrl-C while the
 * devices self-test) is passed on: the child stops as it would in the
 * foreground, and its status is the parent's. */
static int parent_wait(pid_t pid, int err_fd, int run_fd)
{
    struct pollfd fds[3] = {{.fd = err_fd, .events = POLLIN}, {.fd = run_fd, .events = POLLIN},
                            {.fd = cli_stop_fd(), .events = POLLIN}};
    bool passed_on = false;
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
        if (cli_interrupted() && !passed_on) {
            kill(pid, SIGINT);
            passed_on = true;
            fds[2].fd = -1; /* told once */
        }
        if (poll(fds, 3, fds[2].fd < 0 ? 1000 : -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        char buf[4096];
        if (fds[0].revents) {
            ssize_t n = read(err_fd, buf, sizeof buf);
            if (n > 0)
                write_all(STDERR_FILENO, buf, (size_t)n);
            else if (n == 0 || errno != EINTR)
                fds[0].fd = -1;
        }
        if (fds[0].fd < 0 || !fds[0].revents) {
            /* stderr first: the child's last lines come before its verdict. */
            if (fds[1].revents) {
                ssize_t n = read(run_fd, buf, 1);
                if (n == 1 && buf[0] == RUNNING_BYTE)
                    return 0;
                if (n == 0 || (n < 0 && errno != EINTR))
                    fds[1].fd = -1;
            }
        }
    }
    return child_status(pid);
}

/* The child: a session of its own, stdin and stdout on /dev/null, stderr
 * the pipe to the parent. Returns 0, or -1 with errno. */
static int child_detach(int err_w)
{
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0 || setsid() < 0 || dup2(null_fd, STDIN_FILENO) < 0 || dup2(null_fd, STDOUT_FILENO) < 0 ||
        dup2(err_w, STDERR_FILENO) < 0)
        return -1;
    close(null_fd);
    close(err_w);
    return 0;
}

static int cannot_detach(int e)
{
    cli_error("cannot go to the background: %s", strerror(e));
    return EXIT_RUNTIME;
}

int cli_background_start(void)
{
    int err_pipe[2], run_pipe[2];
    if (pipe2(err_pipe, O_CLOEXEC) != 0)
        return cannot_detach(errno);
    if (pipe2(run_pipe, O_CLOEXEC) != 0) {
        int e = errno;
        close(err_pipe[0]);
        close(err_pipe[1]);
        return cannot_detach(e);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(err_pipe[0]);
        close(err_pipe[1]);
        close(run_pipe[0]);
        close(run_pipe[1]);
        return cannot_detach(e);
    }
    if (pid > 0) {
        close(err_pipe[1]);
        close(run_pipe[1]);
        int status = parent_wait(pid, err_pipe[0], run_pipe[0]);
        close(err_pipe[0]);
        close(run_pipe[0]);
        return status;
    }
    cli_signals_after_fork();
    close(err_pipe[0]);
    close(run_pipe[0]);
    if (child_detach(err_pipe[1]) != 0)
        _exit(cannot_detach(errno)); /* the parent shows it and exits 1 */
    running_fd = run_pipe[1];
    return -1;
}

void cli_background_running(void)
{
    if (running_fd < 0)
        return;
    lode_log(LODE_LOG_NOTICE, "lode is running in the background, pid %ld (kill -INT %ld stops it)",
             (long)getpid(), (long)getpid());
    /* stderr off first: the parent copies what came before "running". */
    lode_log_set_stderr(false);
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd >= 0) {
        dup2(null_fd, STDERR_FILENO);
        close(null_fd);
    }
    char byte = RUNNING_BYTE;
    write_all(running_fd, &byte, 1);
    close(running_fd);
    running_fd = -1;
}
