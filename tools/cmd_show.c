/* cmd_show.c: `pmtune show`, the winners stored in the tuning database, one line per (GPU, op,
 * problem), read from its `winner` view; with --seen, the sizes that library calls recorded as
 * served without a tuned winner, most called first. */
#include <string.h>

#include "cli.h"
#include "pmdb.h"

static const char about[] =
    "Lists the winner of every tuned (GPU, op, type, problem) of the current templates: its\n"
    "configuration, median time, bandwidth, and its speedup over the seed configuration.\n"
    "The same as: sqlite3 PATH 'SELECT * FROM winner'.\n"
    "\n"
    "With --seen, lists instead the sizes that library calls recorded (with recording on) as\n"
    "served without a winner tuned for exactly them, per GPU, most called first, and whether\n"
    "each has an exact winner since: what 'pmtune tune --seen' tunes.\n";

static const cli_help help = {.cmd = "show", .about = about};

/* What listing one GPU's recorded sizes needs. */
typedef struct seen_list {
  pm_ctx *c;
  pm__db *db;
  const char *gpu;
  const pm__db_known *known; /* what is tuned for this GPU */
  unsigned dtypes;           /* the types to list, a bit per pm_dtype; 0: all */
  int rows;
} seen_list;

/* Whether a row of type `name` (text from the database) is listed under --dtype's mask. */
static int dtype_listed(unsigned mask, const char *name) {
  int t = name != NULL ? pm__dtype_find(name) : -1;
  return mask == 0 || (t >= 0 && (mask >> t & 1u));
}

/* A pm__db_seen_list callback: prints one recorded size. */
static int show_seen_row(void *arg, const pm__db_problem *p, int64_t calls) {
  seen_list *l = arg;
  char problem[PM__DB_PROBLEM_MAX];
  pm__db_winner w;
  if (!dtype_listed(l->dtypes, p->dtype)) return 0;
  if (pm__db_problem_text(l->db, p, problem) != PM_OK) return 0;
  int tuned = pm__db_known_get_if(l->known, p, NULL, NULL, &w) == PM_OK;
  if (l->rows++ == 0)
    printf("%-24s %-7s %-44s %12s  %s\n", "gpu", "op", "problem", "calls", "exact winner");
  printf("%-24.24s %-7s %-44s %12lld  %s\n", l->gpu, p->op, problem, (long long)calls,
         tuned ? w.config : "-");
  return 0;
}

/* --seen: every GPU's recorded sizes (of op, unless NULL). */
static int show_seen(pm_ctx *c, pm__db *db, const pm__op *which, unsigned dtypes) {
  sqlite3 *h = pm__db_handle(db);
  sqlite3_stmt *st = NULL;
  seen_list l = {c, db, NULL, NULL, dtypes, 0};
  int status = CLI_OK, rc;
  if (sqlite3_prepare_v2(h,
                         "SELECT id, uuid, name, cc_major, cc_minor, sm_count, mem_bytes FROM gpu"
                         " ORDER BY name, id",
                         -1, &st, NULL) != SQLITE_OK) {
    status = cli_fail("show", "%s: %s", pm__db_filename(db), sqlite3_errmsg(h));
    goto done;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    pm__device_info d;
    pm__db_known known;
    memset(&d, 0, sizeof d);
    snprintf(d.uuid, sizeof d.uuid, "%s", (const char *)sqlite3_column_text(st, 1));
    snprintf(d.name, sizeof d.name, "%s", (const char *)sqlite3_column_text(st, 2));
    d.cc_major = sqlite3_column_int(st, 3);
    d.cc_minor = sqlite3_column_int(st, 4);
    d.sm_count = sqlite3_column_int(st, 5);
    d.mem_bytes = (size_t)sqlite3_column_int64(st, 6);
    l.gpu = d.name;
    l.known = &known;
    if (cli_known_load(db, &d, which, &known) != PM_OK) {
      status = cli_fail("show", "%s", pm_errmsg(c));
      goto done;
    }
    int r = pm__db_seen_list(db, sqlite3_column_int64(st, 0), which ? which->name : NULL, 0,
                             show_seen_row, &l);
    pm__db_known_free(&known);
    if (r != PM_OK) {
      status = cli_fail("show", "%s", pm_errmsg(c));
      goto done;
    }
  }
  if (rc != SQLITE_DONE) {
    status = cli_fail("show", "%s: %s", pm__db_filename(db), sqlite3_errmsg(h));
    goto done;
  }
  if (l.rows == 0)
    printf("no sizes recorded%s%s%s in %s: library calls record the sizes they serve without a "
           "tuned winner when recording is on\n",
           which ? " for " : "", which ? which->name : "", dtypes ? " of those types" : "",
           pm__db_filename(db));
done:
  sqlite3_finalize(st);
  return status;
}

int cmd_show(int argc, char **argv) {
  const char *op = NULL, *dbpath = NULL;
  int seen = 0;
  unsigned dtypes = 0;
  char ophelp[160];
  const cli_option options[] = {
      CLI_STRING(0, "op", "OP", &op,
                 cli_op_help(ophelp, sizeof ophelp, "only this operation (", ", ", ")")),
      CLI_DTYPE(&dtypes, "only these element types (a list: f32,bf16; default: every type)"),
      CLI_FLAG(0, "seen", &seen,
               "list the sizes that library calls recorded as served without an exact winner, "
               "with their call counts, instead of the winners"),
      CLI_DB(&dbpath),
      CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, NULL);
  if (parsed != CLI_OK) return parsed;
  const pm__op *which = NULL;
  if (op != NULL && cli_op_arg("show", op, 0, &which) != CLI_OK) return CLI_USAGE;
  if (cli_dtype_check("show", which, dtypes) != CLI_OK) return CLI_USAGE;

  pm_ctx *c = NULL;
  pm__db *db = NULL;
  sqlite3_stmt *st = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  int status = CLI_OK, rows = 0;
  if (pm_open(&c, &o) != PM_OK || pm__db_open(c, dbpath, PM__DB_READONLY, pm__ops_db(), &db) != PM_OK) {
    status = cli_fail("show", "%s", pm_errmsg(c));
    goto done;
  }
  if (seen) {
    status = show_seen(c, db, which, dtypes);
    goto done;
  }
  static const char sql[] =
      "SELECT gpu_name, op, problem, config, median_ms, gbps, speedup, seed_config, dtype"
      "  FROM winner WHERE ?1 IS NULL OR op = ?1"
      " ORDER BY gpu_name, op, dtype <> 'f32', dtype, variant, radius, coalesce(rows * cols, n)";
  sqlite3 *h = pm__db_handle(db);
  if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK ||
      sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC) != SQLITE_OK) {
    status = cli_fail("show", "%s: %s", pm__db_filename(db), sqlite3_errmsg(h));
    goto done;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (!dtype_listed(dtypes, (const char *)sqlite3_column_text(st, 8))) continue;
    if (rows++ == 0)
      printf("%-24s %-7s %-5s %-36s %-48s %10s %7s %8s\n", "gpu", "op", "type", "problem", "winner",
             "median ms", "GB/s", "vs seed");
    char speed[16] = "-";
    if (sqlite3_column_type(st, 6) != SQLITE_NULL)
      snprintf(speed, sizeof speed, "%.2fx", sqlite3_column_double(st, 6));
    printf("%-24.24s %-7s %-5s %-36s %-48s %10.4f %7.0f %8s\n", sqlite3_column_text(st, 0),
           sqlite3_column_text(st, 1), sqlite3_column_text(st, 8), sqlite3_column_text(st, 2),
           sqlite3_column_text(st, 3),
           sqlite3_column_double(st, 4), sqlite3_column_double(st, 5), speed);
  }
  if (rc != SQLITE_DONE) {
    status = cli_fail("show", "%s: %s", pm__db_filename(db), sqlite3_errmsg(h));
    goto done;
  }
  if (rows == 0 && dtypes != 0)
    printf("no winners of those types in %s: run 'pmtune tune --dtype T'\n", pm__db_filename(db));
  else if (rows == 0)
    printf("nothing tuned yet in %s: run 'pmtune tune'\n", pm__db_filename(db));
done:
  sqlite3_finalize(st);
  pm__db_close(db);
  pm_close(c);
  return status;
}
