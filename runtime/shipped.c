/* shipped.c: the results pmtune ships (issue 17: tuned out of the box): `pmtune export` documents
 * of the GPU models it was tuned on, installed with the library; those of this GPU's model are
 * read into a database in memory on first need, and the decision chain consults them after the
 * user's own database and before the built-in default. */
#define _GNU_SOURCE /* dladdr */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime.h"

#define MAX_FILE (64u << 20) /* a shipped document larger than this is not read */

static int results_dir(char *out, size_t cap);

static int is_dir(const char *p) {
  struct stat s;
  return stat(p, &s) == 0 && S_ISDIR(s.st_mode);
}

/* The folder of the shipped results, into out; 0 where there is none. $PMTUNE_RESULTS names it
 * ("none" or empty: none); else share/pmtune/results beside the folder of the file this code is
 * in (libpmtune.so in PREFIX/lib, or a program linked with libpmtune.a in PREFIX/bin: wherever
 * `cmake --install --prefix` put them), or in that folder (the build folder, where the build
 * copies them beside build/libpmtune.so; build/tools/pmtune finds them one up); else the one of
 * the prefix the build was configured with. */
int pm__shipped_dir(char *out, size_t cap) {
  return results_dir(out, cap);
}

static int results_dir(char *out, size_t cap) {
  const char *env = getenv("PMTUNE_RESULTS");
  if (env != NULL) return env[0] != '\0' && strcmp(env, "none") != 0 &&
                          snprintf(out, cap, "%s", env) < (int)cap && is_dir(out);
  Dl_info info;
  char self[PATH_MAX];
  if (dladdr((void *)results_dir, &info) != 0 && info.dli_fname != NULL &&
      realpath(info.dli_fname, self) != NULL) {
    char *slash = strrchr(self, '/');
    if (slash != NULL) {
      *slash = '\0';
      if (snprintf(out, cap, "%s/../share/pmtune/results", self) < (int)cap && is_dir(out))
        return 1;
      if (snprintf(out, cap, "%s/share/pmtune/results", self) < (int)cap && is_dir(out))
        return 1;
    }
  }
#ifdef PM_RESULTS_DIR
  return snprintf(out, cap, "%s", PM_RESULTS_DIR) < (int)cap && is_dir(out);
#else
  return 0;
#endif
}

/* The whole of file `path`, NUL-terminated (heap), or NULL. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  struct stat s;
  if (f != NULL && fstat(fileno(f), &s) == 0 && S_ISREG(s.st_mode) && s.st_size <= MAX_FILE &&
      (buf = pm__malloc((size_t)s.st_size + 1)) != NULL) {
    *len = fread(buf, 1, (size_t)s.st_size, f);
    buf[*len] = '\0';
  }
  if (f != NULL) fclose(f);
  return buf;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static int json_file(const struct dirent *e) {
  size_t n = strlen(e->d_name);
  return n > 5 && strcmp(e->d_name + n - 5, ".json") == 0 && e->d_name[0] != '.';
}

/* Imports, in order of name, the documents of dir that name this GPU's model into a new database
 * in memory; NULL where none does (or none could be read: said with pm__notice). A GPU of the
 * model whose memory size reads otherwise (ECC on or off) is still of the model: the rows are
 * made to say this one's, in the copy in memory. */
static pm__db *load(pm_ctx *c, const char *dir) {
  struct dirent **names = NULL;
  int n = scandir(dir, &names, json_file, by_name);
  pm__db *db = NULL;
  char needle[sizeof c->dev.name + 16], path[PATH_MAX];
  snprintf(needle, sizeof needle, "\"name\":\"%s\"", c->dev.name);
  for (int i = 0; i < n; i++) {
    size_t len = 0;
    char *doc = NULL;
    if (snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name) < (int)sizeof path &&
        (doc = slurp(path, &len)) != NULL && strstr(doc, needle) != NULL) {
      pm__db_import_stats st;
      if (db == NULL && pm__db_open(c, NULL, PM__DB_MEMORY, pm__ops_db(), &db) != PM_OK) {
        pm__notice(c, "shipped results: %s", pm_errmsg(c));
        db = NULL;
      } else if (pm__db_import(db, doc, len, &st) != PM_OK) {
        pm__notice(c, "shipped results %s: %s", path, pm_errmsg(c));
      }
    }
    free(doc);
    free(names[i]);
  }
  free(names);
  if (db != NULL && pm__db_gpu_adopt_memory(db, &c->dev) != PM_OK)
    pm__notice(c, "shipped results: %s", pm_errmsg(c));
  return db;
}

const pm__db_known *pm__shipped_known(pm_ctx *c, const pm__op *op) {
  pm__serve *s = c->serve;
  if (!s->shipped_tried) {
    char dir[PATH_MAX];
    s->shipped_tried = 1;
    if (results_dir(dir, sizeof dir)) s->shipped = load(c, dir);
  }
  return pm__known_get(c, &s->shipped_known, s->shipped, op, "the shipped results are not used");
}

void pm__shipped_free(pm__serve *s) {
  pm__known_forget(&s->shipped_known);
  pm__db_close(s->shipped);
  s->shipped = NULL;
  s->shipped_tried = 0;
}
