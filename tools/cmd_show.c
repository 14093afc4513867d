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
  const pm__op *which;       /* only this op's sizes; NULL: every op's */
  const pm__device_info *gpu;
  pm__db_known known;        /* what is tuned for this GPU, loaded at its first recorded size */
  int loaded, failed;        /* known is loaded; loading it failed (the listing stops) */
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
  if (!l->loaded) { /* a GPU with no recorded size (a fleet's import) costs no snapshot */
    if (cli_known_load(l->db, l->gpu, l->which, &l->known) != PM_OK) return l->failed = 1;
    l->loaded = 1;
  }
  int tuned = pm__db_known_get_if(&l->known, p, NULL, NULL, &w) == PM_OK;
  if (l->rows++ == 0)
    printf("%-24s %-7s %-44s %12s  %s\n", "gpu", "op", "problem", "calls", "exact winner");
  printf("%-24.24s %-7s %-44s %12lld  %s\n", l->gpu->name, p->op, problem, (long long)calls,
         tuned ? w.config : "-");
  return 0;
}

/* A pm__db_gpus callback: lists one GPU's recorded sizes. */
static int show_gpu_seen(void *arg, int64_t id, const pm__device_info *d) {
  seen_list *l = arg;
  l->gpu = d, l->loaded = 0;
  int r = pm__db_seen_list(l->db, id, l->which ? l->which->name : NULL, 0, show_seen_row, l);
  if (l->loaded) pm__db_known_free(&l->known);
  return l->failed ? PM_EDB : r;
}

/* --seen: every GPU's recorded sizes (of op, unless NULL). */
static int show_seen(pm_ctx *c, pm__db *db, const pm__op *which, unsigned dtypes) {
  seen_list l = {.c = c, .db = db, .which = which, .dtypes = dtypes};
  if (pm__db_gpus(db, show_gpu_seen, &l) != PM_OK) return cli_fail("show", "%s", pm_errmsg(c));
  if (l.rows == 0)
    printf("no sizes recorded%s%s%s in %s: library calls record the sizes they serve without a "
           "tuned winner when recording is on\n",
           which ? " for " : "", which ? which->name : "", dtypes ? " of those types" : "",
           pm__db_filename(db));
  return CLI_OK;
}

/* What listing the winners needs. */
typedef struct winner_list {
  unsigned dtypes; /* the types to list, a bit per pm_dtype; 0: all */
  int rows;
} winner_list;

/* A pm__db_winners callback: prints one winner. */
static int show_winner(void *arg, const pm__db_winner_row *w) {
  winner_list *l = arg;
  if (!dtype_listed(l->dtypes, w->dtype)) return 0;
  if (l->rows++ == 0)
    printf("%-24s %-7s %-5s %-36s %-48s %10s %7s %8s\n", "gpu", "op", "type", "problem", "winner",
           "median ms", "GB/s", "vs seed");
  char speed[16] = "-";
  if (w->speedup > 0) snprintf(speed, sizeof speed, "%.2fx", w->speedup);
  printf("%-24.24s %-7s %-5s %-36s %-48s %10.4f %7.0f %8s\n", w->gpu_name, w->op, w->dtype,
         w->problem, w->config, w->median_ms, w->gbps, speed);
  return 0;
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
  pm_options o = {.device = PM_DEVICE_NONE};
  int status = CLI_OK;
  winner_list l = {dtypes, 0};
  if (pm_open(&c, &o) != PM_OK || pm__db_open(c, dbpath, PM__DB_READONLY, pm__ops_db(), &db) != PM_OK) {
    status = cli_fail("show", "%s", pm_errmsg(c));
    goto done;
  }
  if (seen) {
    status = show_seen(c, db, which, dtypes);
    goto done;
  }
  if (pm__db_winners(db, op, PM__DB_WINNERS_BY_NAME, show_winner, &l) != PM_OK) {
    status = cli_fail("show", "%s", pm_errmsg(c));
    goto done;
  }
  int rows = l.rows;
  if (rows == 0 && dtypes != 0)
    printf("no winners of those types in %s: run 'pmtune tune --dtype T'\n", pm__db_filename(db));
  else if (rows == 0)
    printf("nothing tuned yet in %s: run 'pmtune tune'\n", pm__db_filename(db));
done:
  pm__db_close(db);
  pm_close(c);
  return status;
}
