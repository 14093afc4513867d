/* cmd_db.c: `pmtune db path|init|check`: which tuning database is in use, create it, check it. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pmdb.h"

const char cmd_db_usage[] =
    "usage: pmtune db path|init|check [--db PATH]\n"
    "\n"
    "The tuning database: one SQLite file that tuning runs write, library calls read and\n"
    "people can open with sqlite3 (db/README.md describes its tables and queries).\n"
    "\n"
    "  path        print which file is in use\n"
    "  init        create it (and its directories), or bring its schema up to date\n"
    "  check       run SQLite's integrity check and pmtune's own (schema version, orphan\n"
    "              rows) and say what was found; status 1 if anything is wrong\n"
    "\n"
    "  --db PATH   use this file; otherwise $PMTUNE_DB, else $XDG_CACHE_HOME/pmtune/pmtune.db,\n"
    "              else ~/.cache/pmtune/pmtune.db\n";

int cmd_db(int argc, char **argv) {
  static const struct option longopts[] = {{"db", required_argument, 0, 'd'}, {0, 0, 0, 0}};
  const char *dbpath = NULL;
  int ch;
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
    switch (ch) {
      case 'd':
        if (cli_db_arg("db", optarg, &dbpath) != CLI_OK) return CLI_USAGE;
        break;
      default: return cli_bad_option("db", argv, ch);
    }
  }
  if (optind == argc) return cli_usage_error("db", "no action given (path, init or check)");
  const char *action = argv[optind];
  if (optind + 1 < argc) return cli_usage_error("db", "unexpected argument '%s'", argv[optind + 1]);
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
