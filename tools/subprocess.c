/* subprocess.c: running another program with no shell anywhere (subprocess.h). */
#define _GNU_SOURCE /* pipe2 */
#include "subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int cli_spawn_read(const char *path, char *const argv[], char *out, size_t cap, char *why,
                   size_t whycap) {
  int fd[2], rc, status = 0;
  size_t n = 0;
  pid_t pid;
  posix_spawn_file_actions_t fa;
  if (cap > 0) out[0] = '\0';
  /* Close-on-exec: the pipe's ends reach no other child; dup2 makes the child's stdout and
   * stderr its write end. */
  if (pipe2(fd, O_CLOEXEC) != 0) {
    snprintf(why, whycap, "cannot start %s: pipe: %s", path, strerror(errno));
    return 1;
  }
  if ((rc = posix_spawn_file_actions_init(&fa)) == 0) {
    if ((rc = posix_spawn_file_actions_adddup2(&fa, fd[1], 1)) == 0 &&
        (rc = posix_spawn_file_actions_adddup2(&fa, fd[1], 2)) == 0)
      rc = posix_spawn(&pid, path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
  }
  close(fd[1]);
  if (rc != 0) { /* glibc reports a failed exec here: ENOENT, EACCES, ENOEXEC */
    close(fd[0]);
    snprintf(why, whycap, "cannot start %s: %s", path, strerror(rc));
    return 1;
  }
  char buf[4096];
  for (;;) {
    ssize_t got = read(fd[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    size_t keep = cap > n + 1 ? cap - n - 1 : 0;
    if (keep > (size_t)got) keep = (size_t)got;
    memcpy(out + n, buf, keep);
    n += keep;
  }
  if (cap > 0) out[n] = '\0';
  close(fd[0]);
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      snprintf(why, whycap, "%s: waitpid: %s", path, strerror(errno));
      return 1;
    }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (WIFEXITED(status))
    snprintf(why, whycap, "exited with status %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(why, whycap, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    snprintf(why, whycap, "ended with wait status %d", status);
  return 1;
}
