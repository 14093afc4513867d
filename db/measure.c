/* measure.c: storing measurements and looking up winners: what the tuner writes of every
 * configuration it measured, and what serving and `pmtune show` ask of them. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* ---- Measurements --------------------------------------------------------------------------- */

static const char *const outcome_names[] = {"ok", "compile_error", "launch_error", "wrong_result"};

static int check_timing(pm__db *db, const pm__db_measurement *m, const char *problem,
                        const char *config) {
  int measured = m->outcome == PM__DB_MEASURED;
  if (m->outcome < PM__DB_MEASURED || m->outcome > PM__DB_WRONG_RESULT)
    return pm__seterr(db->c, PM_EINVAL, "measurement %s %s [%s]: no such outcome %d", m->problem.op,
                      problem, config, (int)m->outcome);
  if (measured && !(isfinite(m->median_ms) && isfinite(m->max_ms) && m->min_ms > 0 &&
                    m->min_ms <= m->median_ms && m->median_ms <= m->max_ms && m->samples >= 1 &&
                    isfinite(m->gbps) && m->gbps >= 0))
    return pm__seterr(db->c, PM_EINVAL,
                      "measurement %s %s [%s]: needs 0 < min <= median <= max, samples >= 1 and "
                      "gbps >= 0 (got min %g, median %g, max %g ms, %d samples, %g GB/s)",
                      m->problem.op, problem, config, m->min_ms, m->median_ms, m->max_ms,
                      m->samples, m->gbps);
  if (!measured && (m->error == NULL || m->error[0] == '\0'))
    return pm__seterr(db->c, PM_EINVAL, "measurement %s %s [%s]: %s, but no error says why",
                      m->problem.op, problem, config, outcome_names[m->outcome]);
  if ((m->verified != 0 && m->verified != 1) || (m->is_seed != 0 && m->is_seed != 1) ||
      (m->verified && !(isfinite(m->max_error) && m->max_error >= 0)))
    return pm__seterr(db->c, PM_EINVAL,
                      "measurement %s %s [%s]: verified and is_seed are 0 or 1, and a verified "
                      "max_error is finite and >= 0 (got %d, %d, %g)",
                      m->problem.op, problem, config, m->verified, m->is_seed, m->max_error);
  return PM_OK;
}

/* Registers sha256 as a template of op (not current) unless known; refuses one known as
 * another op's. */
static int template_known(pm__db *db, const char *op, const char *sha256) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  int in_txn = !sqlite3_get_autocommit(db->sql);
  if (in_txn && db->tpl_txn == db->txn && strcmp(db->tpl_op, op) == 0 &&
      strcmp(db->tpl_sha, sha256) == 0)
    return PM_OK; /* found so in this transaction already */
  PM__SQLITE(db, pm__db_keep(db, PM__DB_KEPT_TEMPLATE_PUT,
                             "INSERT INTO template (sha256, op, current, first_seen)"
                             " VALUES (?1, ?2, 0, " NOW ") ON CONFLICT (sha256) DO NOTHING",
                             &st));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, sha256, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, op, -1, SQLITE_STATIC));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  pm__db_let_go(&st);
  PM__SQLITE(db, pm__db_keep(db, PM__DB_KEPT_TEMPLATE_GET,
                             "SELECT op FROM template WHERE sha256 = ?1", &st));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, sha256, -1, SQLITE_STATIC));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  const char *known;
  PM__SQLITE_TEXT(db, st, 0, known);
  if (known == NULL || strcmp(known, op) != 0) {
    rc = pm__seterr(db->c, PM_EINVAL, "template %.12s... is %s's, not %s's", sha256,
                    known ? known : "?", op);
  } else if (in_txn && strlen(op) < sizeof db->tpl_op) {
    db->tpl_txn = db->txn;
    snprintf(db->tpl_op, sizeof db->tpl_op, "%s", op);
    snprintf(db->tpl_sha, sizeof db->tpl_sha, "%s", sha256);
  }
fail:
  pm__db_let_go(&st);
  return rc;
}

int pm__db_measurement_write(pm__db *db, const pm__db_measurement *m, const char *measured_at,
                             int only_if_newer, int *what) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  char problem[PM__DB_PROBLEM_MAX], params[PM__DB_PARAMS_MAX], config[PM__DB_CONFIG_MAX];
  if (what) *what = 0;
  if (m == NULL) return pm__seterr(db->c, PM_EINVAL, "measurement: none given");
  if ((rc = pm__db_problem_text(db, &m->problem, problem)) != PM_OK) return rc;
  if (!pm__dbi_valid_sha(m->template_sha256))
    return pm__seterr(db->c, PM_EINVAL,
                      "measurement %s %s: template_sha256 '%.70s' is not 64 lowercase hex digits",
                      m->problem.op, problem, m->template_sha256 ? m->template_sha256 : "(none)");
  if ((rc = pm__dbi_config_from_params(db, m->params, params, config)) != PM_OK) return rc;
  if (m->config != NULL && strcmp(m->config, config) != 0)
    return pm__seterr(db->c, PM_EINVAL,
                      "measurement %s %s: configuration text '%.80s' does not say what its JSON "
                      "%s says ('%s')",
                      m->problem.op, problem, m->config, params, config);
  if ((rc = check_timing(db, m, problem, config)) != PM_OK) return rc;
  if ((rc = template_known(db, m->problem.op, m->template_sha256)) != PM_OK) return rc;

  /* The GPU and the run must exist: say so, rather than "FOREIGN KEY constraint failed". */
  int in_txn = !sqlite3_get_autocommit(db->sql);
  if (in_txn && db->ids_txn == db->txn && db->ids_gpu == m->gpu_id && db->ids_run == m->run_id)
    goto ids_known; /* found in this transaction already */
  PM__SQLITE(db, pm__db_keep(db, PM__DB_KEPT_GPU_RUN,
                             "SELECT (SELECT count(*) FROM gpu WHERE id = ?1),"
                             " (SELECT count(*) FROM run WHERE id = ?2)",
                             &st));
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, m->gpu_id));
  PM__SQLITE(db, sqlite3_bind_int64(st, 2, m->run_id));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  if (sqlite3_column_int(st, 0) != 1 || (m->run_id != 0 && sqlite3_column_int(st, 1) != 1)) {
    rc = pm__seterr(db->c, PM_EINVAL, "measurement %s %s [%s]: no GPU %lld or no run %lld in %s",
                    m->problem.op, problem, config, (long long)m->gpu_id, (long long)m->run_id,
                    db->path);
    goto fail;
  }
  pm__db_let_go(&st);
  if (in_txn) db->ids_txn = db->txn, db->ids_gpu = m->gpu_id, db->ids_run = m->run_id;
ids_known:

  PM__SQLITE(
      db,
      pm__db_keep(
          db, PM__DB_KEPT_INSERT,
          "INSERT INTO measurement (gpu_id, op, dtype, rows, cols, n, radius, variant, problem,"
          " config, params, is_seed, template_sha256, status, error, median_ms, min_ms, max_ms,"
          " samples, gbps, verified, max_error, run_id, measured_at)"
          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
          "?18,"
          " ?19, ?20, ?21, ?22, ?23, coalesce(?24, " NOW "))"
          " ON CONFLICT (gpu_id, op, dtype, problem, config, template_sha256) DO UPDATE SET"
          " params = excluded.params, is_seed = excluded.is_seed, status = excluded.status,"
          " error = excluded.error, median_ms = excluded.median_ms, min_ms = excluded.min_ms,"
          " max_ms = excluded.max_ms, samples = excluded.samples, gbps = excluded.gbps,"
          " verified = excluded.verified, max_error = excluded.max_error, run_id = excluded.run_id,"
          " measured_at = excluded.measured_at"
          " WHERE ?25 = 0 OR excluded.measured_at > measurement.measured_at",
          &st));
  int measured = m->outcome == PM__DB_MEASURED;
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, m->gpu_id));
  PM__SQLITE(db, pm__db_bind_problem(st, 2, &m->problem, problem));
  PM__SQLITE(db, sqlite3_bind_text(st, 10, config, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 11, params, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 12, m->is_seed));
  PM__SQLITE(db, sqlite3_bind_text(st, 13, m->template_sha256, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 14, outcome_names[m->outcome], -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 15, measured ? NULL : m->error, -1, SQLITE_STATIC));
  if (measured) {
    PM__SQLITE(db, sqlite3_bind_double(st, 16, m->median_ms));
    PM__SQLITE(db, sqlite3_bind_double(st, 17, m->min_ms));
    PM__SQLITE(db, sqlite3_bind_double(st, 18, m->max_ms));
    PM__SQLITE(db, sqlite3_bind_int(st, 19, m->samples));
    PM__SQLITE(db, sqlite3_bind_double(st, 20, m->gbps));
  }
  PM__SQLITE(db, sqlite3_bind_int(st, 21, m->verified));
  if (m->verified) PM__SQLITE(db, sqlite3_bind_double(st, 22, m->max_error));
  if (m->run_id > 0) PM__SQLITE(db, sqlite3_bind_int64(st, 23, m->run_id));
  PM__SQLITE(db, sqlite3_bind_text(st, 24, measured_at, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 25, only_if_newer));
  /* Which it did, without asking first: a new row sets the connection's last inserted rowid
   * (pmtune's rows are numbered from 1), an update of a stored one (the upsert's DO UPDATE)
   * leaves it, and a stored row kept changes nothing. */
  sqlite3_set_last_insert_rowid(db->sql, 0);
  int r = sqlite3_step(st);
  if ((r & 0xff) == SQLITE_CONSTRAINT &&
      strstr(sqlite3_errmsg(db->sql), "measurement.template_sha256") != NULL) {
    /* the one-seed index names these columns; say it in words */
    rc = pm__seterr(db->c, PM_EINVAL,
                    "measurement %s %s [%s]: another configuration is already this problem's seed",
                    m->problem.op, problem, config);
    goto fail;
  }
  PM__SQLITE_ST(db, st, r);
  if (what)
    *what = sqlite3_changes(db->sql) == 0           ? 2
            : sqlite3_last_insert_rowid(db->sql) != 0 ? 0
                                                      : 1;
fail:
  pm__db_let_go(&st);
  return rc;
}

int pm__db_measurement_put(pm__db *db, const pm__db_measurement *m) {
  int rc;
  if ((rc = pm__db_begin(db)) != PM_OK) return rc;
  if ((rc = pm__db_measurement_write(db, m, NULL, 0, NULL)) != PM_OK) {
    pm__db_rollback(db);
    return rc;
  }
  return pm__db_commit(db);
}

/* The ids of the GPUs of the model of GPU `id` (an SQL parameter): the same name, compute
 * capability and SM count. SELF_OR_MODEL: `id` itself, and where `flag` (a parameter) is not 0,
 * the others of its model. */
#define MODEL_OF(id)                                                                           \
  " FROM gpu g JOIN gpu o ON o.name = g.name AND o.cc_major = g.cc_major"                      \
  " AND o.cc_minor = g.cc_minor AND o.sm_count = g.sm_count WHERE g.id = " id
#define MODEL_GPUS(id) "(SELECT o.id" MODEL_OF(id) ")"
#define SELF_OR_MODEL(id, flag) "(SELECT " id " UNION SELECT o.id" MODEL_OF(id) " AND " flag ")"

int pm__db_measured(pm__db *db, int64_t gpu_id, int model, const pm__db_problem *p,
                    const char *config, const char *template_sha256, int *found) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  char problem[PM__DB_PROBLEM_MAX];
  *found = 0;
  if ((rc = pm__db_problem_text(db, p, problem)) != PM_OK) return rc;
  if (config == NULL || !pm__dbi_valid_sha(template_sha256))
    return pm__seterr(db->c, PM_EINVAL, "measured: needs a configuration and a template hash");
  /* Asked for every candidate of every size a run tunes or carries: kept prepared, and written so
   * that SQLite looks each GPU's row up in the measurement's unique index (gpu_id IN a list)
   * rather than scanning the op and type (gpu_id = ?1 OR ...: up to 20 ms a question on a
   * database holding the shipped H100 document; bench/db/skip.c). */
  PM__SQLITE(db, pm__db_keep(db, PM__DB_KEPT_MEASURED,
                             "SELECT 1 FROM measurement WHERE gpu_id IN " SELF_OR_MODEL("?1", "?7")
                             " AND op = ?2 AND dtype = ?3 AND problem = ?4 AND config = ?5 AND"
                             " template_sha256 = ?6",
                             &st));
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, gpu_id));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, p->op, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 3, p->dtype, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 4, problem, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 5, config, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 6, template_sha256, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 7, model != 0));
  int r = sqlite3_step(st);
  PM__SQLITE_ST(db, st, r);
  *found = r == SQLITE_ROW;
fail:
  pm__db_let_go(&st);
  return rc;
}

/* The rows of p's group (op, dtype, variant, radius) on gpu_id of template ?6, or (?10 not 0) on
 * any GPU of gpu_id's model (the same name, compute capability and SM count, as serving takes
 * them): ?1..?6 and ?10 bound by bind_group. */
#define GROUP_ROWS                                                                             \
  " FROM measurement m WHERE (m.gpu_id = ?1 OR (?10 AND m.gpu_id IN " MODEL_GPUS("?1") "))"    \
  " AND m.op = ?2 AND m.dtype = ?3"                                                            \
  " AND m.variant = ?4 AND ifnull(m.radius, 0) = ?5 AND m.template_sha256 = ?6"

/* ?1..?6 alone: the GPU, and p's group (op, dtype, variant, radius) with the template. */
static int bind_keys(pm__db *db, sqlite3_stmt *st, int64_t gpu_id, const pm__db_problem *p,
                     const char *sha) {
  int rc = PM_OK;
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, gpu_id));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, p->op, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 3, p->dtype, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 4, p->variant ? p->variant : "", -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 5, p->radius));
  PM__SQLITE(db, sqlite3_bind_text(st, 6, sha, -1, SQLITE_STATIC));
fail:
  return rc;
}

static int bind_group(pm__db *db, sqlite3_stmt *st, int64_t gpu_id, int model,
                      const pm__db_problem *p, const char *sha) {
  int rc = bind_keys(db, st, gpu_id, p, sha);
  if (rc != PM_OK) return rc;
  PM__SQLITE(db, sqlite3_bind_int(st, 10, model != 0));
fail:
  return rc;
}

int pm__db_carry_configs(pm__db *db, int64_t gpu_id, int model, int64_t from_gpu,
                         const pm__db_problem *p, const char *template_sha256,
                         int (*each)(void *arg, const char *config), void *arg) {
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  char problem[PM__DB_PROBLEM_MAX];
  if ((rc = pm__db_problem_text(db, p, problem)) != PM_OK) return rc;
  if (!pm__dbi_valid_sha(template_sha256))
    return pm__seterr(db->c, PM_EINVAL, "carried configurations: needs a template hash");
  double elems = p->rows > 0 ? (double)p->rows * (double)p->cols * (double)(p->n > 0 ? p->n : 1)
                             : (double)p->n; /* (n: a batch of matrices' batch) */
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "SELECT DISTINCT config FROM (SELECT m.config,"
                                    " coalesce(m.rows * m.cols * ifnull(m.n, 1), m.n) AS elems, row_number() OVER"
                                    " (PARTITION BY m.problem ORDER BY m.median_ms, m.config, m.id) AS rank"
                                    GROUP_ROWS " AND m.status = 'ok' AND m.verified = 1)"
                                    " WHERE rank <= ?7 AND elems <= ?8 * ?9 AND ?9 <= ?8 * elems"
                                    " AND NOT (?10 AND config IN (SELECT x.config FROM measurement x"
                                    " WHERE x.gpu_id IN " MODEL_GPUS("?12")
                                    " AND x.op = ?2 AND x.dtype = ?3"
                                    " AND x.template_sha256 = ?6 AND x.problem = ?11))"
                                    " ORDER BY config",
                                    -1, &st, NULL));
  if ((rc = bind_group(db, st, from_gpu > 0 ? from_gpu : gpu_id, model, p, template_sha256)) !=
      PM_OK)
    goto fail;
  PM__SQLITE(db, sqlite3_bind_int64(st, 12, gpu_id));
  PM__SQLITE(db, sqlite3_bind_int(st, 7, PM__DB_CARRY_TOP));
  PM__SQLITE(db, sqlite3_bind_int(st, 8, PM__DB_CARRY_WITHIN));
  PM__SQLITE(db, sqlite3_bind_double(st, 9, elems));
  PM__SQLITE(db, sqlite3_bind_text(st, 11, problem, -1, SQLITE_STATIC));
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    const char *config;
    PM__SQLITE_TEXT(db, st, 0, config);
    if (config != NULL && each(arg, config)) break;
  }
  if (r != SQLITE_ROW) PM__SQLITE_ST(db, st, r);
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_group_sizes(pm__db *db, int64_t gpu_id, int model, const pm__db_problem *p,
                       const char *template_sha256,
                       int (*each)(void *arg, const pm__db_problem *size), void *arg) {
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  char problem[PM__DB_PROBLEM_MAX];
  if ((rc = pm__db_problem_text(db, p, problem)) != PM_OK) return rc;
  if (!pm__dbi_valid_sha(template_sha256))
    return pm__seterr(db->c, PM_EINVAL, "tuned sizes: needs a template hash");
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "SELECT DISTINCT ifnull(m.rows, 0), ifnull(m.cols, 0),"
                                    " ifnull(m.n, 0)" GROUP_ROWS
                                    " AND m.status = 'ok' AND m.verified = 1"
                                    " ORDER BY coalesce(m.rows * m.cols * ifnull(m.n, 1), m.n), m.rows, m.cols",
                                    -1, &st, NULL));
  if ((rc = bind_group(db, st, gpu_id, model, p, template_sha256)) != PM_OK) goto fail;
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    pm__db_problem z = *p;
    z.rows = sqlite3_column_int64(st, 0);
    z.cols = sqlite3_column_int64(st, 1);
    z.n = sqlite3_column_int64(st, 2);
    if (each(arg, &z)) break;
  }
  if (r != SQLITE_ROW) PM__SQLITE_ST(db, st, r);
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_group_sibling(pm__db *db, int64_t gpu_id, const pm__db_problem *p,
                         const char *template_sha256, int64_t *sibling, char *name, size_t cap) {
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  *sibling = 0;
  if (cap > 0) name[0] = '\0';
  if (!pm__dbi_valid_sha(template_sha256))
    return pm__seterr(db->c, PM_EINVAL, "the nearest model: needs a template hash");
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "SELECT o.id, o.name FROM gpu g JOIN gpu o"
                                    " ON o.cc_major = g.cc_major AND o.cc_minor = g.cc_minor"
                                    " AND o.id NOT IN " MODEL_GPUS("?1")
                                    " WHERE g.id = ?1 AND EXISTS (SELECT 1 FROM measurement m"
                                    " WHERE m.gpu_id = o.id AND m.op = ?2 AND m.dtype = ?3"
                                    " AND m.variant = ?4 AND ifnull(m.radius, 0) = ?5"
                                    " AND m.template_sha256 = ?6 AND m.status = 'ok'"
                                    " AND m.verified = 1)"
                                    " ORDER BY abs(o.sm_count - g.sm_count), o.name, o.id LIMIT 1",
                                    -1, &st, NULL));
  if ((rc = bind_keys(db, st, gpu_id, p, template_sha256)) != PM_OK) goto fail;
  r = sqlite3_step(st);
  if (r == SQLITE_ROW) {
    const char *n;
    *sibling = sqlite3_column_int64(st, 0);
    PM__SQLITE_TEXT(db, st, 1, n);
    if (n != NULL && cap > 0) snprintf(name, cap, "%s", n);
  } else {
    PM__SQLITE_ST(db, st, r);
  }
fail:
  pm__db_finalize(&st);
  return rc;
}

/* ---- Winners -------------------------------------------------------------------------------- */

/* The GPUs whose results serve device ?1..?6: itself (uuid ?1), and those of its model. */
static int check_lookup(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                        const char *sha, char problem[PM__DB_PROBLEM_MAX]) {
  int rc = pm__db_problem_text(db, p, problem);
  if (rc != PM_OK) return rc;
  if (d == NULL || !pm__dbi_valid_sha(sha))
    return pm__seterr(db->c, PM_EINVAL, "winner: needs a device and a template hash");
  return PM_OK;
}

int pm__db_winner_get(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                      const char *template_sha256, pm__db_winner *out) {
  return pm__db_winner_get_if(db, d, p, template_sha256, NULL, NULL, out);
}

/* The two lookups below are the snapshot's (known.c), on a snapshot of p's op alone. */
static int lookup(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                  const char *template_sha256, int nearest,
                  int (*accept)(void *arg, const char *config), void *arg, pm__db_winner *out) {
  char problem[PM__DB_PROBLEM_MAX];
  const char *ops[] = {p != NULL ? p->op : NULL, NULL}, *shas[] = {template_sha256, NULL};
  pm__db_known k;
  memset(out, 0, sizeof *out);
  int rc = check_lookup(db, d, p, template_sha256, problem);
  if (rc != PM_OK || (rc = pm__db_known_load(db, d, ops, shas, &k)) != PM_OK) return rc;
  rc = nearest ? pm__db_known_nearest_if(&k, p, accept, arg, out)
               : pm__db_known_get_if(&k, p, accept, arg, out);
  pm__db_known_free(&k);
  return rc;
}

int pm__db_winner_get_if(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                         const char *template_sha256, int (*accept)(void *arg, const char *config),
                         void *arg, pm__db_winner *out) {
  return lookup(db, d, p, template_sha256, 0, accept, arg, out);
}

int pm__db_winner_nearest(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                          const char *template_sha256, pm__db_winner *out) {
  return pm__db_winner_nearest_if(db, d, p, template_sha256, NULL, NULL, out);
}

int pm__db_winner_nearest_if(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                             const char *template_sha256,
                             int (*accept)(void *arg, const char *config), void *arg,
                             pm__db_winner *out) {
  return lookup(db, d, p, template_sha256, 1, accept, arg, out);
}
