/* cmd_report.c: `pmtune report --svg FILE`, a picture of what tuning found: per operation, bars of
 * the tuned and the seed configuration's bandwidth (and the copy ceiling, from `pmtune bench
 * --json` output); per problem, a heat map of time over the space's first two axes. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kernel_file.h"
#include "pmdb.h"

static const char about[] =
    "Draws what the tuning database holds as one SVG file: for each operation, a bar chart of\n"
    "the bandwidth of the tuned winner and of the seed configuration at each tuned size (and\n"
    "of the device-to-device copy, the ceiling, where --bench gives it), and for each tuned\n"
    "problem a heat map of the best time over the space's first two axes (block x and y, or\n"
    "block and items), the winner's cell outlined, so that one sees where the winner sits;\n"
    "its legend gives the colours as times (green the best, red the worst, on a log scale).\n"
    "A problem with fewer than 4 cells measured (an export of winners alone holds one) gets a\n"
    "line saying so instead of a map.\n";

static const cli_help help = {.cmd = "report", .about = about};

#define REPORT_ROWS 256 /* the most winners of one op drawn */

typedef struct problem_row {
  char problem[PM__DB_PROBLEM_MAX], text[96], config[PM__DB_CONFIG_MAX], params[PM__DB_PARAMS_MAX];
  double gbps, seed_gbps, ceiling_gbps;
  int64_t gpu_id;
} problem_row;

/* The ceiling `pmtune bench --json` measured for this op and problem text, or 0. */
static double ceiling_of(const char *bench, const char *op, const char *text) {
  char key[160];
  snprintf(key, sizeof key, "\"op\":\"%s\",\"problem\":\"%s\"", op, text);
  const char *p = bench ? strstr(bench, key) : NULL, *c = p ? strstr(p, "\"ceiling_gbps\":") : NULL;
  const char *eol = p ? strchr(p, '\n') : NULL;
  return c != NULL && (eol == NULL || c < eol) ? strtod(c + 15, NULL) : 0;
}

#define MAX_BENCH ((size_t)64 << 20) /* a bench document is some kilobytes: 334 lines, 150 KB */

/* Why bench[0..len) is not what `pmtune bench --json` writes (one JSON object a line, each with
 * an "op" and a "problem" text and a "ceiling_gbps" number), or NULL where it is; db reads the
 * JSON. A database, /proc/self/maps or a picture is refused, not read as no ceilings. */
static const char *bench_why(pm__db *db, const char *bench, size_t len) {
  static char why[96];
  static const char *const paths[4] = {"$", "$.op", "$.problem", "$.ceiling_gbps"};
  if (strlen(bench) != len) return "a NUL byte: a binary file";
  int lines = 0, objects = 0;
  for (const char *p = bench; *p != '\0'; lines++) {
    const char *eol = strchr(p, '\n'), *next = eol ? eol + 1 : p + strlen(p);
    size_t n = (size_t)(next - p);
    while (n > 0 && strchr(" \t\r\n", p[n - 1]) != NULL) n--;
    const char *start = p;
    p = next;
    if (n == 0) continue; /* a blank line */
    char types[4][8];
    int valid = -1;
    if (pm__db_json_types(db, start, (int)n, paths, 4, types, &valid) != PM_OK || !valid) {
      snprintf(why, sizeof why, "line %d: %s", lines + 1,
               valid == 0 ? "not JSON" : "SQLite cannot read JSON");
      return why;
    }
    const char *missing = strcmp(types[0], "object") != 0 ? "not a JSON object"
                          : strcmp(types[1], "text") != 0 ? "no \"op\" text"
                          : strcmp(types[2], "text") != 0 ? "no \"problem\" text"
                          : strcmp(types[3], "real") != 0 && strcmp(types[3], "integer") != 0
                              ? "no \"ceiling_gbps\" number"
                              : NULL;
    if (missing != NULL) {
      snprintf(why, sizeof why, "line %d: %s", lines + 1, missing);
      return why;
    }
    objects++;
  }
  return objects == 0 ? "empty: no line of results" : NULL;
}

static void bars(FILE *f, double y0, const pm__op *op, const problem_row *rows, int n) {
  double top = 1;
  for (int i = 0; i < n; i++)
    top = fmax(top, fmax(rows[i].gbps, fmax(rows[i].seed_gbps, rows[i].ceiling_gbps)));
  fprintf(f, "<text x='20' y='%.0f' font-size='18' font-weight='bold'>%s: GB/s at each tuned size</text>\n",
          y0 + 20, op->name);
  const char *colour[3] = {"#2b7bba", "#d95f02", "#999999"}, *label[3] = {"tuned", "seed", "copy ceiling"};
  for (int k = 0; k < 3; k++)
    fprintf(f, "<rect x='%d' y='%.0f' width='12' height='12' fill='%s'/><text x='%d' y='%.0f' font-size='12'>%s</text>\n",
            620 + 110 * k, y0 + 9, colour[k], 636 + 110 * k, y0 + 20, label[k]);
  double base = y0 + 230, h = 180, w = 960.0 / (n ? n : 1);
  fprintf(f, "<line x1='20' y1='%.0f' x2='980' y2='%.0f' stroke='black'/>\n", base, base);
  for (int i = 0; i < n; i++) {
    double v[3] = {rows[i].gbps, rows[i].seed_gbps, rows[i].ceiling_gbps}, bw = fmin(40, w / 4);
    for (int k = 0; k < 3; k++) {
      if (v[k] <= 0) continue;
      double x = 20 + w * i + w / 2 - 1.5 * bw + k * bw, bh = h * v[k] / top;
      fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'><title>%s %s: %.0f GB/s</title></rect>\n",
              x, base - bh, bw - 2, bh, colour[k], rows[i].text, label[k], v[k]);
      fprintf(f, "<text x='%.1f' y='%.1f' font-size='9' text-anchor='middle'>%.0f</text>\n", x + bw / 2 - 1, base - bh - 3, v[k]);
    }
    const char *sp = strchr(rows[i].text, ' '); /* the size, then the rest below it */
    int first = sp ? (int)(sp - rows[i].text) : (int)strlen(rows[i].text);
    fprintf(f, "<text x='%.1f' y='%.0f' font-size='10' text-anchor='middle'>%.*s</text>\n",
            20 + w * i + w / 2, base + 13, first, rows[i].text);
    if (sp != NULL)
      fprintf(f, "<text x='%.1f' y='%.0f' font-size='9' text-anchor='middle'>%s</text>\n",
              20 + w * i + w / 2, base + 24, sp + 1);
  }
}

/* A map needs this many measured cells to draw: fewer say nothing about the space's shape. */
#define HEAT_MIN_CELLS 4

/* The colour of a cell at t in [0, 1] (0 the best time, 1 the worst): green through yellow to
 * red, blue fixed. */
static void shade(double t, int *red, int *green) {
  *red = (int)(255 * fmin(1, 2 * t));
  *green = (int)(255 * fmin(1, 2 * (1 - t)));
}

/* What a heat map's cells are gathered into. */
typedef struct heat_cells {
  const pm__param *ax, *ay;
  double (*cell)[PM__MAX_VALUES];
  double best, worst;
} heat_cells;

/* A pm__db_best_times callback: one cell's time, where both values are the axes' own. */
static int heat_cell(void *arg, int64_t vx, int64_t vy, double ms) {
  heat_cells *h = arg;
  int ix = -1, iy = -1;
  for (int k = 0; k < h->ax->nvalues; k++) ix = h->ax->values[k] == vx ? k : ix;
  for (int k = 0; k < h->ay->nvalues; k++) iy = h->ay->values[k] == vy ? k : iy;
  if (ix >= 0 && iy >= 0)
    h->cell[ix][iy] = ms, h->best = fmin(h->best, ms), h->worst = fmax(h->worst, ms);
  return 0;
}

/* The heat map of one problem, with its legend, or a line saying there are too few measurements
 * for one; returns its height. */
static double heat(FILE *f, pm__db *db, double y0, double x0, const pm__op *op, const problem_row *r) {
  const pm__param *ax = &op->params[0], *ay = &op->params[1];
  double cell[PM__MAX_VALUES][PM__MAX_VALUES], best = DBL_MAX, worst = 0;
  for (int i = 0; i < PM__MAX_VALUES; i++)
    for (int j = 0; j < PM__MAX_VALUES; j++) cell[i][j] = 0;
  heat_cells hc = {ax, ay, cell, DBL_MAX, 0};
  pm__db_best_times(db, op->name, r->problem, r->gpu_id, ax->name, ay->name, heat_cell, &hc);
  best = hc.best, worst = hc.worst;
  int wx = -1, wy = -1, v[PM__MAX_PARAMS];
  if (pm__config_parse(NULL, op, r->config, v) == PM_OK)
    for (int k = 0; k < PM__MAX_VALUES; k++) {
      if (k < ax->nvalues && ax->values[k] == v[0]) wx = k;
      if (k < ay->nvalues && ay->values[k] == v[1]) wy = k;
    }
  const double cw = 34, ch = 20;
  int filled = 0;
  for (int i = 0; i < ax->nvalues; i++)
    for (int j = 0; j < ay->nvalues; j++) filled += cell[i][j] > 0;
  if (filled < HEAT_MIN_CELLS) { /* a map of one or two cells says nothing: say so instead */
    fprintf(f, "<text x='%.0f' y='%.0f' font-size='12'>%s %s: %d of the %d cells of %s x %s "
               "measured, too few for a map (a tuning run measures more; an export of winners "
               "holds one)</text>\n",
            x0, y0 + 14, op->name, r->text, filled, ax->nvalues * ay->nvalues, ax->name, ay->name);
    return 24;
  }
  fprintf(f, "<text x='%.0f' y='%.0f' font-size='12'>%s %s: best time over %s x %s</text>\n", x0,
          y0 + 14, op->name, r->text, ax->name, ay->name);
  for (int i = 0; i < ax->nvalues; i++) {
    fprintf(f, "<text x='%.0f' y='%.0f' font-size='9' text-anchor='middle'>%d</text>\n",
            x0 + 40 + cw * i + cw / 2, y0 + 30, ax->values[i]);
    for (int j = 0; j < ay->nvalues; j++) {
      double x = x0 + 40 + cw * i, y = y0 + 34 + ch * j;
      if (i == 0)
        fprintf(f, "<text x='%.0f' y='%.0f' font-size='9' text-anchor='end'>%d</text>\n", x0 + 36, y + 14, ay->values[j]);
      if (cell[i][j] <= 0) {
        fprintf(f, "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='#eeeeee'/>\n", x, y, cw - 1, ch - 1);
        continue;
      }
      double t = worst > best ? log(cell[i][j] / best) / log(worst / best) : 0; /* 0 best, 1 worst */
      int red, green;
      shade(t, &red, &green);
      fprintf(f, "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='rgb(%d,%d,60)'%s><title>%s=%d %s=%d: %.4f ms</title></rect>\n",
              x, y, cw - 1, ch - 1, red, green, i == wx && j == wy ? " stroke='black' stroke-width='3' class='winner'" : "",
              ax->name, ax->values[i], ay->name, ay->values[j], cell[i][j]);
    }
  }
  /* The legend: the colours as times (the scale is logarithmic: the middle is the geometric
   * mean of the best and the worst), grey unmeasured, the winner outlined. */
  double ly = y0 + 40 + ch * ay->nvalues, lx = x0 + 40;
  const double ts[3] = {0, 0.5, 1};
  for (int k = 0; k < 3; k++) {
    int red, green;
    shade(ts[k], &red, &green);
    double ms = worst > best ? best * pow(worst / best, ts[k]) : best;
    fprintf(f, "<rect x='%.0f' y='%.0f' width='14' height='12' fill='rgb(%d,%d,60)'/>"
               "<text x='%.0f' y='%.0f' font-size='9' class='legend'>%s %.4g ms</text>\n",
            lx, ly, red, green, lx + 18, ly + 10, k == 0 ? "best" : k == 1 ? "mid" : "worst", ms);
    lx += 100;
  }
  fprintf(f, "<rect x='%.0f' y='%.0f' width='14' height='12' fill='#eeeeee'/>"
             "<text x='%.0f' y='%.0f' font-size='9' class='legend'>not measured</text>\n"
             "<rect x='%.0f' y='%.0f' width='12' height='10' fill='none' stroke='black' "
             "stroke-width='2'/><text x='%.0f' y='%.0f' font-size='9' class='legend'>winner</text>\n",
            lx, ly, lx + 18, ly + 10, lx + 90, ly + 1, lx + 106, ly + 10);
  return 60 + ch * ay->nvalues;
}

/* What gathering an op's winners needs. */
typedef struct row_list {
  const pm__op *op;
  const char *bench; /* pmtune bench --json's output, for the ceilings; NULL: none */
  problem_row *rows; /* REPORT_ROWS of them */
  int n;
} row_list;

/* A pm__db_winners callback: one winner into the next row; 1 (stop) once REPORT_ROWS are. */
static int report_row(void *arg, const pm__db_winner_row *w) {
  row_list *l = arg;
  problem_row *r = &l->rows[l->n++];
  snprintf(r->problem, sizeof r->problem, "%s", w->problem);
  snprintf(r->config, sizeof r->config, "%s", w->config);
  snprintf(r->params, sizeof r->params, "%s", w->params);
  r->gbps = w->gbps;
  r->seed_gbps = w->seed_median_ms > 0 ? w->gbps * w->median_ms / w->seed_median_ms : 0;
  r->gpu_id = w->gpu_id;
  pm__problem pr = {.rows = (unsigned)w->rows,
                    .cols = (unsigned)w->cols,
                    .n = (unsigned)w->n,
                    .radius = w->radius,
                    .variant = pm__variant_index(l->op, w->variant ? w->variant : "")};
  pm__problem_text(l->op, &pr, r->text, sizeof r->text);
  r->ceiling_gbps = ceiling_of(l->bench, l->op->name, r->text);
  return l->n == REPORT_ROWS;
}

int cmd_report(int argc, char **argv) {
  const char *svg = NULL, *benchfile = NULL, *opname = NULL, *dbpath = NULL, *kfile = NULL;
  const cli_option options[] = {
      CLI_STRING_F(0, "svg", "FILE", &svg, CLI_REQUIRED,
                   "where to write the picture (a regular file, replaced whole, or a new one)"),
      CLI_STRING(0, "bench", "FILE", &benchfile,
                 "the output of 'pmtune bench --json', for the ceilings (anything else is "
                 "refused)"),
      CLI_STRING(0, "op", "OP", &opname, "only this operation"),
      CLI_STRING(0, "kernel", "FILE", &kfile,
                 "only this kernel of your own, described in FILE (JSON); not with --op"),
      CLI_DB(&dbpath),
      CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, NULL);
  if (parsed != CLI_OK) return parsed;
  if (svg == NULL || svg[0] == '\0') return cli_usage_error("report", "no --svg FILE given");
  const pm__op *only = NULL;
  if (opname != NULL && kfile != NULL)
    return cli_usage_error("report", "--op and --kernel: one or the other");
  if (opname != NULL && cli_op_arg("report", opname, 0, &only) != CLI_OK) return CLI_USAGE;

  char *bench = NULL;
  size_t bench_len = 0;
  if (benchfile != NULL && (bench = pm__read_file(benchfile, MAX_BENCH, &bench_len)) == NULL)
    return cli_fail("report", "cannot read '%s': %s", benchfile,
                    errno == EFBIG ? "larger than a bench document (64 MiB)"
                                   : pm__file_strerror(errno));
  pm_ctx *c = NULL;
  pm__db *db = NULL;
  FILE *f = NULL, *out = NULL;
  pm__file_out svg_out = {0};
  char *body = NULL;
  size_t body_len = 0;
  pm_options o = {.device = PM_DEVICE_NONE};
  int status = CLI_OK, drawn = 0;
  problem_row *rows = calloc(REPORT_ROWS, sizeof *rows);
  pm__kernel_desc *kf = NULL;
  pm__ops_db_plus plus;
  const pm__db_op *const *dbops = NULL;
  const pm__op *list[PM__MAX_OPS + 1] = {NULL}; /* the ops drawn */
  if (rows == NULL || pm_open(&c, &o) != PM_OK) {
    status = cli_fail("report", "%s", rows ? pm_errmsg(c) : "out of memory");
    goto done;
  }
  if ((status = cli_kernel_load("report", c, kfile, &kf, &plus, &dbops)) != CLI_OK) goto done;
  if (pm__db_open(c, dbpath, PM__DB_READONLY, dbops, &db) != PM_OK) {
    status = cli_fail("report", "%s", pm_errmsg(c));
    goto done;
  }
  const char *why = bench != NULL ? bench_why(db, bench, bench_len) : NULL;
  if (why != NULL) {
    status = cli_fail("report", "--bench '%s': not the output of 'pmtune bench --json' (%s)",
                      benchfile, why);
    goto done;
  }
  if (cli_same_file(svg, pm__db_filename(db))) {
    status = cli_fail("report", "'%s' is the tuning database itself: the picture would replace it",
                      svg);
    goto done;
  }
  if (pm__file_create(&svg_out, svg) != 0) { /* refused before drawing; a link is not followed */
    status = cli_fail("report", "cannot write '%s': %s", svg, pm__file_strerror(errno));
    goto done;
  }
  if (kf != NULL)
    list[0] = pm__kernel_desc_op(kf);
  else
    for (int k = 0, n = 0; pm__ops[k] != NULL && k < PM__MAX_OPS; k++)
      if (only == NULL || pm__ops[k] == only) list[n++] = pm__ops[k];
  if ((f = open_memstream(&body, &body_len)) == NULL) { /* the body first: then its height is known */
    status = cli_fail("report", "out of memory");
    goto done;
  }
  double y = 10;
  for (int k = 0; list[k] != NULL; k++) {
    const pm__op *op = list[k];
    row_list rl = {op, bench, rows, 0};
    if (pm__db_winners(db, op->name, PM__DB_WINNERS_BY_GPU, report_row, &rl) < 0) {
      status = cli_fail("report", "%s", pm_errmsg(c));
      goto done;
    }
    int n = rl.n;
    if (n == 0) continue;
    bars(f, y, op, rows, n);
    y += 270;
    for (int i = 0; i < n; i += 2) {
      double h1 = heat(f, db, y, 20, op, &rows[i]), h2 = i + 1 < n ? heat(f, db, y, 510, op, &rows[i + 1]) : 0;
      y += fmax(h1, h2) + 10;
    }
    drawn += n;
  }
  fclose(f);
  f = NULL;
  if (drawn == 0) {
    status = cli_fail("report", "nothing tuned in %s to draw: run 'pmtune tune'", pm__db_filename(db));
    goto done;
  }
  out = svg_out.f;
  if (fprintf(out, "<svg xmlns='http://www.w3.org/2000/svg' width='1000' height='%d' "
                   "font-family='sans-serif'>\n<rect width='100%%' height='100%%' fill='white'/>\n",
              (int)(y + 20)) < 0 ||
      fwrite(body, 1, body_len, out) != body_len || fputs("</svg>\n", out) < 0 ||
      pm__file_commit(&svg_out) != 0) {
    status = cli_fail("report", "cannot write '%s': %s", svg, pm__file_strerror(errno));
    goto done;
  }
  printf("wrote %s: %d tuned problems from %s\n", svg, drawn, pm__db_filename(db));
done:
  if (f) fclose(f);
  pm__file_abort(&svg_out);
  free(body);
  free(rows);
  free(bench);
  pm__db_close(db);
  pm__kernel_desc_free(kf);
  pm_close(c);
  return status;
}
