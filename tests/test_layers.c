/* test_layers.c: rules on the source tree, with the file and line that breaks one: the layers'
 * includes point one way (ARCHITECTURE.md): core <- db <- tuner <- runtime <- tools, include/ for
 * all, and db/ includes no CUDA header (the build enforces the same with each layer's include
 * path); their calls too, read from the built objects with nm: no layer uses a symbol that a
 * layer above it defines; no SQL is built from strings: every value reaches SQLite as a bound
 * parameter; and no shell runs anything: another program is started with an argument vector
 * (tools/subprocess.c). */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *const layers[] = {"core", "db", "tuner", "runtime", "tools", NULL};

/* Whether file `name` exists in include/ or in one of the layers 0..upto. */
static int visible(const char *name, int upto) {
  char path[1024];
  snprintf(path, sizeof path, "%s/include/%s", PM_SOURCE_DIR, name);
  if (access(path, F_OK) == 0) return 1;
  for (int i = 0; i <= upto; i++) {
    snprintf(path, sizeof path, "%s/%s/%s", PM_SOURCE_DIR, layers[i], name);
    if (access(path, F_OK) == 0) return 1;
  }
  return 0;
}

/* The layer that holds file `name`, or -1 (a system header, a generated file). */
static int layer_of(const char *name) {
  char path[1024];
  for (int i = 0; layers[i] != NULL; i++) {
    snprintf(path, sizeof path, "%s/%s/%s", PM_SOURCE_DIR, layers[i], name);
    if (access(path, F_OK) == 0) return i;
  }
  return -1;
}

/* Why file (of layer `self`) including `name` (quoted, or <angled>) shows SQLite above db/, or
 * NULL: only db/'s internal.h includes <sqlite3.h> among db/'s headers, and no layer above
 * includes internal.h (the tuner's kernel files use SQLite themselves, as their evaluator, and
 * include <sqlite3.h> on their own). */
static const char *sqlite_shown(int self, const char *file, const char *name, int angled) {
  int db = 1, header = strlen(file) > 2 && strcmp(file + strlen(file) - 2, ".h") == 0;
  if (angled && self == db && header && strcmp(name, "sqlite3.h") == 0 &&
      strcmp(file, "internal.h") != 0)
    return "a header of db/ other than internal.h includes <sqlite3.h>: pmdb.h names no SQLite "
           "type";
  if (!angled && self > db && strcmp(name, "internal.h") == 0 && layer_of(name) == db)
    return "includes db's internal.h: the layers above see pmdb.h only";
  return NULL;
}

/* Checks every #include of one source file of layer `self`; returns how many it checked. */
static int check_file(int self, const char *file) {
  char path[1024], line[1024];
  snprintf(path, sizeof path, "%s/%s/%s", PM_SOURCE_DIR, layers[self], file);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  int n = 0;
  for (int no = 1; fgets(line, sizeof line, f) != NULL; no++) {
    char name[256];
    if (sscanf(line, " # include \"%255[^\"]\"", name) == 1) {
      int at = layer_of(name);
      cr_expect(visible(name, self), "%s/%s:%d includes \"%s\", of %s: a layer above %s",
                layers[self], file, no, name, at >= 0 ? layers[at] : "no layer", layers[self]);
      cr_expect(strcmp(layers[self], "db") != 0 || strcmp(name, "gpu.h") != 0,
                "db/%s:%d includes gpu.h: the database layer has no CUDA header", file, no);
      const char *why = sqlite_shown(self, file, name, 0);
      cr_expect_null(why, "%s/%s:%d: %s", layers[self], file, no, why);
      n++;
    }
    if (sscanf(line, " # include <%255[^>]>", name) == 1) {
      const char *why = sqlite_shown(self, file, name, 1);
      cr_expect_null(why, "%s/%s:%d: %s", layers[self], file, no, why);
    }
    if (strcmp(layers[self], "db") == 0 && sscanf(line, " # include <%255[^>]>", name) == 1)
      cr_expect(strncmp(name, "cuda", 4) != 0 && strncmp(name, "nvrtc", 5) != 0,
                "db/%s:%d includes <%s>: the database layer has no CUDA header", file, no, name);
  }
  fclose(f);
  return n;
}

/* Calls check(layer, file) for every .c and .h file of every layer; returns the sum of what the
 * calls return, and *files the number of files. */
static int for_each_source(int (*check)(int layer, const char *file), int *files) {
  int sum = 0;
  *files = 0;
  for (int i = 0; layers[i] != NULL; i++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", PM_SOURCE_DIR, layers[i]);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      size_t len = strlen(e->d_name);
      if (len < 3 || (strcmp(e->d_name + len - 2, ".c") != 0 && strcmp(e->d_name + len - 2, ".h") != 0))
        continue;
      sum += check(i, e->d_name);
      (*files)++;
    }
    closedir(d);
  }
  return sum;
}

Test(layers, every_include_points_down) {
  int files = 0, includes = for_each_source(check_file, &files);
  cr_assert_gt(files, 20, "only %d source files found under %s", files, PM_SOURCE_DIR);
  cr_assert_gt(includes, 20);
}

Test(layers, a_file_that_includes_upward_is_caught) {
  /* the check itself: tuner/tune.h seen from core/ must not be visible */
  cr_assert_not(visible("tune.h", 0), "core sees the tuner's header");
  cr_assert(visible("tune.h", 2));
  cr_assert(visible("pmtune.h", 0), "include/ is everyone's");
  cr_assert_not(visible("serve.h", 2), "the tuner sees the runtime's header");
}

Test(layers, sqlite_shown_above_db_is_caught) {
  cr_assert_not_null(sqlite_shown(1, "pmdb.h", "sqlite3.h", 1));
  cr_assert_not_null(sqlite_shown(3, "serve.c", "internal.h", 0));
  cr_assert_not_null(sqlite_shown(4, "cmd_show.c", "internal.h", 0));
  cr_assert_null(sqlite_shown(1, "internal.h", "sqlite3.h", 1));
  cr_assert_null(sqlite_shown(1, "rows.c", "internal.h", 0));
  cr_assert_null(sqlite_shown(2, "kernel_file_internal.h", "sqlite3.h", 1));
}

/* ---- SQL only through bound parameters ------------------------------------------------------ */

/* Why line builds SQL from strings, or NULL: SQLite's formatting functions, or a printf-family
 * call whose format holds an SQL statement's keyword (a statement with %s or %d in it). */
static const char *builds_sql(const char *line) {
  static const char *const formatters[] = {"sqlite3_mprintf", "sqlite3_vmprintf",
                                           "sqlite3_snprintf", "sqlite3_str_appendf", NULL};
  static const char *const printers[] = {"printf(", "asprintf(", NULL};
  static const char *const keywords[] = {"SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ",
                                         "DROP ",   "PRAGMA ", "ALTER ",  "REPLACE ", NULL};
  for (int i = 0; formatters[i] != NULL; i++)
    if (strstr(line, formatters[i]) != NULL) return formatters[i];
  for (int i = 0; printers[i] != NULL; i++) {
    const char *call = strstr(line, printers[i]);
    const char *fmt = call != NULL ? strchr(call, '"') : NULL;
    for (int k = 0; fmt != NULL && keywords[k] != NULL; k++) {
      const char *kw = strstr(fmt, keywords[k]);
      if (kw != NULL && strchr(fmt, '%') != NULL) return "a formatted SQL statement";
    }
  }
  return NULL;
}

/* The one line that makes SQL from text by design: a kernel description's expression,
 * compiled alone in an empty database in memory (one statement, parsed whole, under an authorizer
 * and a progress bound), its :NAMEs bound. */
static const struct {
  const char *file, *text;
} sql_from_text = {"kernel_expr.c", "snprintf(sql, len, \"SELECT (%s\\n)\", text);"};

/* Expects no line of layer's file to be one `finds` names (it returns why, or NULL), saying
 * where and `advice`; returns 0. */
static int check_lines(int layer, const char *file, const char *(*finds)(const char *line),
                       const char *advice) {
  char path[2048], line[4096];
  snprintf(path, sizeof path, "%s/%s/%s", PM_SOURCE_DIR, layers[layer], file);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  for (int no = 1; fgets(line, sizeof line, f) != NULL; no++) {
    const char *why = finds(line);
    if (finds == builds_sql && strcmp(file, sql_from_text.file) == 0 &&
        strstr(line, sql_from_text.text) != NULL)
      why = NULL;
    cr_expect_null(why, "%s/%s:%d: %s: %s", layers[layer], file, no, why, advice);
  }
  fclose(f);
  return 0;
}

static int check_sql(int layer, const char *file) {
  return check_lines(layer, file, builds_sql, "builds SQL from strings: bind the values instead");
}

Test(layers, no_sql_is_built_from_strings) {
  int files = 0;
  for_each_source(check_sql, &files);
  cr_assert_gt(files, 20);
}

Test(layers, sql_built_from_strings_is_caught) {
  cr_assert_not_null(builds_sql("  snprintf(sql, sizeof sql, \"SELECT * FROM gpu WHERE uuid = '%s'\", u);"));
  cr_assert_not_null(builds_sql("  char *q = sqlite3_mprintf(\"DELETE FROM run WHERE id = %lld\", id);"));
  cr_assert_null(builds_sql("  PM__SQLITE(db, sqlite3_prepare_v2(h, \"SELECT id FROM gpu WHERE uuid = ?1\", -1, &st, NULL));"));
}

/* ---- Calls go down: the symbols of the built objects ---- */

enum { MAXSYMS = 8192 };

/* A symbol one layer's object defines or uses. */
typedef struct {
  char name[128], object[256];
  int layer, defined;
} sym;

static sym syms[MAXSYMS];
static int nsyms;

/* Adds what `nm -P obj` says obj (of layer) defines and uses. */
static void read_object(int layer, const char *obj) {
  int fd[2];
  cr_assert_eq(pipe(fd), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  char *argv[] = {(char *)PM_NM, (char *)"-P", (char *)obj, NULL};
  pid_t pid;
  cr_assert_eq(posix_spawn(&pid, PM_NM, &fa, NULL, argv, environ), 0, "%s %s", PM_NM, obj);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  FILE *f = fdopen(fd[0], "r");
  char line[512], name[256], type[8];
  while (fgets(line, sizeof line, f) != NULL) {
    /* POSIX: "name type [value size]"; upper case: global; U: used, not defined here */
    if (sscanf(line, "%255s %7s", name, type) != 2 || strlen(name) >= sizeof syms[0].name ||
        !isupper((unsigned char)type[0]) || nsyms == MAXSYMS)
      continue;
    sym *s = &syms[nsyms++];
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->object, sizeof s->object, "%s", strrchr(obj, '/') ? strrchr(obj, '/') + 1 : obj);
    s->layer = layer, s->defined = type[0] != 'U';
  }
  fclose(f);
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s -P %s failed", PM_NM, obj);
}

/* How many symbols one layer uses that a layer above defines, each said with the object. */
static int upward_calls(const sym *all, int n, int report) {
  int found = 0;
  for (int i = 0; i < n; i++) {
    if (all[i].defined) continue;
    for (int j = 0; j < n; j++)
      if (all[j].defined && all[j].layer > all[i].layer && strcmp(all[i].name, all[j].name) == 0) {
        if (report)
          cr_log_error("%s (%s) uses %s, which %s (%s) defines: a call upward", all[i].object,
                       layers[all[i].layer], all[i].name, all[j].object, layers[all[j].layer]);
        found++;
        break;
      }
  }
  return found;
}

Test(layers, every_call_points_down) {
  FILE *f = fopen(PM_LAYER_OBJECTS, "r");
  cr_assert_not_null(f, "%s (written by CMakeLists.txt)", PM_LAYER_OBJECTS);
  static char line[1 << 16];
  int objects = 0, seen_layers = 0;
  nsyms = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    char *save = NULL, *word = strtok_r(line, " \n", &save);
    int layer = -1;
    for (int i = 0; word != NULL && layers[i] != NULL; i++)
      if (strcmp(word, layers[i]) == 0) layer = i;
    cr_assert_geq(layer, 0, "%s: no layer named %s", PM_LAYER_OBJECTS, word ? word : "");
    seen_layers++;
    while ((word = strtok_r(NULL, " \n", &save)) != NULL) {
      read_object(layer, word);
      objects++;
    }
  }
  fclose(f);
  cr_assert_eq(seen_layers, 4, "core, db, tuner and runtime");
  cr_assert_gt(objects, 20);
  cr_assert_lt(nsyms, MAXSYMS, "more symbols than the test keeps");
  cr_assert_eq(upward_calls(syms, nsyms, 1), 0, "calls upward (above)");
}

Test(layers, a_call_upward_is_caught) {
  sym t[] = {{"pm_version", "pmdb.c.o", 1, 0},     {"pm_version", "context.c.o", 3, 1},
             {"pm__seterr", "pmdb.c.o", 1, 0},     {"pm__seterr", "error.c.o", 0, 1},
             {"pm__db_open", "serve.c.o", 3, 0},   {"pm__db_open", "pmdb.c.o", 1, 1}};
  cr_assert_eq(upward_calls(t, 6, 0), 1); /* db's use of runtime's pm_version alone */
  t[1].layer = 0;                           /* defined in core: a call down */
  cr_assert_eq(upward_calls(t, 6, 0), 0);
}

/* ---- No shell ------------------------------------------------------------------------------- */

/* Why line runs a shell or searches $PATH for a program, or NULL. */
static const char *runs_shell(const char *line) {
  static const char *const calls[] = {"popen(",   "system(", "execl(",  "execlp(",
                                      "execle(",  "execvp(", "execvpe(", "posix_spawnp(",
                                      "/bin/sh",  NULL};
  for (int i = 0; calls[i] != NULL; i++) {
    const char *at = strstr(line, calls[i]);
    /* a call, not a longer name ending so (my_system() is fine) */
    if (at != NULL && (at == line || !(isalnum((unsigned char)at[-1]) || at[-1] == '_')))
      return calls[i];
  }
  return NULL;
}

static int check_shell(int layer, const char *file) {
  return check_lines(layer, file, runs_shell,
                     "runs a shell or searches $PATH: use cli_spawn_read (tools/subprocess.h), "
                     "an argument vector");
}

Test(layers, no_shell_runs_anything) {
  int files = 0;
  for_each_source(check_shell, &files);
  cr_assert_gt(files, 20);
}

Test(layers, a_shell_is_caught) {
  cr_assert_not_null(runs_shell("  FILE *p = popen(cmd, \"r\");"));
  cr_assert_not_null(runs_shell("  if (system(cmd) != 0)"));
  cr_assert_not_null(runs_shell("  execvp(argv[0], argv);"));
  cr_assert_null(runs_shell("  rc = posix_spawn(&pid, path, &fa, NULL, argv, environ);"));
  cr_assert_null(runs_shell("  int rc = file_system(x);"));
}
