/* cmd_explain.c: `pmtune explain`, which configuration a library call would get on this GPU for
 * a size, and why: tuned for exactly it, tuned for the nearest size, or the built-in default. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve.h"

const char cmd_explain_usage[] =
    "usage: pmtune explain --op OP --size S [--radius R] [--order row|col] [--border clamp|zero]\n"
    "                      [--align BYTES] [--device N] [--json] [--db PATH]\n"
    "\n"
    "Says which configuration a call of OP at size S would run on this GPU and why: the winner\n"
    "tuned for exactly this size, the winner at the nearest tuned size (nearest by |ln(size /\n"
    "tuned size)|, size = rows x cols or n, then by aspect ratio), or the built-in default where\n"
    "nothing is tuned; with its measured time where known.\n"
    "\n"
    "  --op OP            matadd, reduce or filter\n"
    "  --size S           ROWSxCOLS (matadd, filter) or N (reduce)\n"
    "  --radius R         filter: 1 to 3 (default 1)\n"
    "  --order row|col    matadd (default row)\n"
    "  --border clamp|zero  filter (default clamp)\n"
    "  --align BYTES      the alignment the caller's pointers and pitches honour: 4, 8 or 16\n"
    "                     (default 16: any vector width)\n"
    "  --device N         which GPU (default 0)\n"
    "  --json             one JSON object instead of text\n"
    "  --db PATH          the tuning database (default: see 'pmtune db --help')\n";

int cmd_explain(int argc, char **argv) {
  static const struct option longopts[] = {
      {"op", required_argument, 0, 'p'},     {"size", required_argument, 0, 's'},
      {"radius", required_argument, 0, 'r'}, {"order", required_argument, 0, 'o'},
      {"border", required_argument, 0, 'b'}, {"align", required_argument, 0, 'a'},
      {"device", required_argument, 0, 'D'}, {"json", no_argument, 0, 'j'},
      {"db", required_argument, 0, 'd'},     {0, 0, 0, 0}};
  const char *opname = NULL, *size = NULL, *dbpath = NULL;
  int json = 0, device = 0, ch;
  long lv;
  pm__problem pr = {.radius = 1, .caller_align = 16};
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
    char *end = NULL;
    switch (ch) {
      case 'p': opname = optarg; break;
      case 's': size = optarg; break;
      case 'r':
      case 'o':
      case 'b':
        if (cli_problem_option("explain", ch, optarg, &pr) != CLI_OK) return CLI_USAGE;
        break;
      case 'a':
        pr.caller_align = (unsigned)strtoul(optarg, &end, 10);
        if (*end || (pr.caller_align != 4 && pr.caller_align != 8 && pr.caller_align != 16))
          return cli_usage_error("explain", "--align '%s': expected 4, 8 or 16", optarg);
        break;
      case 'D':
        if (cli_int_arg("explain", "--device", optarg, 0, 1023, &lv) != CLI_OK) return CLI_USAGE;
        device = (int)lv;
        break;
      case 'j': json = 1; break;
      case 'd':
        if (cli_db_arg("explain", optarg, &dbpath) != CLI_OK) return CLI_USAGE;
        break;
      default: return cli_bad_option("explain", argv, ch);
    }
  }
  if (optind < argc) return cli_usage_error("explain", "unexpected argument '%s'", argv[optind]);
  if (opname == NULL) return cli_usage_error("explain", "no --op given (one of: %s)", cli_op_names());
  const pm__op *op;
  if (cli_op_arg("explain", opname, 0, &op) != CLI_OK) return CLI_USAGE;
  if (size == NULL) return cli_usage_error("explain", "no --size given");

  if (op->radius_max == 0) pr.radius = 0;
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  int status = CLI_OK;
  if (pm_open(&c, &o) != PM_OK || pm__problem_parse(c, op, size, &pr) != PM_OK) {
    status = cli_usage_error("explain", "%s", pm_errmsg(c));
    goto done;
  }
  pm_close(c);
  o.device = device;
  o.db_path = dbpath;
  if (pm_open(&c, &o) != PM_OK) {
    status = cli_fail("explain", "%s", pm_errmsg(c));
    goto done;
  }
  pm__decision d;
  pm__serve_decide(c, op, &pr, &d);
  char ptext[96];
  pm__problem_text(op, &pr, ptext, sizeof ptext);
  if (json) {
    printf("{\"gpu\":\"%s\",\"op\":\"%s\",\"problem\":\"%s\",\"source\":\"%s\",\"config\":\"%s\"",
           c->dev.name, op->name, ptext, pm__source_name(d.source), d.config);
    if (d.source != PM__FROM_DEFAULT)
      printf(",\"tuned_size\":\"%u%s%u\",\"median_ms\":%.6g,\"gbps\":%.6g,\"speedup\":%.6g,"
             "\"distance\":%.6g",
             op->dims == 1 ? d.tuned_n : d.tuned_rows, op->dims == 1 ? "" : "x",
             op->dims == 1 ? 0 : d.tuned_cols, d.median_ms, d.gbps, d.speedup, d.distance);
    else
      printf(",\"why\":\"%s\"", "nothing tuned fits this size on this GPU");
    printf("}\n");
  } else {
    printf("%s %s on %s (GPU %d)\n  runs    %s\n", op->name, ptext, c->dev.name, device, d.config);
    if (d.source == PM__FROM_DEFAULT) {
      printf("  because nothing tuned fits it: the built-in default (%s)\n", d.why);
    } else {
      char tuned[48];
      if (op->dims == 1) snprintf(tuned, sizeof tuned, "n=%u", d.tuned_n);
      else snprintf(tuned, sizeof tuned, "%ux%u", d.tuned_rows, d.tuned_cols);
      printf("  because it is the %s for %s%s\n", d.source == PM__FROM_EXACT ? "winner tuned" : "winner at the nearest tuned size,",
             tuned, d.source == PM__FROM_EXACT ? "" : "");
      if (d.source == PM__FROM_NEAREST) printf("  distance |ln(size / tuned size)| = %.3f\n", d.distance);
      printf("  measured %.4f ms, %.0f GB/s", d.median_ms, d.gbps);
      if (d.speedup > 0) printf(", %.2fx the seed", d.speedup);
      printf(" (at %s)\n", tuned);
    }
  }
done:
  pm_close(c);
  return status;
}
