/* study.c: what the serving studies share (study.h). */
#include <string.h>

#include "study.h"

int pm__study_load(pm_ctx *c, int driver, pm__db *const *dbs, int ndbs, const pm__op *op,
                  const int *v, const pm__problem *pr, pm__module *k) {
  char defs[PM__MAX_DEFINES][24], dtext[PM__MAX_DEFINES * 26];
  const char *dp[PM__MAX_DEFINES];
  const pm__template *t = pm__op_template(op);
  int nd = pm__config_defines(op, v, pr, defs), rc;
  pm__db_cubin_key key;
  pm__cubin bin = {0};
  if ((rc = pm__cubin_key(c, t->sha256, (const char(*)[24])defs, nd, driver, dtext, sizeof dtext,
                          &key)) != PM_OK)
    return rc;
  rc = PM_ENOTFOUND;
  for (int i = 0; rc == PM_ENOTFOUND && i < ndbs; i++)
    if (dbs[i] != NULL) rc = pm__db_cubin_get(dbs[i], &key, &bin);
  if (rc == PM_ENOTFOUND) {
    for (int i = 0; i < nd; i++) dp[i] = defs[i];
    rc = pm__compile(c, t->file, t->source, c->dev.arch, dp, (size_t)nd, &bin);
  }
  if (rc != PM_OK) return rc;
  rc = pm__module_load(c, &bin, op->entries, op->nentries, k);
  pm__cubin_free(&bin);
  return rc;
}

/* Runs point v once on d and checks the result against the reference. */
static int check_run(pm_ctx *c, const pm__op *op, const pm__module *k, const int *v, pm__data *d) {
  double err;
  int rc = pm__data_poison(c, d, 0);
  if (rc == PM_OK) rc = op->launch(op, c, k, v, d, 0);
  if (rc == PM_OK) {
    cudaError_t e = cudaDeviceSynchronize();
    rc = e == cudaSuccess ? op->verify(op, c, v, d, &err)
                          : pm__cuda_error(c, PM_ELAUNCH, e, "cudaDeviceSynchronize", __FILE__,
                                           __LINE__);
  }
  return rc;
}

int pm__study_time(pm_ctx *c, pm__timer *tm, int rounds, int driver, pm__db *const *dbs, int ndbs,
                  const pm__op *op, const pm__problem *pr, pm__data *da, const int *a,
                  const int *b, double *ms_a, double *ms_b) {
  pm__data db = {0};
  pm__module ka = {0}, kb = {0};
  double sa[PM__STUDY_MAX_ROUNDS * PM__STUDY_BATCH], sb[PM__STUDY_MAX_ROUNDS * PM__STUDY_BATCH];
  double warm[PM__STUDY_BATCH];
  int rc;
  if (rounds > PM__STUDY_MAX_ROUNDS) rounds = PM__STUDY_MAX_ROUNDS;
  if ((rc = pm__study_load(c, driver, dbs, ndbs, op, a, pr, &ka)) != PM_OK ||
      (rc = pm__study_load(c, driver, dbs, ndbs, op, b, pr, &kb)) != PM_OK ||
      (rc = pm__data_place(c, da, op->layout(op, a))) != PM_OK ||
      (rc = pm__data_place_copy(c, da, op->layout(op, b), &db)) != PM_OK ||
      (rc = check_run(c, op, &ka, a, da)) != PM_OK || (rc = check_run(c, op, &kb, b, &db)) != PM_OK ||
      (rc = pm__timer_warm(c, tm, 200)) != PM_OK ||
      (rc = pm__time_runs(c, tm, op, &ka, a, da, PM__STUDY_BATCH, warm)) != PM_OK ||
      (rc = pm__time_runs(c, tm, op, &kb, b, &db, PM__STUDY_BATCH, warm)) != PM_OK)
    goto done;
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < 2; i++) {
      int first = (r + i) % 2 == 0; /* a first in even rounds, b first in odd ones */
      rc = first ? pm__time_runs(c, tm, op, &ka, a, da, PM__STUDY_BATCH, &sa[r * PM__STUDY_BATCH])
                 : pm__time_runs(c, tm, op, &kb, b, &db, PM__STUDY_BATCH, &sb[r * PM__STUDY_BATCH]);
      if (rc != PM_OK) goto done;
    }
  *ms_a = pm__median(sa, rounds * PM__STUDY_BATCH, NULL, NULL);
  *ms_b = pm__median(sb, rounds * PM__STUDY_BATCH, NULL, NULL);
done:
  if (db.out != NULL) pm__data_unplace(&db);
  pm__module_unload(&ka);
  pm__module_unload(&kb);
  return rc;
}

void pm__study_json_str(FILE *f, const char *key, const char *value) {
  fprintf(f, "\"%s\":\"", key);
  for (const char *p = value; *p; p++) {
    if (*p == '"' || *p == '\\') fputc('\\', f);
    if ((unsigned char)*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

int pm__study_parse_ops(const char *list, const pm__op **ops, int *n) {
  *n = 0;
  if (list == NULL) {
    for (int i = 0; pm__ops[i] != NULL && i < PM__MAX_OPS; i++) ops[(*n)++] = pm__ops[i];
    return 0;
  }
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *name = strtok_r(buf, ",", &save); name != NULL;
       name = strtok_r(NULL, ",", &save)) {
    const pm__op *op = pm__op_find(name);
    if (op == NULL || *n == PM__MAX_OPS) return -1;
    ops[(*n)++] = op;
  }
  return *n > 0 ? 0 : -1;
}

unsigned pm__study_parse_dtypes(const char *list) {
  char buf[64];
  unsigned mask = 0;
  if (snprintf(buf, sizeof buf, "%s", list) >= (int)sizeof buf) return 0;
  for (char *save = NULL, *name = strtok_r(buf, ",", &save); name != NULL;
       name = strtok_r(NULL, ",", &save)) {
    int t = pm__dtype_find(name);
    if (t < 0) return 0;
    mask |= 1u << t;
  }
  return mask;
}
