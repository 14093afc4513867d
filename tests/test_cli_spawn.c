/* test_cli_spawn.c: cli_spawn_read (tools/subprocess.c), how pmtune bench runs its peer, with fake
 * peers and no GPU: no shell sees the program's path or its arguments (a path of spaces, quotes,
 * $(...) and ;), its output is read whole, and a program that cannot start or fails says why. */
#include <signal.h>
#include <sys/stat.h>

#include "dbtest.h"
#include "subprocess.h"

static char dir[64], home[512];

/* A directory whose name a shell would split, unquote and run: $(touch ...) and ; in it. */
#define HOSTILE "we ird 'q\" $(touch PWNED) ; touch PWNED2 `touch PWNED3`"

static void setup(void) {
  dbtest_mkdir(dir);
  snprintf(home, sizeof home, "%s/" HOSTILE, dir);
  cr_assert_eq(mkdir(home, 0755), 0, "%s", home);
}
static void teardown(void) { dbtest_cleanup(dir); }

TestSuite(cli_spawn, .init = setup, .fini = teardown, .timeout = 60);

/* Writes an executable /bin/sh script of body to the hostile directory as name; its path in
 * path. */
static void script(const char *name, const char *body, char path[1024]) {
  snprintf(path, 1024, "%s/%s", home, name);
  char text[2048];
  snprintf(text, sizeof text, "#!/bin/sh\n%s\n", body);
  dbtest_write(path, text, strlen(text));
  cr_assert_eq(chmod(path, 0755), 0);
}

static int pwned(void) {
  static const char *const names[] = {"PWNED", "PWNED2", "PWNED3"};
  char p[1024];
  for (int i = 0; i < 3; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    if (access(p, F_OK) == 0) return 1;
    snprintf(p, sizeof p, "%s/%s", home, names[i]);
    if (access(p, F_OK) == 0) return 1;
    if (access(names[i], F_OK) == 0) return 1;
  }
  return 0;
}

Test(cli_spawn, a_peer_under_a_hostile_path_gets_its_arguments_as_they_are) {
  /* The fake peer prints the line pmtune bench reads, and its arguments one a line to a file. */
  char peer[1024], args_file[1024], body[1536], out[2048], why[1200];
  snprintf(args_file, sizeof args_file, "%s/args", dir);
  snprintf(body, sizeof body,
           "for a in \"$0\" \"$@\"; do printf '%%s\\n' \"$a\"; done > \"$PEER_ARGS\"\n"
           "printf '{\"op\":\"reduce\",\"peer\":\"fake cub\",\"median_ms\":0.125,"
           "\"verified\":true}\\n'");
  script("pmtune_peers", body, peer);
  cr_assert_eq(setenv("PEER_ARGS", args_file, 1), 0);
  char *argv[] = {peer, "--op", "reduce", "--size", "1000", "--samples", "3",
                  "a b; touch PWNED", "$(touch PWNED2)", "'\"`touch PWNED3`", NULL};
  int rc = cli_spawn_read(peer, argv, out, sizeof out, why, sizeof why);
  cr_assert_eq(rc, 0, "%s", why);
  cr_assert_str_eq(out, "{\"op\":\"reduce\",\"peer\":\"fake cub\",\"median_ms\":0.125,"
                        "\"verified\":true}\n");
  size_t len = 0;
  char *got = dbtest_slurp(args_file, &len);
  cr_assert_not_null(got, "the peer ran and wrote %s", args_file);
  char want[4096] = "";
  for (int i = 0; argv[i] != NULL; i++) strcat(strcat(want, argv[i]), "\n");
  cr_assert_str_eq(got, want, "every argument, its path first, reached the peer as it was");
  free(got);
  cr_assert_not(pwned(), "nothing in the path or the arguments was run");
}

Test(cli_spawn, a_peer_that_cannot_start_says_why) {
  char missing[1024], plain[1024], out[64], why[1200];
  snprintf(missing, sizeof missing, "%s/pmtune_peers", home);
  char *argv[] = {missing, NULL};
  cr_assert_eq(cli_spawn_read(missing, argv, out, sizeof out, why, sizeof why), 1);
  cr_assert_not_null(strstr(why, "cannot start"), "%s", why);
  cr_assert_not_null(strstr(why, "No such file"), "%s", why);
  cr_assert_not_null(strstr(why, HOSTILE), "names the program: %s", why);
  cr_assert_str_eq(out, "");
  /* there, but not executable */
  snprintf(plain, sizeof plain, "%s/not_executable", home);
  dbtest_write(plain, "#!/bin/sh\necho hi\n", 18);
  argv[0] = plain;
  cr_assert_eq(cli_spawn_read(plain, argv, out, sizeof out, why, sizeof why), 1);
  cr_assert_not_null(strstr(why, "Permission denied"), "%s", why);
  /* a bare name is not looked for in $PATH */
  char *sh[] = {"sh", "-c", "echo ran", NULL};
  cr_assert_eq(cli_spawn_read("sh", sh, out, sizeof out, why, sizeof why), 1, "ran: %s", out);
  cr_assert_not_null(strstr(why, "cannot start sh"), "%s", why);
}

/* Its standard error is read with its output (pmtune bench shows a failed peer's own words). */
Test(cli_spawn, a_peer_that_fails_says_how_and_its_output_and_messages_are_kept) {
  char p[1024], out[256], why[128];
  script("fails", "echo '{\"verified\":false}'; echo 'the sum differs' >&2; exit 3", p);
  char *argv[] = {p, NULL};
  cr_assert_eq(cli_spawn_read(p, argv, out, sizeof out, why, sizeof why), 1);
  cr_assert_str_eq(why, "exited with status 3");
  cr_assert_str_eq(out, "{\"verified\":false}\nthe sum differs\n");
  script("killed", "echo half; kill -9 $$", p);
  cr_assert_eq(cli_spawn_read(p, argv, out, sizeof out, why, sizeof why), 1);
  cr_assert_not_null(strstr(why, "killed by signal 9"), "%s", why);
  cr_assert_str_eq(out, "half\n");
}

Test(cli_spawn, a_peer_that_writes_much_is_read_to_its_end) {
  /* 1 MiB, more than a pipe holds: a reader that stopped at its buffer would hang the peer. */
  char p[1024], out[100], why[128];
  script("chatty", "head -c 1048576 /dev/zero | tr '\\0' x; echo; echo done >&2", p);
  char *argv[] = {p, NULL};
  cr_assert_eq(cli_spawn_read(p, argv, out, sizeof out, why, sizeof why), 0, "%s", why);
  cr_assert_eq(strlen(out), sizeof out - 1, "the first %zu bytes kept", sizeof out - 1);
  cr_assert_eq(strspn(out, "x"), sizeof out - 1);
}
