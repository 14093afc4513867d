/* fuzz_db_text.c: libFuzzer harness for the database layer's problem and configuration text:
 * how db/ checks a problem and writes its canonical text (pm__db_problem_text, pmdb.c), turns a
 * configuration's JSON into its text (config_from_params, through pm__db_measurement_put), and
 * reads both back (pm__db_measured, the snapshot of known.c, pm__db_seen_list) up to the
 * decision a call takes (pm__decide); and the same reading of rows that a hostile or careless
 * hand wrote into the file past the schema's checks.
 *
 * The input is lines: op, dtype, variant, rows, cols, n, radius, params (JSON), config, calls;
 * a missing line is NULL (a number's: SQL NULL, or 0). */
#include "fuzz.h"
#include "serve.h"

enum { F_OP, F_DTYPE, F_VARIANT, F_ROWS, F_COLS, F_N, F_RADIUS, F_PARAMS, F_CONFIG, F_CALLS, F_N_ };

static int64_t number(const char *s) { return s ? strtoll(s, NULL, 10) : 0; }

/* What a pm__db_seen_list callback saw, and the checks it makes on each problem handed. */
typedef struct seen_walk {
  pm__db *db;
  const pm__db_known *known;
  int handed;
} seen_walk;

/* What a call of the problem's op decides from the snapshot: a valid point, whatever the rows. */
static void decide(const pm__db_known *known, const pm__op *op, const pm__problem *pr) {
  pm__decision d;
  pm__source s = pm__decide(fuzz_ctx(), known, NULL, op, pr, &d);
  FUZZ_CHECK(s == PM__FROM_EXACT || s == PM__FROM_NEAREST || s == PM__FROM_DEFAULT,
             "%s: source %d", op->name, (int)s);
  int v[PM__MAX_PARAMS];
  FUZZ_CHECK(pm__config_parse(NULL, op, d.config, v) == PM_OK &&
                 memcmp(v, d.v, op->nparams * sizeof *v) == 0,
             "%s: decided '%s', which is not its point", op->name, d.config);
}

/* As `pmtune tune --seen` takes a recorded size (tools/cmd_tune.c, pick_seen). */
static int seen_cb(void *arg, const pm__db_problem *p, int64_t calls) {
  seen_walk *w = arg;
  char text[PM__DB_PROBLEM_MAX], size[48];
  w->handed++;
  (void)calls; /* a raw row's count may be anything: it is only printed and ordered by */
  FUZZ_CHECK(pm__db_problem_text(w->db, p, text) == PM_OK, "seen: handed a bad problem: %s",
             pm_errmsg(fuzz_ctx()));
  const pm__op *op = pm__op_find(p->op);
  FUZZ_CHECK(op != NULL, "seen: op '%s'", p->op);
  pm__db_winner win;
  (void)pm__db_known_get_if(w->known, p, NULL, NULL, &win);
  pm__problem pr = {.radius = p->radius, .variant = pm__variant_index(op, p->variant)};
  if (op->dims == 1)
    snprintf(size, sizeof size, "%lld", (long long)p->n);
  else
    snprintf(size, sizeof size, "%lldx%lld", (long long)p->rows, (long long)p->cols);
  if (pm__problem_parse(fuzz_ctx(), op, size, &pr) == PM_OK) decide(w->known, op, &pr);
  return 0;
}

/* Everything that reads the file back for the input's op (matadd where it names none of
 * pmtune's): its snapshot and a decision from it (for the input's size where it parses, and for
 * a size of its own), and the sizes recorded of it. */
static void read_back(pm__db *db, int64_t gpu, const char *const *f) {
  pm__device_info dev = fuzz_gpu();
  const pm__op *op = f[F_OP] ? pm__op_find(f[F_OP]) : NULL;
  int own = op != NULL;
  if (!own) op = &pm__op_matadd;
  pm__db_known known;
  FUZZ_CHECK(pm__op_known_load(db, &dev, op, &known) == PM_OK, "%s", pm_errmsg(fuzz_ctx()));
  pm__problem pr = {.rows = 4096, .cols = 4096, .n = 1 << 20, .radius = op->radius_min};
  decide(&known, op, &pr);
  if (own) {
    pr.radius = (int)number(f[F_RADIUS]);
    pr.variant = pm__variant_index(op, f[F_VARIANT] ? f[F_VARIANT] : "");
    const char *first = f[op->dims == 1 ? F_N : F_ROWS];
    char size[64];
    if (op->dims == 1)
      snprintf(size, sizeof size, "%.20s", first ? first : "");
    else
      snprintf(size, sizeof size, "%.20sx%.20s", first ? first : "", f[F_COLS] ? f[F_COLS] : "");
    if (pm__problem_parse(NULL, op, size, &pr) == PM_OK && pr.radius >= op->radius_min &&
        pr.radius <= op->radius_max)
      decide(&known, op, &pr);
  }
  seen_walk w = {db, &known, 0};
  FUZZ_CHECK(pm__db_seen_list(db, gpu, NULL, 0, seen_cb, &w) == PM_OK, "%s",
             pm_errmsg(fuzz_ctx()));
  pm__db_known_free(&known);
}

/* The checked way in: a measurement of the input's problem and configuration, and its size
 * recorded as seen. What is refused writes nothing; what is taken reads back as written. */
static void write_checked(pm__db *db, int64_t gpu, const char *const *f) {
  pm_ctx *c = fuzz_ctx();
  const pm__template *t = f[F_OP] ? pm__template_find(f[F_OP]) : NULL;
  pm__db_problem p = {.op = f[F_OP], .dtype = f[F_DTYPE], .rows = number(f[F_ROWS]),
                      .cols = number(f[F_COLS]), .n = number(f[F_N]),
                      .radius = (int)number(f[F_RADIUS]), .variant = f[F_VARIANT]};
  const char *sha = t ? t->sha256 : "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  pm__db_measurement m = {.gpu_id = gpu, .problem = p, .template_sha256 = sha,
                          .params = f[F_PARAMS], .config = f[F_CONFIG],
                          .outcome = PM__DB_MEASURED, .median_ms = 1, .min_ms = 0.5, .max_ms = 2,
                          .samples = 3, .gbps = 100, .verified = 1};
  char text[PM__DB_PROBLEM_MAX];
  int text_rc = pm__db_problem_text(db, &p, text);
  FUZZ_CHECK(text_rc == PM_OK || text_rc == PM_EINVAL, "problem text: status %d", text_rc);
  int rc = pm__db_measurement_put(db, &m);
  if (rc != PM_OK) {
    FUZZ_CHECK(rc == PM_EINVAL, "status %d: %s", rc, pm_errmsg(c));
    FUZZ_CHECK(fuzz_int(db, "SELECT count(*) FROM measurement") == 0, "refused, yet written");
  } else {
    FUZZ_CHECK(text_rc == PM_OK, "a problem that has no text was stored");
    sqlite3_stmt *st = NULL;
    FUZZ_CHECK(sqlite3_prepare_v2(pm__db_handle(db),
                                  "SELECT problem, config, params FROM measurement", -1, &st,
                                  NULL) == SQLITE_OK, "select");
    FUZZ_CHECK(sqlite3_step(st) == SQLITE_ROW, "taken, yet not written");
    const char *problem = (const char *)sqlite3_column_text(st, 0);
    const char *config = (const char *)sqlite3_column_text(st, 1);
    FUZZ_CHECK(strcmp(problem, text) == 0, "stored '%s', its text is '%s'", problem, text);
    FUZZ_CHECK(f[F_CONFIG] == NULL || strcmp(config, f[F_CONFIG]) == 0,
               "stored config '%s' for '%s'", config, f[F_CONFIG]);
    int found = 0;
    FUZZ_CHECK(pm__db_measured(db, gpu, 0, &p, config, sha, &found) == PM_OK && found,
               "'%s' [%s] is stored, but not found: %s", problem, config, pm_errmsg(c));
    if (t != NULL) {
      pm__device_info dev = fuzz_gpu();
      const char *ops[] = {p.op, NULL}, *shas[] = {sha, NULL};
      pm__db_known known;
      pm__db_winner w;
      FUZZ_CHECK(pm__db_known_load(db, &dev, ops, shas, &known) == PM_OK, "%s", pm_errmsg(c));
      FUZZ_CHECK(pm__db_known_get_if(&known, &p, NULL, NULL, &w) == PM_OK,
                 "'%s' is stored, but the snapshot has it not: %s", problem, pm_errmsg(c));
      FUZZ_CHECK(strcmp(w.config, config) == 0, "the snapshot has '%s' for '%s'", w.config,
                 config);
      pm__db_known_free(&known);
    }
    sqlite3_finalize(st);
  }
  int64_t calls = f[F_CALLS] ? number(f[F_CALLS]) : 1;
  rc = pm__db_seen_add(db, gpu, &p, &calls, 1);
  FUZZ_CHECK(rc == PM_OK || rc == PM_EINVAL, "seen: status %d: %s", rc, pm_errmsg(c));
  FUZZ_CHECK(rc != PM_OK || (text_rc == PM_OK && calls >= 1), "seen: took a bad problem");
  FUZZ_CHECK(rc == PM_OK || fuzz_int(db, "SELECT count(*) FROM seen") == 0,
             "seen: refused, yet written");
}

/* Binds line f (NULL: SQL NULL) as text: SQLite's column affinity makes it what it can. */
static int bind(sqlite3_stmt *st, int i, const char *f) {
  return f ? sqlite3_bind_text(st, i, f, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

/* The hostile way in: the same fields written as rows with plain SQL, the schema's CHECK
 * constraints ignored (as another program might), for the current template of the op. */
static void write_raw(pm__db *db, int64_t gpu, const char *const *f) {
  const pm__template *t = f[F_OP] ? pm__template_find(f[F_OP]) : NULL;
  sqlite3 *h = pm__db_handle(db);
  sqlite3_stmt *st = NULL;
  fuzz_exec(db, "PRAGMA ignore_check_constraints = ON; PRAGMA foreign_keys = OFF");
  static const char *const sql[] = {
      "INSERT OR IGNORE INTO measurement (gpu_id, op, dtype, variant, rows, cols, n, radius,"
      " params, config, problem, template_sha256, status, median_ms, min_ms, max_ms, samples,"
      " gbps, verified, max_error, measured_at, is_seed)"
      " VALUES (?1, ?2, ?3, ifnull(?4, ''), ?5, ?6, ?7, ?8, ifnull(?9, '{}'), ifnull(?10, ''),"
      " 'raw', ?11, 'ok', ?12, 0.5, 2, 3, 100, 1, 0, '2025-01-01T00:00:00.000Z', 0)",
      "INSERT OR IGNORE INTO seen (gpu_id, op, dtype, variant, rows, cols, n, radius, calls,"
      " problem, first_seen, last_seen) VALUES (?1, ?2, ?3, ifnull(?4, ''), ?5, ?6, ?7, ?8,"
      " ifnull(?13, 1), 'raw', 'a', 'a')"};
  for (int k = 0; k < 2; k++) {
    FUZZ_CHECK(sqlite3_prepare_v2(h, sql[k], -1, &st, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(h));
    sqlite3_bind_int64(st, 1, gpu);
    bind(st, 2, f[F_OP] ? f[F_OP] : "");
    bind(st, 3, f[F_DTYPE] ? f[F_DTYPE] : "");
    bind(st, 4, f[F_VARIANT]);
    bind(st, 5, f[F_ROWS]);
    bind(st, 6, f[F_COLS]);
    bind(st, 7, f[F_N]);
    bind(st, 8, f[F_RADIUS]);
    if (k == 0) {
      bind(st, 9, f[F_PARAMS]);
      bind(st, 10, f[F_CONFIG]);
      bind(st, 11, t ? t->sha256 : "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
      bind(st, 12, f[F_CALLS] ? f[F_CALLS] : "1"); /* the median: any number, or text */
    } else {
      bind(st, 13, f[F_CALLS]);
    }
    int r = sqlite3_step(st);
    FUZZ_CHECK(r == SQLITE_DONE, "raw row: %s", sqlite3_errmsg(h));
    sqlite3_finalize(st);
  }
  fuzz_exec(db, "PRAGMA ignore_check_constraints = OFF; PRAGMA foreign_keys = ON");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t gpu = 0;
  pm__db *db = fuzz_db(&gpu);
  char *s = fuzz_text(data, size);
  const char *f[F_N_] = {NULL};
  char *p = s;
  for (int i = 0; i < F_N_ && p != NULL; i++) {
    f[i] = p;
    p = strchr(p, '\n');
    if (p != NULL) *p++ = '\0';
  }
  write_checked(db, gpu, f);
  read_back(db, gpu, f);
  fuzz_db_reset(db);
  write_raw(db, gpu, f);
  read_back(db, gpu, f);
  fuzz_db_reset(db);
  free(s);
  return 0;
}
