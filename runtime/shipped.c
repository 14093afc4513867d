/* shipped.c: the results pmtune ships (tuned out of the box): `pmtune export` documents
 * of the GPU models it was tuned on, installed with the library; those of this GPU's model, and
 * of the nearest other model of its architecture for what this model's lack (an H200
 * served from an H100's), are read into a database in memory on first need, and the decision
 * chain consults them beside the user's own database, before the built-in default. */
#define _GNU_SOURCE /* dladdr */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"

#define MAX_FILE (256u << 20) /* a shipped document larger than this (inflated) is not read */

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
  ssize_t n;
  /* the library's file; in a program linked with libpmtune.a, dladdr names the program as it was
   * started (argv[0]: a bare name where PATH found it), so the kernel's link to it serves */
  int found = dladdr((void *)results_dir, &info) != 0 && info.dli_fname != NULL &&
              strchr(info.dli_fname, '/') != NULL && realpath(info.dli_fname, self) != NULL;
  if (!found && (n = readlink("/proc/self/exe", self, sizeof self - 1)) > 0)
    self[n] = '\0', found = 1;
  if (found) {
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

/* The whole of document `path`, NUL-terminated (heap), or NULL: a regular file of at most MAX_FILE
 * bytes (pm__read_file: a FIFO or device put among the documents is passed over, never waited
 * on), inflated where it is gzip (results/ keeps them so), again to at most MAX_FILE. */
static char *slurp(const char *path, size_t *len) {
  char *text = pm__read_file(path, MAX_FILE, len);
  if (text == NULL || pm__gunzip(&text, len, MAX_FILE) == 0) return text;
  free(text);
  return NULL;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* NAME.json or NAME.json.gz. */
static int json_file(const struct dirent *e) {
  size_t n = strlen(e->d_name);
  return e->d_name[0] != '.' && ((n > 5 && strcmp(e->d_name + n - 5, ".json") == 0) ||
                                 (n > 8 && strcmp(e->d_name + n - 8, ".json.gz") == 0));
}

/* The first GPU model a document names ("name":"...", its first GPU's) into out, and its SM count
 * and architecture ("sm_90"); 0 where it names none. A document is one model's results. */
static int doc_model(const char *doc, char *out, size_t cap, int *sm_count, char *arch,
                     size_t arch_cap) {
  const char *gpus = strstr(doc, "\"gpus\""), *p, *q;
  if (gpus == NULL || (p = strstr(gpus, "\"name\":\"")) == NULL) return 0;
  p += 8;
  if ((q = strchr(p, '"')) == NULL || (size_t)(q - p) >= cap) return 0;
  snprintf(out, cap, "%.*s", (int)(q - p), p);
  const char *sm = strstr(q, "\"sm_count\":"), *a = strstr(q, "\"arch\":\"");
  *sm_count = sm != NULL ? atoi(sm + 11) : 0;
  arch[0] = '\0';
  if (a != NULL && (q = strchr(a + 8, '"')) != NULL && (size_t)(q - a - 8) < arch_cap)
    snprintf(arch, arch_cap, "%.*s", (int)(q - a - 8), a + 8);
  return 1;
}

/* A shipped document, read once, and the GPU model it names. */
typedef struct doc {
  char path[PATH_MAX];
  char *text;
  size_t len;
  char model[128], arch[16];
  int sm_count;
} doc;

/* The documents of dir that name a model, in order of name (heap, *n of them; NULL where none). */
static doc *read_docs(const char *dir, int *n) {
  struct dirent **names = NULL;
  int count = scandir(dir, &names, json_file, by_name);
  doc *docs = count > 0 ? pm__calloc((size_t)count, sizeof *docs) : NULL;
  *n = 0;
  for (int i = 0; i < count; i++) {
    doc *d = docs != NULL ? &docs[*n] : NULL;
    if (d != NULL &&
        snprintf(d->path, sizeof d->path, "%s/%s", dir, names[i]->d_name) < (int)sizeof d->path &&
        (d->text = slurp(d->path, &d->len)) != NULL &&
        doc_model(d->text, d->model, sizeof d->model, &d->sm_count, d->arch, sizeof d->arch))
      (*n)++;
    else if (d != NULL)
      free(d->text), d->text = NULL;
    free(names[i]);
  }
  free(names);
  return docs;
}

/* Imports the documents of `model` into *db (made in memory on first need, for ops); returns how
 * many were. Failures are said with pm__notice. */
static int import_model(pm_ctx *c, const doc *docs, int n, const char *model,
                        const pm__db_op *const *ops, pm__db **db) {
  int count = 0;
  for (int i = 0; i < n; i++) {
    pm__db_import_stats st;
    if (strcmp(docs[i].model, model) != 0) continue;
    if (*db == NULL && pm__db_open(c, NULL, PM__DB_MEMORY, ops, db) != PM_OK) {
      pm__notice(c, "shipped results: %s", pm_errmsg(c));
      *db = NULL;
    } else if (pm__db_import_known(*db, docs[i].text, docs[i].len, &st) != PM_OK) {
      pm__notice(c, "shipped results %s: %s", docs[i].path, pm_errmsg(c));
    } else {
      count++;
    }
  }
  return count;
}

/* The model of the documents nearest this GPU's among those of its architecture but another model
 * (the nearest SM count, then the first in order of name), or NULL. */
static const char *sibling_model(pm_ctx *c, const doc *docs, int n) {
  const char *found = NULL;
  int best = 0;
  for (int i = 0; i < n; i++) {
    int d = abs(docs[i].sm_count - c->dev.sm_count);
    if (strcmp(docs[i].model, c->dev.name) != 0 && strcmp(docs[i].arch, c->dev.arch) == 0 &&
        (found == NULL || d < best))
      found = docs[i].model, best = d;
  }
  return found;
}

/* Imports, in order of name, the documents of dir that name this GPU's model into a new database
 * in memory; and those of the nearest other model of its architecture (sibling_model) for each
 * op and type that none of this model's has, adopted as this model's (s->sibling says which
 * model, s->sibling_groups for what); NULL where nothing is read (said with pm__notice where a
 * document could not be). A GPU of the model whose memory size reads otherwise (ECC on or off)
 * is still of the model: the rows are made to say this one's, in the copy in memory. Each
 * document is read once. */
static pm__db *load(pm_ctx *c, const char *dir, const pm__db_op *const *ops, const char *only,
                    char *sibling_out, size_t sibling_cap, char *groups, size_t groups_cap) {
  int n = 0;
  doc *docs = read_docs(dir, &n);
  pm__db *db = NULL;
  const char *sibling = NULL;
  if (only != NULL) { /* the documents that name op `only` alone */
    char needle[48];
    snprintf(needle, sizeof needle, "\"op\":\"%s\"", only);
    int kept = 0;
    for (int i = 0; i < n; i++)
      if (strstr(docs[i].text, needle) != NULL) docs[kept++] = docs[i];
      else free(docs[i].text);
    n = kept;
  }
  import_model(c, docs, n, c->dev.name, ops, &db);
  if ((sibling = sibling_model(c, docs, n)) != NULL &&
      import_model(c, docs, n, sibling, ops, &db) > 0) {
    if (pm__db_gpu_adopt_sibling(db, &c->dev, sibling, groups, groups_cap) != PM_OK)
      pm__notice(c, "shipped results: %s", pm_errmsg(c));
    else if (groups[0] != '\0')
      snprintf(sibling_out, sibling_cap, "%s", sibling);
  }
  for (int i = 0; i < n; i++) free(docs[i].text);
  free(docs);
  if (db != NULL && pm__db_gpu_adopt_memory(db, &c->dev) != PM_OK)
    pm__notice(c, "shipped results: %s", pm_errmsg(c));
  return db;
}

const char *pm__shipped_sibling(pm_ctx *c, const pm__op *op, int dtype) {
  pm__serve *s = c->serve;
  char group[48];
  if (s->sibling[0] == '\0') return NULL;
  snprintf(group, sizeof group, "%s/%s", op->name, pm_dtype_name((pm_dtype)dtype));
  size_t g = strlen(group);
  for (const char *p = s->sibling_groups; (p = strstr(p, group)) != NULL; p += g)
    if ((p == s->sibling_groups || p[-1] == ' ') && (p[g] == ' ' || p[g] == '\0'))
      return s->sibling;
  return NULL;
}

const pm__db_known *pm__shipped_known(pm_ctx *c, const pm__op *op) {
  pm__serve *s = c->serve;
  if (!s->shipped_tried) {
    char dir[PATH_MAX];
    s->shipped_tried = 1;
    if (results_dir(dir, sizeof dir))
      s->shipped = load(c, dir, pm__ops_db(), NULL, s->sibling, sizeof s->sibling,
                        s->sibling_groups, sizeof s->sibling_groups);
  }
  return pm__known_get(c, &s->shipped_known, s->shipped, op, "the shipped results are not used");
}

const pm__db_known *pm__shipped_kernel_known(pm_kernel *k) {
  pm_ctx *c = k->c;
  if (k->shipped_loaded == 0) {
    char dir[PATH_MAX], sibling[128] = "", groups[256] = "";
    k->shipped_loaded = 2;
    if (results_dir(dir, sizeof dir) &&
        (k->shipped = load(c, dir, pm__ops_db_with(k->op, &k->plus), k->op->name, sibling,
                           sizeof sibling, groups, sizeof groups)) != NULL) {
      if (pm__op_known_load(k->shipped, &c->dev, k->op, &k->shipped_known) == PM_OK)
        k->shipped_loaded = 1;
      else
        pm__notice(c, "%s: the results folder is not used for %s", pm_errmsg(c), k->op->name);
    }
  }
  return k->shipped_loaded == 1 ? &k->shipped_known : NULL;
}

void pm__shipped_kernel_free(pm_kernel *k) {
  if (k->shipped_loaded == 1) pm__db_known_free(&k->shipped_known);
  pm__db_close(k->shipped);
  k->shipped = NULL;
  k->shipped_loaded = 0;
}

void pm__shipped_free(pm__serve *s) {
  pm__known_forget(&s->shipped_known);
  pm__db_close(s->shipped);
  s->shipped = NULL;
  s->shipped_tried = 0;
  s->sibling[0] = s->sibling_groups[0] = '\0';
}
