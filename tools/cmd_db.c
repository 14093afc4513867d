/* cmd_db.c: `pmtune db path|init|check`: which tuning database is in use, create it, check it. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pmdb.h"

static const char about[] =
    "The tuning database: one SQLite file that tuning runs write, library calls read and\n"
    "people can open with sqlite3 (db/README.md describes its tables and queries).\n"
    "\n"
    "  path        print which file is in use\n"
    "  init        create it (and its directories), or bring its schema up to date\n"
    "  check       run SQLite's integrity check and pmtune's own (schema version, orphan\n"
    "              rows, every object that is not pmtune's: a trigger is a problem) and\n"
    "              say what was found; status 1 if anything is wrong\n";

static const cli_help help = {.cmd = "db", .operands = "path|init|check", .about = about};

int cmd_db(int argc, char **argv) {
  const char *dbpath = NULL;
  int first;
  const cli_option options[] = {
      CLI_CALLBACK(0, "db", "PATH", &dbpath, cli_db_option,
                   "use this file; otherwise $PMTUNE_DB, else "
                   "$XDG_CACHE_HOME/pmtune/pmtune.db, else ~/.cache/pmtune/pmtune.db"),
      CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, &first);
  if (parsed != CLI_OK) return parsed;
  if (first == argc) return cli_usage_error("db", "no action given (path, init or check)");
  const char *action = argv[first];
  if (first + 1 < argc) return cli_usage_error("db", "unexpected argument '%s'", argv[first + 1]);
  if (strcmp(action, "path") != 0 && strcmp(action, "init") != 0 && strcmp(action, "check") != 0)
    return cli_usage_error("db", "unknown action '%s' (path, init or check)", action);

  pm_ctx *c = NULL;
  pm_options opts = {.device = PM_DEVICE_NONE};
  pm__db *db = NULL;
  char path[PM__DB_PATH_MAX], *report = NULL;
  int status = CLI_OK, problems = 0;
  if (pm_open(&c, &opts) != PM_OK) {
    status = cli_fail("db", "%s", pm_errmsg(c));
    goto done;
  }
  if (pm__db_path(c, dbpath, path, sizeof path) != PM_OK) {
    status = cli_fail("db", "%s", pm_errmsg(c));
    goto done;
  }
  if (strcmp(action, "path") == 0) {
    printf("%s\n", path);
    goto done;
  }
  if (strcmp(action, "init") == 0) {
    int was, now;
    if (pm__db_open(c, path, 0, pm__ops_db(), &db) != PM_OK) {
      status = cli_fail("db", "%s", pm_errmsg(c));
      goto done;
    }
    pm__db_schema(db, &was, &now);
    if (was == now)
      printf("%s: schema version %d, up to date\n", path, now);
    else if (was == 0)
      printf("%s: created, schema version %d\n", path, now);
    else
      printf("%s: schema version %d brought up to %d\n", path, was, now);
    goto done;
  }
  /* check: reads only, and never creates the file. */
  if (pm__db_open(c, path, PM__DB_READONLY, pm__ops_db(), &db) != PM_OK ||
      pm__db_check(db, &report, &problems) != PM_OK) {
    status = cli_fail("db", "%s", pm_errmsg(c));
    goto done;
  }
  cli_user_text(report); /* a check that failed says so without pmtune's source tags */
  printf("%s\n%s", path, report);
  if (problems > 0)
    status = cli_fail("db", "%s: %d problem%s found", path, problems, problems == 1 ? "" : "s");
  else
    printf("no problems found\n");
done:
  free(report);
  pm__db_close(db);
  pm_close(c);
  return status;
}
