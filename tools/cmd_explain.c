/* cmd_explain.c: `pmtune explain`, which configuration a library call would get on this GPU for
 * a size, and why: tuned for exactly it, between two tuned sizes, tuned for the nearest size, or
 * the built-in default; and the time predicted for it and for the default. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kernel_file.h"
#include "serve.h"

static const char about[] =
    "Says which configuration a call of OP at size S would run on this GPU and why: the winner\n"
    "tuned for exactly this size; else, between two tuned sizes (next to each other in\n"
    "elements), the configuration measured at both whose slowdown against each size's fastest,\n"
    "interpolated in ln(size), is least; else the winner at the nearest tuned size (nearest by\n"
    "|ln(size / tuned size)|, size = rows x cols or n, then by aspect ratio); each from the\n"
    "tuning database or the results shipped for this GPU's model, whichever answers better,\n"
    "and never one predicted slower than the built-in default where that was measured too;\n"
    "else the built-in default. With the time predicted at this size for what it chose and for\n"
    "the default, and the time measured where known.\n";

static const cli_help help = {.cmd = "explain", .about = about};

/* The callback of --align: the alignment, in bytes, that the caller's pointers and pitches
 * honour, into the unsigned that o->value points to. */
static int align_option(const char *cmd, const cli_option *o, const char *arg) {
  char *end = NULL;
  unsigned long a = strtoul(arg, &end, 10);
  if (*end || (a != 4 && a != 8 && a != 16))
    return cli_usage_error(cmd, "--%s '%s': expected 4, 8 or 16", o->name, arg);
  *(unsigned *)o->value = (unsigned)a;
  return CLI_OK;
}

/* A tuned size as explain shows it: "ROWSxCOLS", "BATCHxROWSxCOLS", or the vector's n after
 * `vector` ("n=" in the text, nothing in JSON). */
static void size_text(const pm__op *op, unsigned rows, unsigned cols, unsigned n,
                      const char *vector, char *out, size_t cap) {
  if (op->dims == 1) snprintf(out, cap, "%s%u", vector, n);
  else if (op->dims == 3) snprintf(out, cap, "%ux%ux%u", n, rows, cols);
  else snprintf(out, cap, "%ux%u", rows, cols);
}

int cmd_explain(int argc, char **argv) {
  const char *opname = NULL, *size = NULL, *dbpath = NULL, *kfile = NULL;
  int json = 0, device = 0;
  pm__problem pr = {.caller_align = 16}; /* radius 0: not given */
  cli_variants cv = CLI_VARIANTS_NONE;
  unsigned dtypes = 0;
  char ophelp[160];
  char sizehelp[200];
  const cli_option options[] = {
      CLI_STRING(0, "op", "OP", &opname, cli_op_help(ophelp, sizeof ophelp, "", " or ", "")),
      CLI_STRING(0, "kernel", "FILE", &kfile,
                 "a kernel of your own, described in FILE (JSON), instead of --op: what "
                 "pm_kernel_launch would run"),
      CLI_STRING_F(0, "size", "S", &size, CLI_REQUIRED,
                   cli_size_help(sizehelp, sizeof sizehelp,
                                 "; a filter's radius may follow, ROWSxCOLS:rR")),
      CLI_RADIUS(&pr, "filter: 1 to 3 (default 1)"),
      CLI_ORDER(&cv, "matadd (default row)"),
      CLI_BORDER(&cv, "filter (default clamp)"),
      CLI_DTYPE(&dtypes, "the element type (default f32)"),
      CLI_CALLBACK(0, "align", "BYTES", &pr.caller_align, align_option,
                   "the alignment the caller's pointers and pitches honour: 4, 8 or 16 "
                   "(default 16: any vector width)"),
      CLI_INT(0, "device", "N", &device, 0, 1023, "which GPU (default 0)"),
      CLI_FLAG(0, "json", &json, "one JSON object instead of text"),
      CLI_DB(&dbpath),
      CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, NULL);
  if (parsed != CLI_OK) return parsed;
  if (opname == NULL && kfile == NULL)
    return cli_usage_error("explain", "no --op given (one of: %s) and no --kernel", cli_op_names());
  if (opname != NULL && kfile != NULL)
    return cli_usage_error("explain", "--op and --kernel: one or the other");
  if (kfile != NULL && (pr.radius != 0 || cv.given[CLI_VARIANT_ORDER] >= 0 ||
                        cv.given[CLI_VARIANT_BORDER] >= 0 || dtypes != 0 || pr.caller_align != 16))
    return cli_usage_error("explain", "--radius, --order, --border, --dtype and --align are the "
                                      "built-in operations' (a kernel file has its own)");
  const pm__op *op = NULL;
  if (opname != NULL && cli_op_arg("explain", opname, 0, &op) != CLI_OK) return CLI_USAGE;
  if (size == NULL) return cli_usage_error("explain", "no --size given");
  int radius_given = pr.radius != 0;
  if (op != NULL && cli_apply_variants("explain", op, &cv, &pr) != CLI_OK) return CLI_USAGE;
  if (op != NULL && cli_dtype_one("explain", op, dtypes, &pr.dtype) != CLI_OK) return CLI_USAGE;

  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  int status = CLI_OK;
  pm__kernel_desc *kf = NULL;
  if (pm_open(&c, &o) != PM_OK) {
    status = cli_fail("explain", "%s", pm_errmsg(c));
    goto done;
  }
  if ((status = cli_kernel_load("explain", c, kfile, &kf, NULL, NULL)) != CLI_OK) goto done;
  if (kf != NULL) {
    op = pm__kernel_desc_op(kf);
    pr.caller_align = 0;
  }
  if (op->radius_max == 0) pr.radius = 0;
  if ((status = cli_parse_size("explain", c, op, size, radius_given, &pr)) != CLI_OK) goto done;
  pm_close(c);
  o.device = device;
  o.db_path = dbpath;
  if (pm_open(&c, &o) != PM_OK) {
    status = cli_fail("explain", "%s", pm_errmsg(c));
    goto done;
  }
  pm__decision d;
  if (kf != NULL) cli_kernel_decide(c, kfile, op, &pr, &d);
  else pm__serve_decide(c, op, &pr, &d);
  cli_user_text(d.why); /* a database's failure, said without pmtune's source tags */
  char ptext[96], tuned[48], other[48];
  pm__problem_text(op, &pr, ptext, sizeof ptext);
  if (json) {
    printf("{\"gpu\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\",\"problem\":\"%s\",\"source\":\"%s\","
           "\"config\":\"%s\"",
           c->dev.name, op->name, pm_dtype_name((pm_dtype)pr.dtype), ptext,
           pm__decision_kind(&d), d.config);
    if (d.source != PM__FROM_DEFAULT) {
      size_text(op, d.tuned_rows, d.tuned_cols, d.tuned_n, "", tuned, sizeof tuned);
      printf(",\"tuned_size\":\"%s\",\"median_ms\":%.6g,\"gbps\":%.6g,\"speedup\":%.6g,"
             "\"distance\":%.6g",
             tuned, d.median_ms, d.gbps, d.speedup, d.distance);
      if (d.between) {
        size_text(op, d.other_rows, d.other_cols, d.other_n, "", other, sizeof other);
        printf(",\"between\":\"%s\",\"weight\":%.4f", other, d.weight);
      }
      printf(",\"predicted_ms\":%.6g", d.predicted_ms);
      if (d.default_ms > 0) printf(",\"default_predicted_ms\":%.6g", d.default_ms);
      if (d.guarded) printf(",\"guarded\":true");
      const char *sibling = d.shipped ? pm__shipped_sibling(c, op, pr.dtype) : NULL;
      if (sibling != NULL)
        printf(",\"from\":\"shipped results for %s, the nearest model of this GPU's "
               "architecture (%s)\"", sibling, c->dev.arch);
      else if (d.shipped) printf(",\"from\":\"shipped results for %s\"", c->dev.name);
      else printf(",\"from\":\"the tuning database\"");
    } else {
      printf(",\"why\":\"%s\"", "nothing tuned fits this size on this GPU");
    }
    printf("}\n");
  } else {
    printf("%s %s on %s (GPU %d)\n  runs    %s\n", op->name, ptext, c->dev.name, device, d.config);
    if (d.source == PM__FROM_DEFAULT) {
      printf("  because nothing tuned fits it: %s (%s)\n",
             kf != NULL ? "its seed" : "the built-in default", d.why);
    } else {
      size_text(op, d.tuned_rows, d.tuned_cols, d.tuned_n, "n=", tuned, sizeof tuned);
      if (d.between) {
        size_text(op, d.other_rows, d.other_cols, d.other_n, "n=", other, sizeof other);
        printf("  because it lies between the tuned sizes %s and %s (%.2f of the way in\n"
               "  ln(size)), and of the configurations measured at both, this one's slowdown\n"
               "  against each size's fastest, interpolated to this size, is least\n",
               d.weight <= 0.5 ? tuned : other, d.weight <= 0.5 ? other : tuned, d.weight);
      } else {
        printf("  because it is the %s for %s\n",
               d.source == PM__FROM_EXACT ? "winner tuned" : "winner at the nearest tuned size,",
               tuned);
      }
      if (d.source == PM__FROM_NEAREST)
        printf("  distance |ln(size / tuned size)| = %.3f\n", d.distance);
      printf("  measured %.4f ms, %.0f GB/s", d.median_ms, d.gbps);
      if (d.speedup > 0) printf(", %.2fx the seed", d.speedup);
      printf(" (at %s)\n", tuned);
      printf("  predicts %.4f ms at this size", d.predicted_ms);
      if (d.default_ms > 0)
        printf("; the built-in default %.4f ms (%.2fx)%s", d.default_ms,
               d.default_ms / d.predicted_ms,
               !d.guarded                     ? ""
               : d.source == PM__FROM_EXACT ? ": the default serves, measured faster here"
                                            : ": the default serves, nothing tuned is predicted 3% "
                                              "faster");
      else
        printf("; the built-in default was not measured there");
      printf("\n");
      const char *sibling = d.shipped ? pm__shipped_sibling(c, op, pr.dtype) : NULL;
      if (sibling != NULL)
        printf("  from    the shipped results for %s, the nearest model of this GPU's architecture\n"
               "          (%s): none of %s's serve %s %s\n",
               sibling, c->dev.arch, c->dev.name, op->name, pm_dtype_name((pm_dtype)pr.dtype));
      else if (d.shipped)
        printf("  from    the shipped results for %s (they answer better than the tuning database)\n",
               c->dev.name);
    }
  }
done:
  pm__kernel_desc_free(kf);
  pm_close(c);
  return status;
}
