/* autotune.c: tuning a size on its first use (pm_options.autotune, PMTUNE_AUTOTUNE=1): a short
 * random search stored in the tuning database, on a database handle of its own so that it runs
 * without the serving lock while other threads are served. */
#include "runtime.h"
#include "tune.h"

/* A read-write handle on c's database with c's GPU recorded (*gpu_id); NULL where it cannot be
 * opened (the reason is on c). */
static pm__db *open_for_tuning(pm_ctx *c, int64_t *gpu_id) {
  pm__db *db = NULL;
  int driver, runtime;
  pm__cuda_versions(&driver, &runtime);
  if (pm__db_open(c, c->db_path, 0, pm__ops_db(), &db) != PM_OK) return NULL;
  if (pm__db_gpu_put(db, &c->dev, driver, runtime, gpu_id) != PM_OK) {
    pm__db_close(db);
    return NULL;
  }
  return db;
}

void pm__autotune(pm_ctx *c, const pm__op *op, const pm__problem *pr, int budget) {
  int64_t gpu_id = 0;
  pm__db *db = open_for_tuning(c, &gpu_id);
  if (db == NULL) {
    pm__notice(c, "%s: %s is not tuned on first use", pm_errmsg(c), op->name);
    return;
  }
  pm__tune_opts o;
  pm__tune_result r;
  pm__problem own = *pr;
  own.caller_align = 0; /* the tuner measures on its own buffers, laid out as each point says */
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_RANDOM;
  o.budget = (uint64_t)budget;
  if (pm__tune_problem(c, db, gpu_id, 0, op, &own, &o, &r) != PM_OK)
    pm__notice(c, "tuning %s on first use failed: %s", op->name, pm_errmsg(c));
  pm__db_close(db);
}
