/* test_cli_badinput.c: every pmtune command fed missing, repeated, malformed and absurd arguments
 * (bad input): each case ends with the status it must (2 bad usage, 1 a failed
 * operation), exactly one line on stderr, within its time, by no signal, and leaves the database
 * it was given as it was. Most cases are generated: every option that a command's --help lists
 * is repeated, left without its value and given absurd values; the option table below gives each
 * one a value that is right in context, and a command's --help listing an option the table lacks
 * fails the test, so that a new option is not left untried. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "dbtest.h"

enum {
  TIMEOUT_MS = 60000, /* a case that runs longer hangs (NVRTC under the sanitizers is slow) */
  ERR_MAX = 512,      /* a clear line is at most this long: a quoted value is cut short */
  LONG_LEN = 100000   /* the absurdly long argument */
};

static char dir[64], db[128], doc[128], ro_dir[128], *long_arg;
static char *db_before;
static size_t db_before_len;
static int cases, failures;
static int timeout_ms = TIMEOUT_MS; /* a case still running after this is a hang */
static int fast_ms;                 /* where not 0: a case must end within this (a refusal) */
static const char *forbidden;       /* where not NULL: stderr must not hold it */

/* ---- Running pmtune with an argument vector (no shell), a time limit and no signal ------------ */

typedef struct outcome {
  int exited, status, signal, timed_out, elapsed_ms;
  char err[4096], out[256];
} outcome;

static void slurp_into(const char *file, char *buf, size_t cap) {
  FILE *f = fopen(file, "rb");
  size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
  buf[n] = '\0';
  if (f) fclose(f);
}

/* The length of a file, or -1. */
static long file_size(const char *file) {
  struct stat st;
  return stat(file, &st) == 0 ? (long)st.st_size : -1;
}

/* Runs pmtune argv[0..] in dir, with $HOME in it and PMTUNE_DB and XDG_CACHE_HOME unset, stdin
 * /dev/null; its stderr (its size in *err_len) and the start of its stdout into o. */
static void run(char *const argv[], outcome *o, long *err_len) {
  char out_file[160], err_file[160];
  snprintf(out_file, sizeof out_file, "%s/.out", dir);
  snprintf(err_file, sizeof err_file, "%s/.err", dir);
  memset(o, 0, sizeof *o);
  pid_t pid = fork();
  cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
  if (pid == 0) {
    char home[160];
    snprintf(home, sizeof home, "%s/home", dir);
    setenv("HOME", home, 1);
    unsetenv("PMTUNE_DB");
    unsetenv("XDG_CACHE_HOME");
    int in = open("/dev/null", O_RDONLY), out = open(out_file, O_WRONLY | O_CREAT | O_TRUNC, 0600),
        err = open(err_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0 || chdir(dir) != 0) _exit(126);
    dup2(in, 0), dup2(out, 1), dup2(err, 2);
    char *args[40] = {(char *)PMTUNE_BIN};
    for (int i = 0; argv[i] != NULL && i < 38; i++) args[i + 1] = argv[i];
    execv(PMTUNE_BIN, args);
    _exit(127);
  }
  int st = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int waited = 0;; waited += 2) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) break;
    if (waited >= timeout_ms) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      o->timed_out = 1;
      break;
    }
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  o->elapsed_ms = (int)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
  o->exited = WIFEXITED(st) && !o->timed_out;
  o->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  o->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  slurp_into(err_file, o->err, sizeof o->err);
  slurp_into(out_file, o->out, sizeof o->out);
  *err_len = file_size(err_file);
}

/* ---- Cases ------------------------------------------------------------------------------------ */

enum { ONE_LINE = 0, USAGE_BLOCK = 1 }; /* what stderr must hold */

/* An argument as a case writes it, the placeholders expanded: "@DB" the fabricated database,
 * "@DOC" a document exported from it, "@DIR" the scratch directory, "@MISSING" a directory that
 * does not exist, "@RO" a read-only one, "@LONG" 100,000 characters (each followed by what
 * follows it in the argument). Returns a heap copy. */
static char *expand(const char *a) {
  static const char *const keys[] = {"@DB", "@DOC", "@DIR", "@MISSING", "@RO", "@LONG"};
  char vals[6][160];
  snprintf(vals[0], sizeof vals[0], "%s", db);
  snprintf(vals[1], sizeof vals[1], "%s", doc);
  snprintf(vals[2], sizeof vals[2], "%s", dir);
  snprintf(vals[3], sizeof vals[3], "%s/missing/sub", dir);
  snprintf(vals[4], sizeof vals[4], "%s/ro", dir);
  for (int k = 0; k < 6; k++) {
    size_t n = strlen(keys[k]);
    if (strncmp(a, keys[k], n) != 0 || (a[n] != '\0' && a[n] != '/' && a[n] != '.')) continue;
    const char *v = k == 5 ? long_arg : vals[k];
    char *s = malloc(strlen(v) + strlen(a + n) + 1);
    cr_assert_not_null(s);
    strcpy(s, v);
    strcat(s, a + n);
    return s;
  }
  return strdup(a);
}

/* Writes a case as a command line, long arguments cut short, for messages. */
static const char *shown(char *const argv[]) {
  static char buf[1024];
  size_t len = (size_t)snprintf(buf, sizeof buf, "pmtune");
  for (int i = 0; argv[i] != NULL && len < sizeof buf; i++) {
    size_t n = strlen(argv[i]);
    len += (size_t)snprintf(buf + len, sizeof buf - len, n > 40 ? " '%.20s...'(%zu chars)" : " '%s'",
                            argv[i], n);
  }
  return buf;
}

/* Runs one case: the arguments (NULL-terminated, placeholders as expand says) must end with
 * status `want`, stderr one line holding `needle` (NULL: any) or, for USAGE_BLOCK, pmtune's
 * usage; never a signal or a hang; a database given as @DB is left byte for byte as it was.
 * A failure is reported (cr_expect) and counted; the walk goes on. */
static void check_case(const char *const *args, int want, const char *needle, int err_kind) {
  char *argv[40] = {NULL};
  int n = 0, uses_db = 0;
  for (; args[n] != NULL; n++) {
    cr_assert_lt(n, 38, "a case of too many arguments");
    argv[n] = expand(args[n]);
    uses_db |= strncmp(args[n], "@DB", 3) == 0 && args[n][3] == '\0';
  }
  outcome o;
  long err_len = 0;
  run(argv, &o, &err_len);
  cases++;
  const char *cmd = shown(argv);
  int lines = 0;
  for (const char *p = o.err; *p; p++) lines += *p == '\n';
  int ok = 1;
  if (o.timed_out) {
    ok = 0;
    cr_expect(0, "%s: still running after %d ms (a hang)", cmd, timeout_ms);
  } else if (!o.exited) {
    ok = 0;
    cr_expect(0, "%s: killed by signal %d: %s", cmd, o.signal, o.err);
  } else if (o.status != want) {
    ok = 0;
    cr_expect(0, "%s: status %d, not %d; stderr: %s", cmd, o.status, want, o.err);
  } else if (err_kind == USAGE_BLOCK) {
    ok = strncmp(o.err, "usage: pmtune", 13) == 0;
    cr_expect(ok, "%s: a usage block on stderr, got: %s", cmd, o.err);
  } else if (want != 0 && (lines != 1 || err_len > ERR_MAX)) {
    ok = 0;
    cr_expect(0, "%s: stderr must be one clear line (at most %d bytes), got %d lines, %ld bytes: "
              "%.600s", cmd, ERR_MAX, lines, err_len, o.err);
  } else if (want == 0 && err_len != 0) {
    ok = 0;
    cr_expect(0, "%s: succeeded but said on stderr: %s", cmd, o.err);
  } else if (needle != NULL && strstr(o.err, needle) == NULL) {
    ok = 0;
    cr_expect(0, "%s: '%s' not in: %s", cmd, needle, o.err);
  } else if (forbidden != NULL && strstr(o.err, forbidden) != NULL) {
    ok = 0;
    cr_expect(0, "%s: '%s' must not reach the user: %s", cmd, forbidden, o.err);
  } else if (fast_ms != 0 && o.elapsed_ms > fast_ms) {
    ok = 0;
    cr_expect(0, "%s: took %d ms, not at once (within %d ms)", cmd, o.elapsed_ms, fast_ms);
  }
  if (uses_db) {
    size_t len = 0;
    char *now = dbtest_slurp(db, &len);
    int same = now != NULL && len == db_before_len && memcmp(now, db_before, len) == 0;
    cr_expect(same, "%s: the database it was given changed", cmd);
    ok &= same;
    free(now);
  }
  failures += !ok;
  for (int i = 0; i < n; i++) free(argv[i]);
}

#define CASE(want, needle, ...) check_case((const char *const[]){__VA_ARGS__, NULL}, want, needle, ONE_LINE)

/* ---- The option table: every option of every command, with a value right in context ---------- */

enum kind {
  K_FLAG,     /* takes no value */
  K_VALUE,    /* a value: each of common_bad and of its extra_bad is bad usage */
  K_LIST,     /* a value, repeatable (giving it twice is right): bad values as K_VALUE */
  K_DEFINE,   /* -D: repeatable, and only its extra_bad are bad (any name is a define) */
  K_OPTIONAL, /* --name[=VALUE]: the bad values go after '=' */
  K_PATH      /* a path: what absurd paths do is in the path cases' table */
};

typedef struct opt_spec {
  const char *name;  /* as --help lists it: "--size" ("-D, --define" is "--define") */
  enum kind kind;
  const char *valid; /* a value that is right with the command's base (NULL: a flag, or none
                        applies there: see the does-not-apply cases) */
  int in_base;       /* the base command line gives it (a required option) */
  const char *extra_bad[7]; /* bad values beyond the common ones */
} opt_spec;

typedef struct cmd_spec {
  const char *name;
  const char *operand; /* the operands of a right command line ("check", "new probe"), or NULL */
  opt_spec opts[20];
} cmd_spec;

#define RADIUS_BAD {"0", "4", "1000", "-1", " 2", "+2"}
static const cmd_spec commands[] = {
    {"devices", NULL, {{NULL}}},
    {"compile", NULL,
     {{"--op", K_VALUE, "filter", 1, {NULL}},
      {"--arch", K_VALUE, "sm_90", 1, {"sm_20", "sm_9x", "sm90"}},
      {"--config", K_VALUE, "seed", 0, {"block=500"}},
      {"--radius", K_VALUE, "2", 0, RADIUS_BAD},
      {"--border", K_VALUE, "zero", 0, {"wrap"}},
      {"--dtype", K_VALUE, "f32", 0, {"f8", "F32", "f32,", ",f32", "f32,f8", "half"}},
      {"--define", K_DEFINE, "X=1", 0, {"", "1BAD", "-5", "A B", "@LONG", "=1"}},
      {"--file", K_PATH, "@DIR/k.cu", 0, {NULL}},
      {"--output", K_PATH, "@DIR/k.cubin", 0, {NULL}},
      {"--kernel", K_PATH, NULL, 0, {NULL}}, /* not with --op: in the does-not-apply cases */
      {NULL}}},
    {"space", NULL,
     {{"--op", K_VALUE, "filter", 1, {NULL}},
      {"--size", K_VALUE, "64x64", 0, {"0", "1x0", "65536x65537", "64x", "x64", "64x64x64"}},
      {"--radius", K_VALUE, "2", 0, RADIUS_BAD},
      {"--border", K_VALUE, "zero", 0, {"wrap"}},
      {"--order", K_VALUE, NULL, 0, {NULL}}, /* not filter's: in the does-not-apply cases */
      {"--dtype", K_VALUE, "f32", 0, {"f8", "F32", "f32,", ",f32", "f32,f8", "half"}},
      {"--nondeterministic", K_FLAG, NULL, 0, {NULL}},
      {"--list", K_FLAG, NULL, 0, {NULL}},
      {"--kernel", K_PATH, NULL, 0, {NULL}}, /* not with --op: in the does-not-apply cases */
      {NULL}}},
    {"tune", NULL,
     {{"--op", K_VALUE, "filter", 1, {NULL}},
      {"--size", K_LIST, "64x64", 1, {NULL}},
      {"--radius", K_VALUE, "2", 0, RADIUS_BAD},
      {"--border", K_VALUE, "zero", 0, {"wrap"}},
      {"--order", K_VALUE, NULL, 0, {NULL}},
      {"--seen", K_OPTIONAL, NULL, 0, {"0", "129", "1.5"}},
      {"--dtype", K_VALUE, "f32", 0, {"f8", "F32", "f32,", ",f32", "f32,f8", "half"}},
      {"--device", K_VALUE, "0", 0, {"1024", " 1", "+0", "all0"}},
      {"--strategy", K_VALUE, "random", 0, {"greedy"}},
      {"--budget", K_VALUE, "10", 0, {"0", "99999999999999999999", "0x10", "1000000000001"}},
      {"--time", K_VALUE, "10", 0, {"0", "inf", "nan", "1e999", "0x10", "604801"}},
      {"--samples", K_VALUE, "5", 0, {"0", "65"}},
      {"--nondeterministic", K_FLAG, NULL, 0, {NULL}},
      {"--db", K_PATH, "@DB", 0, {NULL}},
      {"--kernel", K_PATH, NULL, 0, {NULL}}, /* not with --op: in the does-not-apply cases */
      {"--grid", K_FLAG, NULL, 0, {NULL}},   /* not with --size: in the does-not-apply cases */
      {"--carry", K_FLAG, NULL, 0, {NULL}},  /* not with --seen: in the does-not-apply cases */
      {NULL}}},
    {"show", NULL,
     {{"--op", K_VALUE, "matadd", 0, {NULL}},
      {"--dtype", K_VALUE, "bf16", 0, {"f8", "F32", "f32,", ",f32", "f32,f8", "half"}},
      {"--seen", K_FLAG, NULL, 0, {NULL}},
      {"--db", K_PATH, "@DB", 1, {NULL}},
      {NULL}}},
    {"explain", NULL,
     {{"--op", K_VALUE, "filter", 1, {NULL}},
      {"--size", K_VALUE, "64x64", 1, {"0", "1x0", "65536x65537"}},
      {"--radius", K_VALUE, "2", 0, RADIUS_BAD},
      {"--border", K_VALUE, "zero", 0, {"wrap"}},
      {"--order", K_VALUE, NULL, 0, {NULL}},
      {"--align", K_VALUE, "8", 0, {"0", "2", "32", "1000"}},
      {"--dtype", K_VALUE, "f32", 0, {"f8", "F32", "f32,", ",f32", "f32,f8", "half"}},
      {"--device", K_VALUE, "0", 0, {"1024"}},
      {"--json", K_FLAG, NULL, 0, {NULL}},
      {"--db", K_PATH, "@DB", 1, {NULL}},
      {"--kernel", K_PATH, NULL, 0, {NULL}}, /* not with --op: in the does-not-apply cases */
      {NULL}}},
    {"bench", NULL,
     {{"--op", K_VALUE, "filter", 1, {NULL}},
      {"--size", K_LIST, "64x64", 1, {NULL}},
      {"--radius", K_VALUE, "2", 0, RADIUS_BAD},
      {"--dtype", K_VALUE, "f32", 0, {"f8", "F32", "f32,", ",f32", "f32,f8", "half"}},
      {"--device", K_VALUE, "0", 0, {"1024"}},
      {"--samples", K_VALUE, "5", 0, {"0", "65"}},
      {"--json", K_FLAG, NULL, 0, {NULL}},
      {"--db", K_PATH, "@DB", 1, {NULL}},
      {"--kernel", K_PATH, NULL, 0, {NULL}}, /* not with --op: in the does-not-apply cases */
      {NULL}}},
    {"report", NULL,
     {{"--svg", K_PATH, "@DIR/r.svg", 1, {NULL}},
      {"--bench", K_PATH, "@DIR/b.json", 0, {NULL}},
      {"--op", K_VALUE, "matadd", 0, {NULL}},
      {"--db", K_PATH, "@DB", 1, {NULL}},
      {"--kernel", K_PATH, PM_SOURCE_DIR "/examples/kernels/matadd.json", 0, {NULL}},
      {NULL}}},
    {"db", "check", {{"--db", K_PATH, "@DB", 1, {NULL}}, {NULL}}},
    {"export", "@DIR/w.json",
     {{"--all", K_FLAG, NULL, 0, {NULL}},
      {"--db", K_PATH, "@DB", 1, {NULL}},
      {"--kernel", K_PATH, PM_SOURCE_DIR "/examples/kernels/matadd.json", 0, {NULL}},
      {NULL}}},
    {"import", "@DOC",
     {{"--db", K_PATH, "@DB", 1, {NULL}},
      {"--kernel", K_PATH, PM_SOURCE_DIR "/examples/kernels/matadd.json", 0, {NULL}},
      {NULL}}},
    {"kernel", "new probe", {{"--dir", K_PATH, "@DIR", 1, {NULL}}, {NULL}}},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

/* The values that no option of kind K_VALUE takes (its extra_bad add its own). */
static const char *const common_bad[] = {"", "text", "@LONG", "-5", "1e3", "0x0", "99999999999x2"};

/* A command line: the command, its base options (but `skip`), then its operand; returns the
 * count. */
static int base_args(const cmd_spec *c, const opt_spec *skip, const char **args) {
  int n = 0;
  args[n++] = c->name;
  for (const opt_spec *o = c->opts; o->name != NULL; o++)
    if (o->in_base && o != skip) {
      args[n++] = o->name;
      args[n++] = o->valid;
    }
  if (c->operand != NULL) { /* one or two words */
    static char first[32];
    const char *space = strchr(c->operand, ' ');
    if (space == NULL) {
      args[n++] = c->operand;
    } else {
      snprintf(first, sizeof first, "%.*s", (int)(space - c->operand), c->operand);
      args[n++] = first;
      args[n++] = space + 1;
    }
  }
  return n;
}

/* The option's name without its dashes, which its error message names ("size"). */
static const char *bare(const opt_spec *o) { return o->name + 2; }

/* ---- Fixtures --------------------------------------------------------------------------------- */

static void setup(void) {
  dbtest_mkdir(dir);
  snprintf(db, sizeof db, "%s/fab.db", dir);
  snprintf(doc, sizeof doc, "%s/doc.json", dir);
  snprintf(ro_dir, sizeof ro_dir, "%s/ro", dir);
  dbtest_make_db(db);
  cr_assert_eq(mkdir(ro_dir, 0755), 0);
  long_arg = malloc(LONG_LEN + 1);
  cr_assert_not_null(long_arg);
  memset(long_arg, '9', LONG_LEN);
  long_arg[LONG_LEN] = '\0';
  char *export_args[] = {(char *)"export", doc, (char *)"--db", db, NULL};
  outcome o;
  long len;
  run(export_args, &o, &len);
  cr_assert_eq(o.status, 0, "the document to import: %s", o.err);
  db_before = dbtest_slurp(db, &db_before_len);
  cr_assert_not_null(db_before);
  cases = failures = 0;
}

static void teardown(void) {
  chmod(ro_dir, 0755);
  free(long_arg);
  free(db_before);
  dbtest_cleanup(dir);
}

TestSuite(badinput, .init = setup, .fini = teardown, .timeout = 900);

static void tally(const char *what) {
  cr_log_info("%s: %d cases, %d failed", what, cases, failures);
  printf("badinput %s: %d cases, %d failed\n", what, cases, failures);
  fflush(stdout);
}

/* ---- The table against each command's --help -------------------------------------------------- */

/* The long names of the options that `pmtune CMD --help` lists ("  --size S", "  -D, --define"). */
static int help_options(const char *cmd, char names[32][40]) {
  char *argv[] = {(char *)cmd, (char *)"--help", NULL};
  outcome o;
  long len;
  int n = 0;
  run(argv, &o, &len);
  cr_assert_eq(o.status, 0, "%s --help: %s", cmd, o.err);
  char help[65536];
  char file[160];
  snprintf(file, sizeof file, "%s/.out", dir);
  slurp_into(file, help, sizeof help);
  for (const char *line = help; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
    if (strncmp(line, "  -", 3) != 0) continue;
    const char *p = strstr(line, "--");
    cr_assert_not_null(p, "%s --help: an option line without a long name: %.60s", cmd, line);
    size_t k = 2;
    while (p[k] != '\0' && p[k] != ' ' && p[k] != '[' && p[k] != '\n') k++;
    cr_assert_lt(n, 32);
    snprintf(names[n++], 40, "%.*s", (int)k, p);
  }
  return n;
}

Test(badinput, the_table_names_every_option_of_each_commands_help) {
  for (size_t i = 0; i < NCOMMANDS; i++) {
    char names[32][40];
    int n = help_options(commands[i].name, names), listed = 0;
    for (int k = 0; k < n; k++) {
      int found = 0;
      for (const opt_spec *o = commands[i].opts; o->name != NULL; o++)
        found |= strcmp(o->name, names[k]) == 0;
      cr_expect(found, "pmtune %s --help lists %s, which this test's table lacks: add it",
                commands[i].name, names[k]);
    }
    for (const opt_spec *o = commands[i].opts; o->name != NULL; o++, listed++) {
      int found = 0;
      for (int k = 0; k < n; k++) found |= strcmp(o->name, names[k]) == 0;
      cr_expect(found, "the table has %s %s, which --help does not list", commands[i].name,
                o->name);
    }
    cr_expect_eq(listed, n, "pmtune %s: %d options in the table, %d in --help", commands[i].name,
                 listed, n);
  }
  /* and every command that `pmtune --help` lists is in the table */
  char *argv[] = {(char *)"--help", NULL}, file[160], help[16384];
  outcome o;
  long len;
  run(argv, &o, &len);
  snprintf(file, sizeof file, "%s/.out", dir);
  slurp_into(file, help, sizeof help);
  const char *p = strstr(help, "commands:\n");
  cr_assert_not_null(p, "%s", help);
  int listed = 0;
  for (p = strchr(p, '\n') + 1; strncmp(p, "  ", 2) == 0; p = strchr(p, '\n') + 1, listed++) {
    char name[32];
    cr_assert_eq(sscanf(p, " %31s", name), 1);
    size_t i = 0;
    while (i < NCOMMANDS && strcmp(commands[i].name, name) != 0) i++;
    cr_expect_lt(i, NCOMMANDS, "pmtune --help lists '%s', which this test's table lacks", name);
  }
  cr_expect_eq(listed, (int)NCOMMANDS, "pmtune --help lists %d commands, the table %zu", listed,
               NCOMMANDS);
}

/* ---- Generated: every option repeated, left without its value, given absurd values ------------ */

Test(badinput, every_single_value_option_given_twice) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    for (const opt_spec *o = commands[i].opts; o->name != NULL; o++) {
      if (o->kind == K_LIST || o->kind == K_DEFINE || (o->kind != K_FLAG && o->valid == NULL &&
                                                       o->kind != K_OPTIONAL))
        continue;
      const char *args[40];
      int n = base_args(&commands[i], NULL, args);
      for (int k = o->in_base ? 1 : 0; k < 2; k++) {
        args[n++] = o->name;
        if (o->kind != K_FLAG && o->kind != K_OPTIONAL) args[n++] = o->valid;
      }
      args[n] = NULL;
      char needle[64];
      snprintf(needle, sizeof needle, "%s given twice", o->name);
      check_case(args, 2, needle, ONE_LINE);
    }
  tally("options given twice");
  cr_assert_eq(failures, 0);
}

Test(badinput, every_option_left_without_its_value) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    for (const opt_spec *o = commands[i].opts; o->name != NULL; o++) {
      if (o->kind == K_FLAG || o->kind == K_OPTIONAL) continue;
      const char *args[40];
      int n = base_args(&commands[i], o, args);
      args[n++] = o->name;
      args[n] = NULL;
      check_case(args, 2, "needs a value", ONE_LINE);
    }
  tally("options without their value");
  cr_assert_eq(failures, 0);
}

Test(badinput, every_value_option_given_absurd_values) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    for (const opt_spec *o = commands[i].opts; o->name != NULL; o++) {
      if (o->kind == K_FLAG || o->kind == K_PATH) continue;
      const char *bad[16];
      int nbad = 0;
      if (o->kind != K_DEFINE)
        for (size_t k = 0; k < sizeof common_bad / sizeof *common_bad; k++) bad[nbad++] = common_bad[k];
      for (int k = 0; k < 7 && o->extra_bad[k] != NULL; k++) bad[nbad++] = o->extra_bad[k];
      for (int b = 0; b < nbad; b++) {
        const char *args[40];
        char eq[64];
        int n = base_args(&commands[i], o, args);
        if (o->kind == K_OPTIONAL) {
          if (strcmp(bad[b], "@LONG") == 0) continue; /* "--seen=@LONG" is not expanded */
          snprintf(eq, sizeof eq, "%s=%s", o->name, bad[b]);
          args[n++] = eq;
        } else {
          args[n++] = o->name;
          args[n++] = bad[b];
        }
        args[n] = NULL;
        /* the message names the option, or the value where that says it better ("NVRTC
         * cannot compile for sm_20") */
        const char *needle = o->kind == K_DEFINE ? "define" : bare(o);
        if (strcmp(o->name, "--arch") == 0 && strncmp(bad[b], "sm_", 3) == 0) needle = bad[b];
        check_case(args, 2, needle, ONE_LINE);
      }
    }
  tally("absurd values");
  cr_assert_eq(failures, 0);
}

Test(badinput, unknown_options_and_operands) {
  for (size_t i = 0; i < NCOMMANDS; i++) {
    static const struct {
      const char *arg, *needle;
    } extra[] = {{"--bogus", "unknown option '--bogus'"}, {"-Z", "unknown option '-Z'"},
                 {"--@LONG", "unknown option"},       {"extra", "unexpected argument 'extra'"},
                 {"", "unexpected argument ''"},       {"@LONG", "unexpected argument"}};
    for (size_t k = 0; k < sizeof extra / sizeof *extra; k++) {
      const char *args[40];
      int n = base_args(&commands[i], NULL, args);
      if (strncmp(extra[k].arg, "--@", 3) == 0) {
        static char opt[LONG_LEN + 3];
        snprintf(opt, sizeof opt, "--%s", long_arg);
        args[n++] = opt;
      } else {
        args[n++] = extra[k].arg;
      }
      args[n] = NULL;
      check_case(args, 2, extra[k].needle, ONE_LINE);
    }
  }
  /* the operand missing, empty or absurd */
  CASE(2, "no action given", "db", "--db", "@DB");
  CASE(2, "unknown action ''", "db", "", "--db", "@DB");
  CASE(2, "unknown action", "db", "@LONG", "--db", "@DB");
  CASE(2, "unknown action 'CHECK'", "db", "CHECK", "--db", "@DB");
  CASE(2, "no FILE given", "export", "--db", "@DB");
  CASE(2, "FILE is empty", "export", "", "--db", "@DB");
  CASE(2, "no FILE given", "import", "--db", "@DB");
  CASE(2, "FILE is empty", "import", "", "--db", "@DB");
  CASE(2, "no action given (new)", "kernel", "--dir", "@DIR");
  CASE(2, "unknown action 'old'", "kernel", "old", "k", "--dir", "@DIR");
  CASE(2, "new: no NAME given", "kernel", "new", "--dir", "@DIR");
  CASE(2, "'1k' is not a C identifier", "kernel", "new", "1k", "--dir", "@DIR");
  CASE(2, "'' is not a C identifier", "kernel", "new", "", "--dir", "@DIR");
  CASE(2, "is not a C identifier of at most 31", "kernel", "new", "@LONG", "--dir", "@DIR");
  CASE(2, "'a-b' is not a C identifier", "kernel", "new", "a-b", "--dir", "@DIR");
  CASE(2, "'reduce' is a built-in op's name", "kernel", "new", "reduce", "--dir", "@DIR");
  CASE(2, "--dir is empty", "kernel", "new", "k", "--dir", "");
  /* a required option missing */
  CASE(2, "no --op", "space");
  CASE(2, "no --op", "compile", "--arch", "sm_90");
  CASE(2, "no --op", "explain", "--size", "10", "--db", "@DB");
  CASE(2, "no --size", "explain", "--op", "reduce", "--db", "@DB");
  CASE(2, "no --svg", "report", "--db", "@DB");
  CASE(2, "no --svg", "report", "--svg", "", "--db", "@DB");
  tally("unknown options and operands");
  cr_assert_eq(failures, 0);
}

/* ---- Options that do not apply to the operation, or to what else was given -------------------- */

Test(badinput, options_that_do_not_apply) {
  CASE(2, "--radius does not apply to matadd", "space", "--op", "matadd", "--radius", "2");
  CASE(2, "--radius does not apply to add", "space", "--op", "add", "--radius", "1");
  CASE(2, "--order does not apply to filter", "space", "--op", "filter", "--order", "col");
  CASE(2, "--op and --kernel: one or the other", "space", "--op", "filter", "--kernel", "@DOC");
  CASE(2, "not with --op or --file", "compile", "--op", "filter", "--arch", "sm_90", "--kernel",
       "@DOC");
  CASE(2, "a kernel file has its own", "compile", "--kernel", "@DOC", "--dtype", "bf16");
  CASE(2, "a kernel file has its own", "space", "--kernel", "@DOC", "--radius", "2");
  CASE(2, "--kernel FILE is the op", "tune", "--op", "filter", "--kernel", "@DOC", "--size",
       "64x64", "--db", "@DB");
  CASE(2, "--seen tunes the recorded sizes", "tune", "--kernel", "@DOC", "--seen", "--size", "64x64",
       "--db", "@DB");
  CASE(2, "--kernel needs --size or --seen", "tune", "--kernel", "@DOC", "--db", "@DB");
  CASE(2, "--grid is the sizes", "tune", "--grid", "--op", "filter", "--size", "64x64", "--db",
       "@DB");
  CASE(2, "--grid is the sizes", "tune", "--grid", "--seen", "--db", "@DB");
  CASE(2, "--carry carries between the sizes tuned", "tune", "--carry", "--seen", "--db", "@DB");
  CASE(2, "--kernel FILE is the op", "bench", "--kernel", "@DOC", "--dtype", "bf16", "--size",
       "64x64", "--db", "@DB");
  CASE(2, "--kernel needs --size", "bench", "--kernel", "@DOC", "--db", "@DB");
  CASE(2, "--op and --kernel: one or the other", "explain", "--op", "add", "--kernel", "@DOC",
       "--size", "64", "--db", "@DB");
  CASE(2, "a kernel file has its own", "explain", "--kernel", "@DOC", "--size", "64", "--align",
       "8", "--db", "@DB");
  CASE(2, "no --size given", "explain", "--kernel", "@DOC", "--db", "@DB");
  CASE(2, "--border does not apply to reduce", "space", "--op", "reduce", "--border", "zero");
  CASE(2, "--radius does not apply to reduce", "explain", "--op", "reduce", "--size", "10",
       "--radius", "2", "--db", "@DB");
  CASE(2, "--border does not apply to matadd", "explain", "--op", "matadd", "--size", "8x8",
       "--border", "zero", "--db", "@DB");
  CASE(2, "--order does not apply to filter", "explain", "--op", "filter", "--size", "8x8",
       "--order", "col", "--db", "@DB");
  CASE(2, "--radius does not apply to matadd", "compile", "--op", "matadd", "--arch", "sm_90",
       "--radius", "2");
  CASE(2, "--border does not apply to add", "compile", "--op", "add", "--arch", "sm_90",
       "--border", "zero");
  CASE(2, "need --op", "compile", "--arch", "sm_90", "--file", "@DIR/k.cu", "--radius", "2");
  CASE(2, "--dtype needs --op", "compile", "--arch", "sm_90", "--file", "@DIR/k.cu", "--dtype", "f16");
  CASE(2, "--dtype does not apply", "tune", "--seen", "--dtype", "f32", "--db", "@DB");
  /* exhaustive measures every valid point, so a budget was ignored without a word */
  CASE(2, "--strategy exhaustive measures every valid point", "tune", "--strategy", "exhaustive",
       "--budget", "5", "--db", "@DB");
  CASE(2, "--strategy exhaustive measures every valid point", "tune", "--budget", "5",
       "--strategy", "exhaustive", "--op", "add", "--size", "1000", "--db", "@DB");
  CASE(2, "one type here", "space", "--op", "add", "--dtype", "f32,f16");
  CASE(2, "need --op", "compile", "--arch", "sm_90", "--file", "@DIR/k.cu", "--border", "zero");
  CASE(2, "--config needs --op", "compile", "--arch", "sm_90", "--file", "@DIR/k.cu", "--config",
       "seed");
  CASE(2, "--radius does not apply to matadd", "tune", "--op", "matadd", "--size", "8x8",
       "--radius", "2", "--db", "@DB");
  CASE(2, "--order does not apply to filter", "tune", "--op", "filter", "--size", "8x8", "--order",
       "col", "--db", "@DB");
  CASE(2, "apply to --size", "tune", "--op", "filter", "--radius", "2", "--db", "@DB");
  CASE(2, "apply to --size", "tune", "--op", "matadd", "--order", "col", "--db", "@DB");
  CASE(2, "apply to --size", "tune", "--radius", "2", "--db", "@DB");
  CASE(2, "--border needs one --op", "tune", "--border", "zero", "--db", "@DB");
  CASE(2, "--size needs one --op", "tune", "--size", "8x8", "--db", "@DB");
  CASE(2, "do not apply", "tune", "--seen", "--radius", "2", "--db", "@DB");
  CASE(2, "do not apply", "tune", "--seen", "--size", "10", "--op", "reduce", "--db", "@DB");
  CASE(2, "--radius does not apply to matadd", "bench", "--op", "matadd", "--size", "8x8",
       "--radius", "2", "--db", "@DB");
  CASE(2, "--radius applies to --size", "bench", "--op", "filter", "--radius", "2", "--db", "@DB");
  CASE(2, "--radius applies to --size", "bench", "--radius", "2", "--db", "@DB");
  CASE(2, "--size needs one --op", "bench", "--size", "8x8", "--db", "@DB");
  CASE(2, "unknown --op 'all'", "space", "--op", "all");
  CASE(2, "unknown --op 'all'", "explain", "--op", "all", "--size", "8", "--db", "@DB");
  CASE(2, "unknown --op 'all'", "show", "--op", "all", "--db", "@DB");
  tally("options that do not apply");
  cr_assert_eq(failures, 0);
}

/* ---- The command itself ----------------------------------------------------------------------- */

Test(badinput, the_command_line_before_the_command) {
  check_case((const char *const[]){NULL}, 2, NULL, USAGE_BLOCK); /* no command: the usage */
  CASE(2, "unknown command ''", "");
  CASE(2, "unknown command '999", "@LONG");
  CASE(2, "unknown command '--bogus'", "--bogus");
  CASE(2, "unknown command 'DB'", "DB");
  CASE(2, "help: unknown command 'nosuch'", "help", "nosuch");
  CASE(2, "help: unexpected argument 'extra'", "help", "db", "extra");
  CASE(2, "--help: unexpected argument 'extra'", "--help", "extra");
  CASE(2, "-h: unexpected argument", "-h", "db");
  CASE(2, "--version: unexpected argument", "--version", "x");
  tally("the command line before the command");
  cr_assert_eq(failures, 0);
}

/* ---- Paths: a directory, a device, a file of another kind, a missing directory, too long ------ */

/* The commands that take --db and need no GPU, each with a right command line before --db. A
 * command that needs a GPU (explain, tune, bench) says "no CUDA device" first on a machine
 * without one, and is left out here. */
static const struct {
  const char *args[6];
  int creates; /* writes: creates the file (and its directories) where it does not exist */
} db_users[] = {
    {{"db", "init"}, 1},      {{"db", "check"}, 0},           {{"show"}, 0},
    {{"export", "@DIR/w.json"}, 0}, {{"import", "@DOC"}, 1}, {{"report", "--svg", "@DIR/r.svg"}, 0},
};

/* Runs db_users[u]'s command line with --db path. */
static void db_case(size_t u, const char *path, int want, const char *needle) {
  const char *args[12];
  int n = 0;
  for (int k = 0; db_users[u].args[k] != NULL; k++) args[n++] = db_users[u].args[k];
  args[n++] = "--db";
  args[n++] = path;
  args[n] = NULL;
  check_case(args, want, needle, ONE_LINE);
}

Test(badinput, absurd_paths) {
  for (size_t u = 0; u < sizeof db_users / sizeof *db_users; u++) {
    db_case(u, "@DIR", 1, "is a directory");
    db_case(u, "/dev/null", 1, "not a regular file");
    db_case(u, "@DOC", 1, "not a database");
    db_case(u, "@LONG", 1, "too long");
    db_case(u, "", 2, "--db: empty path");
    /* by design, a writer creates the database and its directories; a reader creates nothing */
    if (db_users[u].creates)
      db_case(u, "@DIR/made/by/it.db", 0, NULL); /* (@MISSING stays missing for the rest) */
    else
      db_case(u, "@MISSING/x.db", 1, "no such file");
  }
  /* export's FILE, import's FILE */
  CASE(1, "is a directory, not a regular file", "export", "@DIR", "--db", "@DB");
  CASE(1, "is a device, not a regular file", "export", "/dev/null", "--db", "@DB");
  CASE(1, "cannot write", "export", "@MISSING/w.json", "--db", "@DB");
  CASE(1, "cannot write", "export", "@LONG", "--db", "@DB");
  CASE(1, "is the tuning database itself", "export", "@DB", "--db", "@DB");
  CASE(1, "is the tuning database itself", "export", "@DIR/./fab.db", "--db", "@DB");
  CASE(1, "cannot read", "import", "@DIR", "--db", "@DB");
  /* space's --kernel FILE: read, never written */
  CASE(1, "is a directory, not a regular file", "space", "--kernel", "@DIR");
  CASE(1, "is a device, not a regular file", "space", "--kernel", "/dev/null");
  CASE(1, "No such file", "space", "--kernel", "@MISSING/k.json");
  CASE(1, "the path is too long", "space", "--kernel", "@LONG");
  CASE(1, "is a directory, not a regular file", "compile", "--arch", "sm_90", "--kernel", "@DIR");
  CASE(1, "No such file", "compile", "--arch", "sm_90", "--kernel", "@MISSING/k.json");
  CASE(1, "is a directory", "tune", "--kernel", "@DIR", "--size", "64x64", "--db", "@DB");
  CASE(1, "is a device", "bench", "--kernel", "/dev/null", "--size", "64", "--db", "@DB");
  CASE(1, "is a directory", "export", "@DIR/w.json", "--kernel", "@DIR", "--db", "@DB");
  CASE(1, "No such file", "import", "@DOC", "--kernel", "@MISSING/k.json", "--db", "@DB");
  CASE(1, "is a device, not a regular file", "import", "/dev/null", "--db", "@DB");
  CASE(1, "cannot read", "import", "@MISSING/x.json", "--db", "@DB");
  CASE(1, "cannot read", "import", "@LONG", "--db", "@DB");
  CASE(1, "nothing imported", "import", "@DB", "--db", "@DB");
  /* report's --svg and --bench */
  CASE(1, "cannot write", "report", "--svg", "@DIR", "--db", "@DB");
  CASE(1, "cannot write", "report", "--svg", "@MISSING/r.svg", "--db", "@DB");
  CASE(1, "cannot write", "report", "--svg", "@LONG", "--db", "@DB");
  CASE(1, "is the tuning database itself", "report", "--svg", "@DB", "--db", "@DB");
  /* only a regular file or a new one is written: /dev/null too is refused */
  CASE(1, "is a device, not a regular file", "report", "--svg", "/dev/null", "--db", "@DB");
  CASE(1, "not a regular file", "report", "--svg", "@DIR/r.svg", "--bench", "@DIR", "--db", "@DB");
  CASE(1, "not a regular file", "report", "--svg", "@DIR/r.svg", "--bench", "/dev/null", "--db",
       "@DB");
  CASE(1, "cannot read", "report", "--svg", "@DIR/r.svg", "--bench", "@MISSING/b.json", "--db",
       "@DB");
  CASE(1, "cannot read", "report", "--svg", "@DIR/r.svg", "--bench", "@LONG", "--db", "@DB");
  CASE(1, "cannot read ''", "report", "--svg", "@DIR/r.svg", "--bench", "", "--db", "@DB");
  /* compile's --file and --output (one small compile each for --output) */
  CASE(1, "cannot read", "compile", "--arch", "sm_90", "--file", "@DIR");
  CASE(1, "cannot read", "compile", "--arch", "sm_90", "--file", "@MISSING/k.cu");
  CASE(1, "cannot read", "compile", "--arch", "sm_90", "--file", "@LONG");
  CASE(1, "cannot read ''", "compile", "--arch", "sm_90", "--file", "");
  CASE(1, "cannot write", "compile", "--op", "add", "--arch", "sm_90", "-o", "@DIR");
  CASE(1, "cannot write", "compile", "--op", "add", "--arch", "sm_90", "-o", "@MISSING/k.cubin");
  CASE(1, "cannot write", "compile", "--op", "add", "--arch", "sm_90", "-o", "@LONG");
  CASE(1, "cannot write ''", "compile", "--op", "add", "--arch", "sm_90", "-o", "");
  tally("absurd paths");
  cr_assert_eq(failures, 0);
}

/* A read-only directory: nothing can be created in it. Root writes there all the same, so the
 * test skips, saying so, where it runs as root. */
Test(badinput, paths_in_a_read_only_directory) {
  char probe[200];
  cr_assert_eq(chmod(ro_dir, 0555), 0);
  snprintf(probe, sizeof probe, "%s/probe", ro_dir);
  int fd = open(probe, O_WRONLY | O_CREAT, 0600);
  if (fd >= 0) {
    close(fd);
    remove(probe);
    cr_skip_test("running as root (uid %d): a read-only directory is writable, so its cases "
                 "cannot fail as they must", (int)getuid());
  }
  for (size_t u = 0; u < sizeof db_users / sizeof *db_users; u++)
    db_case(u, "@RO/x.db", 1, db_users[u].creates ? "" : "no such file");
  CASE(1, "cannot write", "export", "@RO/w.json", "--db", "@DB");
  CASE(1, "cannot write", "report", "--svg", "@RO/r.svg", "--db", "@DB");
  CASE(1, "cannot write", "compile", "--op", "add", "--arch", "sm_90", "-o", "@RO/k.cubin");
  tally("paths in a read-only directory");
  cr_assert_eq(failures, 0);
}

/* ---- Files that are not what they claim: FIFOs, devices, symbolic links --------------------- */

/* dir/name, in one of a few buffers that take turns. */
static const char *in_dir(const char *name) {
  static char buf[4][256];
  static int next;
  char *p = buf[next++ % 4];
  snprintf(p, sizeof buf[0], "%s/%s", dir, name);
  return p;
}

static void write_text(const char *name, const char *text) {
  FILE *f = fopen(in_dir(name), "w");
  cr_assert_not_null(f, "%s: %s", name, strerror(errno));
  fputs(text, f);
  cr_assert_eq(fclose(f), 0);
}

/* The scratch files of these cases: a FIFO and a device where files are read or written, links
 * to a file, to nothing, to a FIFO and to a directory, a kernel description whose source is a
 * FIFO, and documents for report --bench, right and wrong. */
static void make_files(void) {
  cr_assert_eq(mkfifo(in_dir("fifo"), 0600), 0, "mkfifo: %s", strerror(errno));
  cr_assert_eq(mkdir(in_dir("k"), 0755), 0);
  size_t len = 0;
  char *desc = dbtest_slurp(PM_SOURCE_DIR "/examples/kernels/matadd.json", &len);
  cr_assert_not_null(desc);
  write_text("k/matadd.json", desc);
  free(desc);
  cr_assert_eq(mkfifo(in_dir("k/matadd.cu"), 0600), 0); /* its "source" */
  write_text("target.txt", "keep\n");
  cr_assert_eq(symlink("target.txt", in_dir("link")), 0);
  cr_assert_eq(symlink("nowhere.txt", in_dir("dangling")), 0);
  cr_assert_eq(symlink("fifo", in_dir("fifolink")), 0);
  cr_assert_eq(symlink("k", in_dir("dirlink")), 0);
  write_text("bench.json", "{\"gpu\":\"G\",\"op\":\"matadd\",\"problem\":\"64x64 row-major\","
                           "\"tuned_gbps\":50,\"ceiling_gbps\":100}\n");
  cr_assert_eq(symlink("bench.json", in_dir("benchlink")), 0);
  write_text("nobench.json", "{\"gpu\":\"G\",\"op\":\"matadd\",\"problem\":\"64x64\"}\n");
  write_text("notobject.json", "[1, 2, 3]\n");
  write_text("half.json", "{\"gpu\":\"G\",\"op\":\"matadd\",\"problem\":\"64x64\",\"ceil");
  write_text("empty.json", "");
  write_text("blank.json", "\n\n  \n");
}

/* What these cases must leave as it was: the link's target, the FIFO, the links themselves, no
 * file where the dangling link points, and no temporary left in dir. */
static void files_unchanged(void) {
  size_t len = 0;
  char *t = dbtest_slurp(in_dir("target.txt"), &len);
  cr_expect(t != NULL && strcmp(t, "keep\n") == 0, "the link's target was written: %s",
            t ? t : "(gone)");
  free(t);
  struct stat st;
  cr_expect(lstat(in_dir("fifo"), &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
  cr_expect(lstat(in_dir("link"), &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced");
  cr_expect(lstat(in_dir("dangling"), &st) == 0 && S_ISLNK(st.st_mode), "a link was replaced");
  cr_expect(lstat(in_dir("nowhere.txt"), &st) != 0, "written through the dangling link");
  DIR *d = opendir(dir);
  cr_assert_not_null(d);
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    cr_expect(strstr(e->d_name, ".tmp.") == NULL, "a temporary left behind: %s", e->d_name);
  closedir(d);
}

/* Defect 4: a FIFO (or device, or directory) where pmtune reads or writes a file hung the command
 * (a FIFO that no one writes to blocks open and read); each is refused at once, naming what it
 * is. */
Test(badinput, fifos_and_devices_are_refused_at_once) {
  make_files();
  timeout_ms = 10000, fast_ms = 1000;
  const char *fifo = "is a FIFO, not a regular file", *dev = "is a device, not a regular file";
  /* read */
  CASE(1, fifo, "space", "--kernel", "@DIR/k/matadd.json"); /* its source a FIFO */
  CASE(1, fifo, "compile", "--arch", "sm_90", "--kernel", "@DIR/k/matadd.json");
  CASE(1, fifo, "tune", "--kernel", "@DIR/k/matadd.json", "--size", "64x64", "--db", "@DB");
  CASE(1, fifo, "space", "--kernel", "@DIR/fifo");
  CASE(1, fifo, "space", "--kernel", "@DIR/fifolink");
  CASE(1, fifo, "bench", "--kernel", "@DIR/fifo", "--size", "64", "--db", "@DB");
  CASE(1, fifo, "export", "@DIR/w.json", "--kernel", "@DIR/fifo", "--db", "@DB");
  CASE(1, fifo, "import", "@DOC", "--kernel", "@DIR/fifo", "--db", "@DB");
  CASE(1, fifo, "report", "--svg", "@DIR/r.svg", "--kernel", "@DIR/fifo", "--db", "@DB");
  CASE(1, fifo, "import", "@DIR/fifo", "--db", "@DB");
  CASE(1, fifo, "import", "@DIR/fifolink", "--db", "@DB");
  CASE(1, dev, "import", "/dev/zero", "--db", "@DB");
  CASE(1, fifo, "compile", "--arch", "sm_90", "--file", "@DIR/fifo");
  CASE(1, dev, "compile", "--arch", "sm_90", "--file", "/dev/zero");
  CASE(1, fifo, "report", "--svg", "@DIR/r.svg", "--bench", "@DIR/fifo", "--db", "@DB");
  CASE(1, fifo, "report", "--svg", "@DIR/r.svg", "--bench", "@DIR/fifolink", "--db", "@DB");
  CASE(1, dev, "report", "--svg", "@DIR/r.svg", "--bench", "/dev/zero", "--db", "@DB");
  /* written */
  CASE(1, fifo, "compile", "--op", "add", "--arch", "sm_90", "-o", "@DIR/fifo");
  CASE(1, dev, "compile", "--op", "add", "--arch", "sm_90", "-o", "/dev/null");
  CASE(1, fifo, "report", "--svg", "@DIR/fifo", "--db", "@DB");
  CASE(1, fifo, "export", "@DIR/fifo", "--db", "@DB");
  /* --db: refused before SQLite opens it */
  for (size_t u = 0; u < sizeof db_users / sizeof *db_users; u++) {
    db_case(u, "@DIR/fifo", 1, "--db");
    db_case(u, "@DIR/fifo", 1, fifo);
    db_case(u, "/dev/zero", 1, dev);
    db_case(u, "@DIR/dirlink", 1, "is a directory, not a regular file");
  }
  /* '-' is standard input where a command documents it, whatever it is: /dev/null here (a pipe
   * in test_cli_db's export | import) */
  CASE(1, "not valid JSON", "import", "-", "--db", "@DB");
  tally("FIFOs, devices and directories");
  files_unchanged();
  cr_assert_eq(failures, 0);
}

/* Defect 5: report --svg and compile -o wrote through a symbolic link, replacing its target; a
 * link (to a file, to nothing, to a directory) is refused as export refuses it, and the link and
 * its target are left as they were. */
Test(badinput, writes_never_go_through_a_symlink) {
  make_files();
  timeout_ms = 10000, fast_ms = 1000;
  const char *link = "is a symbolic link, not a regular file";
  static const char *const links[] = {"@DIR/link", "@DIR/dangling", "@DIR/dirlink",
                                      "@DIR/fifolink"};
  for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
    CASE(1, link, "report", "--svg", links[i], "--db", "@DB");
    CASE(1, link, "compile", "--op", "add", "--arch", "sm_90", "-o", links[i]);
    CASE(1, link, "export", links[i], "--db", "@DB");
  }
  tally("symbolic links written");
  files_unchanged();
  /* a regular file is replaced whole and keeps its permissions; a new one is made */
  fast_ms = 0;
  write_text("old.svg", "old\n");
  cr_assert_eq(chmod(in_dir("old.svg"), 0640), 0);
  CASE(0, NULL, "report", "--svg", "@DIR/old.svg", "--db", "@DB");
  CASE(0, NULL, "report", "--svg", "@DIR/new.svg", "--db", "@DB");
  CASE(0, NULL, "compile", "--op", "add", "--arch", "sm_90", "-o", "@DIR/new.cubin");
  CASE(0, NULL, "export", "@DIR/target.json", "--db", "@DB");
  size_t len = 0;
  char *svg = dbtest_slurp(in_dir("old.svg"), &len);
  cr_expect(svg != NULL && strncmp(svg, "<svg", 4) == 0, "old.svg was not replaced");
  free(svg);
  struct stat st;
  cr_expect(stat(in_dir("old.svg"), &st) == 0 && (st.st_mode & 0777) == 0640,
            "old.svg's mode is now %o, not 640", (unsigned)(st.st_mode & 0777));
  cr_expect(stat(in_dir("new.cubin"), &st) == 0 && st.st_size > 0, "no new.cubin");
  files_unchanged();
  cr_assert_eq(failures, 0);
}

/* Defect 6: report --bench read anything (an SQLite file, /proc/self/maps) as a bench document
 * with no ceilings, status 0 and no word; what is not the output of `pmtune bench --json` is
 * refused, saying why. */
Test(badinput, report_bench_takes_only_bench_json) {
  make_files();
  const char *not = "not the output of 'pmtune bench --json'";
  CASE(1, not, "report", "--svg", "@DIR/r.svg", "--bench", "@DB", "--db", "@DB");
  CASE(1, "a binary file", "report", "--svg", "@DIR/r.svg", "--bench", "@DB", "--db", "@DB");
  CASE(1, not, "report", "--svg", "@DIR/r.svg", "--bench", "/proc/self/maps", "--db", "@DB");
  CASE(1, not, "report", "--svg", "@DIR/r.svg", "--bench", "@DOC", "--db", "@DB");
  CASE(1, "no \"ceiling_gbps\" number", "report", "--svg", "@DIR/r.svg", "--bench",
       "@DIR/nobench.json", "--db", "@DB");
  CASE(1, "not a JSON object", "report", "--svg", "@DIR/r.svg", "--bench",
       "@DIR/notobject.json", "--db", "@DB");
  CASE(1, "line 1: not JSON", "report", "--svg", "@DIR/r.svg", "--bench", "@DIR/half.json",
       "--db", "@DB");
  CASE(1, "empty", "report", "--svg", "@DIR/r.svg", "--bench", "@DIR/empty.json", "--db", "@DB");
  CASE(1, "empty", "report", "--svg", "@DIR/r.svg", "--bench", "@DIR/blank.json", "--db", "@DB");
  CASE(1, not, "report", "--svg", "@DIR/r.svg", "--bench", PM_SOURCE_DIR "/README.md", "--db",
       "@DB");
  /* what bench --json writes is read, through a link too */
  CASE(0, NULL, "report", "--svg", "@DIR/r.svg", "--bench", "@DIR/bench.json", "--db", "@DB");
  CASE(0, NULL, "report", "--svg", "@DIR/r.svg", "--bench", "@DIR/benchlink", "--db", "@DB");
  CASE(0, NULL, "report", "--svg", "@DIR/r.svg", "--bench",
       PM_SOURCE_DIR "/bench/results/2026-11-22-h100/bench-exhaustive.json", "--db", "@DB");
  tally("report --bench documents");
  struct stat st;
  cr_expect(stat(in_dir("r.svg"), &st) == 0, "no picture drawn");
  cr_assert_eq(failures, 0);
}

/* Item 12: internal tags naming pmtune's source ("[pmdb.c:157: PRAGMA application_id]") do not
 * reach the user; PMTUNE_DEBUG=1 keeps them. */
Test(badinput, messages_carry_no_internal_source_tags) {
  forbidden = ".c:";
  for (size_t u = 0; u < sizeof db_users / sizeof *db_users; u++)
    db_case(u, "@DOC", 1, "not a database");
  CASE(1, "not a database", "import", "@DOC", "--db", "@DOC");
  tally("messages without source tags");
  forbidden = NULL;
  setenv("PMTUNE_DEBUG", "1", 1);
  CASE(1, "[pmdb.c:", "db", "check", "--db", "@DOC");
  unsetenv("PMTUNE_DEBUG");
  cr_assert_eq(failures, 0);
}

/* ---- Hostile kernel descriptions ------------------------------------------------------------ */

/* Writes the matadd example with `from` replaced by `to` (once) as @DIR/kd/NAME, beside a copy of
 * its source; returns the placeholder path ("@DIR/kd/NAME"), static. */
static const char *hostile(const char *name, const char *from, const char *to) {
  static char at[128];
  char path[256], cmd[512];
  snprintf(cmd, sizeof cmd, "mkdir -p %s/kd && cp %s/examples/kernels/matadd.cu %s/kd/", dir,
           PM_SOURCE_DIR, dir);
  cr_assert_eq(system(cmd), 0);
  size_t len = 0;
  char *text = dbtest_slurp(PM_SOURCE_DIR "/examples/kernels/matadd.json", &len);
  cr_assert_not_null(text);
  char *hit = strstr(text, from);
  cr_assert_not_null(hit, "'%s' not in the example", from);
  snprintf(path, sizeof path, "%s/kd/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  fprintf(f, "%.*s%s%s", (int)(hit - text), text, to, hit + strlen(from));
  fclose(f);
  free(text);
  snprintf(at, sizeof at, "@DIR/kd/%s", name);
  return at;
}

/* Each command that reads --kernel FILE, on a right command line otherwise. */
static const char *const kernel_commands[][7] = {
    {"space"},
    {"compile", "--arch", "sm_90"},
    {"tune", "--size", "64x64", "--db", "@DB"},
    {"bench", "--size", "64x64", "--db", "@DB"},
    {"explain", "--size", "64x64", "--db", "@DB"},
    {"export", "@DIR/w.json", "--db", "@DB"},
    {"import", "@DOC", "--db", "@DB"},
    {"report", "--svg", "@DIR/r.svg", "--db", "@DB"},
};

/* Every command given the description at `at`: status 1, one line holding needle, within a
 * second (the description is refused when it is read, before anything runs). */
static void hostile_everywhere(const char *at, const char *needle) {
  for (size_t i = 0; i < sizeof kernel_commands / sizeof *kernel_commands; i++) {
    const char *args[12] = {NULL};
    int n = 0;
    for (; n < 7 && kernel_commands[i][n] != NULL; n++) args[n] = kernel_commands[i][n];
    args[n++] = "--kernel";
    args[n++] = at;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    check_case(args, 1, needle, ONE_LINE);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (took >= 1.0) failures++;
    cr_expect_lt(took, 1.0, "pmtune %s --kernel %s: %.2f s to refuse it", args[0], at, took);
  }
}

#define BYTES "\"3 * 4 * :rows * :cols\""
#define CONSTRAINT "\":BLOCK * :ITEMS * :VEC <= 8192\""
#define GRID "\"(:rows * :cols + :BLOCK * :ITEMS * :VEC - 1) / (:BLOCK * :ITEMS * :VEC)\""

Test(badinput, hostile_kernel_descriptions) {
  /* an expression that would run forever, take gigabytes, or escape its statement */
  hostile_everywhere(hostile("forever.json", BYTES,
                             "\"(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
                             "SELECT max(x) FROM c)\""),
                     "bytes: ");
  hostile_everywhere(hostile("printf.json", BYTES, "\"length(printf('%.*c', 999999999, 'x'))\""),
                     "bytes: ");
  hostile_everywhere(hostile("zeroblob.json", BYTES, "\"length(hex(zeroblob(499999999)))\""),
                     "bytes: ");
  hostile_everywhere(hostile("randomblob.json", CONSTRAINT, "\"randomblob(999999999) IS NOT NULL\""),
                     "constraints[0]: ");
  hostile_everywhere(hostile("comment.json", GRID, "\"(:rows * :cols + 255) / 256) --\""),
                     "grid[0]: ");
  hostile_everywhere(hostile("two.json", GRID, "\"1), (2048\""), "grid[0]: ");
  /* what the description holds is what is read */
  hostile_everywhere(hostile("twice.json", "\"name\": \"my_matadd\"",
                             "\"name\": \"my_matadd\", \"name\": \"other\""),
                     "name: given twice");
  hostile_everywhere(hostile("seed_twice.json", "\"BLOCK\": 256, \"VEC\": 1",
                             "\"BLOCK\": 256, \"VEC\": 1, \"VEC\": 2"),
                     "seed.VEC: given twice");
  hostile_everywhere(hostile("nul.json", "\"entry\": \"my_matadd\"",
                             "\"entry\": \"my_matadd\\u0000junk\""),
                     "entry: a string holds \\u0000");
  hostile_everywhere(hostile("passwd.json", "\"source\": \"matadd.cu\"", "\"source\": \"/etc/passwd\""),
                     "source: ");
  hostile_everywhere(hostile("up.json", "\"source\": \"matadd.cu\"",
                             "\"source\": \"../../../etc/passwd\""),
                     "is outside the description's folder");
  /* messages: one line with the value's newline escaped; a file too large names the limit */
  hostile_everywhere(hostile("newline.json", "\"dir\": \"out\"", "\"dir\": \"out\\nsecond line\""),
                     "'out\\nsecond line'");
  const char *big = hostile("big.json", "\"summary\": \"C", "\"summary\": \"C");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "head -c 104857600 /dev/zero | tr '\\0' ' ' >> %s/kd/big.json", dir);
  cr_assert_eq(system(cmd), 0);
  hostile_everywhere(big, "big.json: larger than 1 MiB, the most a kernel description may be");
  tally("hostile kernel descriptions");
  cr_assert_eq(failures, 0);
}
