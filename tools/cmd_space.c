/* cmd_space.c: `pmtune space`, an operation's search space: its axes, their values, the seed, and
 * how many points are valid (for a problem size too). Needs no GPU. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kernel_file.h"

static const char about[] =
    "Prints the search space of OP: each axis (its template define, or 'host' for a parameter of\n"
    "the launch or the layout), its values, the seed configuration, how many points there are,\n"
    "how many are valid and how many distinct kernels they compile to. With --size, counts the\n"
    "points valid for that problem and says why the others were pruned. Needs no GPU: the limits\n"
    "are those of any sm_80 or later device (1024 threads, 48 KiB of static shared memory).\n"
    "With --kernel FILE instead of --op, the same for a kernel of your own that FILE describes\n"
    "(docs/kernels.md), after checking the description: a fault in it is one line\n"
    "naming the file and the field, and status 1.\n";

static const cli_help help = {.cmd = "space", .about = about};

int cmd_space(int argc, char **argv) {
  const char *opname = NULL, *size = NULL, *kfile = NULL;
  int list = 0;
  unsigned dtypes = 0;
  pm__problem pr = {0}; /* radius 0: not given (cli_apply_variants) */
  cli_variants cv = CLI_VARIANTS_NONE;
  pm__limits lim = pm__limits_default();
  char ophelp[160];
  char sizehelp[200];
  const cli_option options[] = {
      CLI_STRING(0, "op", "OP", &opname, cli_op_help(ophelp, sizeof ophelp, "", " or ", "")),
      CLI_STRING(0, "kernel", "FILE", &kfile, "a kernel of your own, described in FILE (JSON)"),
      CLI_STRING(0, "size", "S", &size,
                 cli_size_help(sizehelp, sizeof sizehelp,
                               "; a filter's radius may follow, ROWSxCOLS:rR")),
      CLI_RADIUS(&pr, "filter: mask radius, 1 to 3 (default 1)"),
      CLI_ORDER(&cv, "matadd: storage order (default row)"),
      CLI_BORDER(&cv, "filter: border (default clamp)"),
      CLI_DTYPE(&dtypes, "the element type (default f32): the widest access is 16 bytes"),
      CLI_FLAG(0, "nondeterministic", &lim.allow_nondeterministic,
               "reduce: count variants whose result may vary run to run"),
      CLI_FLAG(0, "list", &list, "print every valid point's configuration"),
      CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, NULL);
  if (parsed != CLI_OK) return parsed;
  if (opname == NULL && kfile == NULL)
    return cli_usage_error("space", "no --op given (one of: %s) and no --kernel", cli_op_names());
  if (opname != NULL && kfile != NULL)
    return cli_usage_error("space", "--op and --kernel: one or the other");
  if (kfile != NULL && (pr.radius != 0 || cv.given[CLI_VARIANT_ORDER] >= 0 ||
                        cv.given[CLI_VARIANT_BORDER] >= 0 || dtypes != 0 ||
                        lim.allow_nondeterministic))
    return cli_usage_error("space", "--radius, --order, --border, --dtype and --nondeterministic "
                                    "are the built-in operations' (a kernel file has its own)");
  const pm__op *op = NULL;
  if (opname != NULL && cli_op_arg("space", opname, 0, &op) != CLI_OK) return CLI_USAGE;
  int radius_given = pr.radius != 0;
  if (op != NULL && cli_apply_variants("space", op, &cv, &pr) != CLI_OK) return CLI_USAGE;
  if (op != NULL && cli_dtype_one("space", op, dtypes, &pr.dtype) != CLI_OK) return CLI_USAGE;
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  int status = CLI_OK;
  uint8_t *seen = NULL;
  pm__kernel_desc *kf = NULL;
  if (pm_open(&c, &o) != PM_OK) {
    status = cli_fail("space", "%s", pm_errmsg(c));
    goto done;
  }
  if ((status = cli_kernel_load("space", c, kfile, &kf, NULL, NULL)) != CLI_OK) goto done;
  if (kf != NULL) op = pm__kernel_desc_op(kf);
  if (size != NULL &&
      (status = cli_parse_size("space", c, op, size, radius_given, &pr)) != CLI_OK)
    goto done;
  /* Without a size, the filter's shared-memory check still needs a radius: the problem is
   * then a stand-in with only the radius set, and sizes play no part. */
  pm__problem stand_in = {.rows = 1, .cols = 1, .n = 1, .radius = pr.radius, .dtype = pr.dtype};
  const pm__problem *p = size ? &pr : op->problem_defines || pr.dtype != PM_F32 ? &stand_in : NULL;

  printf("%s: %s\n\n  %-8s %-8s %-32s %s\n", op->name, op->summary, "axis", "define", "values",
         "meaning");
  for (int i = 0; i < op->nparams; i++) {
    const pm__param *a = &op->params[i];
    char vals[128] = "";
    size_t n = 0;
    for (int k = 0; k < a->nvalues; k++)
      n += (size_t)snprintf(vals + n, sizeof vals - n, "%s%d", k ? " " : "", a->values[k]);
    printf("  %-8s %-8s %-32s %s\n", a->name, a->define ? a->define : "(host)", vals, a->doc);
  }
  char seed[PM__CONFIG_TEXT], text[PM__CONFIG_TEXT];
  pm__config_text(op, op->seed, seed, sizeof seed);
  printf("\n  seed: %s\n", seed);

  uint64_t total = pm__space_size(op), valid = 0, kernels = 0, alike = 0;
  const char *reasons[16] = {0};
  uint64_t counts[16] = {0};
  if ((seen = calloc((size_t)pm__kernel_slots(op), 1)) == NULL) {
    status = cli_fail("space", "out of memory");
    goto done;
  }
  for (uint64_t i = 0; i < total; i++) {
    int v[PM__MAX_PARAMS];
    pm__space_point(op, i, v);
    const char *why = op->check(op, v, p, &lim);
    if (why != NULL) {
      int r = 0;
      while (r < 15 && reasons[r] != NULL && reasons[r] != why) r++;
      reasons[r] = why;
      counts[r]++;
      continue;
    }
    valid++;
    alike += pm__same_launch(op, v, size ? &pr : NULL, &lim);
    uint64_t ki = pm__kernel_index(op, v);
    kernels += !seen[ki];
    seen[ki] = 1;
    if (list) {
      pm__config_text(op, v, text, sizeof text);
      printf("  %s\n", text);
    }
  }
  char ptext[96] = "any size";
  if (size) pm__problem_text(op, &pr, ptext, sizeof ptext);
  else if (op->radius_max > 0) /* a kernel's tuned scalar: by its name */
    snprintf(ptext, sizeof ptext, "any size, %s=%d", op->radius_name ? op->radius_name : "r",
             pr.radius);
  else if (pr.dtype != PM_F32)
    snprintf(ptext, sizeof ptext, "any size, %s", pm_dtype_name((pm_dtype)pr.dtype));
  printf("\n  points: %llu in all, %llu valid for %s, compiling to %llu distinct kernels\n",
         (unsigned long long)total, (unsigned long long)valid, ptext, (unsigned long long)kernels);
  if (alike > 0)
    printf("  of them %llu launch exactly what another does at this size: the tuner measures that "
           "one\n",
           (unsigned long long)alike);
  for (int r = 0; r < 16 && reasons[r] != NULL; r++)
    printf("  pruned: %llu, %s\n", (unsigned long long)counts[r], reasons[r]);
done:
  free(seen);
  pm__kernel_desc_free(kf);
  pm_close(c);
  return status;
}
