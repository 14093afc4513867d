/* cmd_show.c: `pmtune show`, the winners stored in the tuning database, one line per (GPU, op,
 * problem), read from its `winner` view. */
#include <string.h>

#include "cli.h"
#include "pmdb.h"

static const char about[] =
    "Lists the winner of every tuned (GPU, op, problem) of the current templates: its\n"
    "configuration, median time, bandwidth, and its speedup over the seed configuration.\n"
    "The same as: sqlite3 PATH 'SELECT * FROM winner'.\n";

static const cli_help help = {.cmd = "show", .about = about};

int cmd_show(int argc, char **argv) {
  const char *op = NULL, *dbpath = NULL;
  const cli_option options[] = {
      CLI_STRING(0, "op", "OP", &op, "only this operation (matadd, reduce, filter, add)"),
      CLI_DB(&dbpath),
      CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, NULL);
  if (parsed != CLI_OK) return parsed;
  const pm__op *which;
  if (op != NULL && cli_op_arg("show", op, 0, &which) != CLI_OK) return CLI_USAGE;

  pm_ctx *c = NULL;
  pm__db *db = NULL;
  sqlite3_stmt *st = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  int status = CLI_OK, rows = 0;
  if (pm_open(&c, &o) != PM_OK || pm__db_open(c, dbpath, PM__DB_READONLY, pm__ops_db(), &db) != PM_OK) {
    status = cli_fail("show", "%s", pm_errmsg(c));
    goto done;
  }
  static const char sql[] =
      "SELECT gpu_name, op, problem, config, median_ms, gbps, speedup, seed_config"
      "  FROM winner WHERE ?1 IS NULL OR op = ?1"
      " ORDER BY gpu_name, op, variant, radius, coalesce(rows * cols, n)";
  sqlite3 *h = pm__db_handle(db);
  if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK ||
      sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC) != SQLITE_OK) {
    status = cli_fail("show", "%s: %s", pm__db_filename(db), sqlite3_errmsg(h));
    goto done;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (rows++ == 0)
      printf("%-24s %-7s %-36s %-48s %10s %7s %8s\n", "gpu", "op", "problem", "winner", "median ms",
             "GB/s", "vs seed");
    char speed[16] = "-";
    if (sqlite3_column_type(st, 6) != SQLITE_NULL)
      snprintf(speed, sizeof speed, "%.2fx", sqlite3_column_double(st, 6));
    printf("%-24.24s %-7s %-36s %-48s %10.4f %7.0f %8s\n", sqlite3_column_text(st, 0),
           sqlite3_column_text(st, 1), sqlite3_column_text(st, 2), sqlite3_column_text(st, 3),
           sqlite3_column_double(st, 4), sqlite3_column_double(st, 5), speed);
  }
  if (rc != SQLITE_DONE) {
    status = cli_fail("show", "%s: %s", pm__db_filename(db), sqlite3_errmsg(h));
    goto done;
  }
  if (rows == 0) printf("nothing tuned yet in %s: run 'pmtune tune'\n", pm__db_filename(db));
done:
  sqlite3_finalize(st);
  pm__db_close(db);
  pm_close(c);
  return status;
}
