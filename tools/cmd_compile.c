/* cmd_compile.c: `pmtune compile`, a kernel template through NVRTC to a cubin, with no GPU needed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kernel_file.h"

static const char about[] =
    "Compiles the template of operation OP with NVRTC for a named architecture and prints\n"
    "what it compiled, the cubin's size and the compile time. Needs no GPU.\n";

static const char after[] =
    "A template that fails to compile prints NVRTC's whole log and exits with status 1.\n";

static const cli_help help = {.cmd = "compile", .about = about, .after = after};

#define MAX_DEFINES 64

int cmd_compile(int argc, char **argv) {
  const char *config = NULL;
  unsigned dtypes = 0;
  pm__problem given = {0}; /* radius 0: not given (cli_apply_variants) */
  cli_variants cv = CLI_VARIANTS_NONE;
  const char *op = NULL, *arch = NULL, *file = NULL, *output = NULL, *kfile = NULL;
  const char *defines[MAX_DEFINES];
  char config_defs[PM__MAX_DEFINES][24];
  cli_list dlist = {defines, 0, MAX_DEFINES};
  char ophelp[160];
  const cli_option options[] = {
      CLI_STRING(0, "op", "OP", &op,
                 cli_op_help(ophelp, sizeof ophelp, "the operation whose template to compile: ",
                             ", ", "")),
      CLI_STRING(0, "kernel", "FILE", &kfile,
                 "instead of --op: a kernel of your own that FILE describes (JSON); --config "
                 "names a point of its space (default: its seed)"),
      CLI_STRING(0, "arch", "sm_XY", &arch,
                 "target architecture, such as sm_80 or sm_90; default: that of GPU 0"),
      CLI_STRING(0, "config", "seed|TEXT", &config,
                 "a point of OP's search space: 'seed' (the seed article's kernel and launch) "
                 "or its text, such as \"bx=32 by=8 vec=4 ept=1 grid=0 map=0 align=0\" (see "
                 "'pmtune space'); it becomes -D defines"),
      CLI_RADIUS(&given, "filter: the mask radius the kernel is compiled for (default 1)"),
      CLI_BORDER(&cv, "filter: the border the kernel is compiled for (default clamp)"),
      CLI_DTYPE(&dtypes, "the element type the kernel is compiled for (default f32)"),
      CLI_LIST('D', "define", "NAME[=VALUE]", &dlist,
               "a define for the template (repeatable), such as -D BX=64"),
      CLI_STRING(0, "file", "PATH", &file,
                 "compile this file instead of the embedded template of OP"),
      CLI_STRING('o', "output", "FILE", &output,
                 "write the cubin to FILE (a regular file, replaced whole, or a new one)"),
      CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, NULL);
  if (parsed != CLI_OK) return parsed;
  size_t ndefines = (size_t)dlist.n;
  if (kfile != NULL && (op != NULL || file != NULL))
    return cli_usage_error("compile", "--kernel FILE names the source: not with --op or --file");
  if (kfile != NULL && (dtypes != 0 || given.radius != 0 || cv.given[CLI_VARIANT_BORDER] >= 0))
    return cli_usage_error("compile", "--dtype, --radius and --border are the built-in "
                                      "operations' (a kernel file has its own)");
  if (op == NULL && file == NULL && kfile == NULL)
    return cli_usage_error("compile", "no --op given (one of: %s)", cli_op_names());
  const pm__template *t = NULL;
  const pm__op *the_op = NULL;
  if (op != NULL && cli_op_arg("compile", op, 0, &the_op) != CLI_OK) return CLI_USAGE;
  if (the_op != NULL) t = pm__op_template(the_op);
  if (the_op != NULL && cli_apply_variants("compile", the_op, &cv, &given) != CLI_OK)
    return CLI_USAGE;

  if (the_op != NULL && cli_dtype_one("compile", the_op, dtypes, &given.dtype) != CLI_OK)
    return CLI_USAGE;
  if (op == NULL && dtypes != 0)
    return cli_usage_error("compile", "--dtype needs --op (with --file, give -D PM_DTYPE=PM_F16, "
                                      "or another type's name)");
  if (config != NULL && op == NULL && kfile == NULL)
    return cli_usage_error("compile", "--config needs --op or --kernel");
  if (op == NULL && (given.radius != 0 || cv.given[CLI_VARIANT_BORDER] >= 0))
    return cli_usage_error("compile", "--radius and --border need --op (with --file, give -D)");
  pm_ctx *c = NULL;
  pm_options opts = {.device = PM_DEVICE_NONE};
  pm__cubin cubin = {0};
  pm__file_out out = {0};
  char *source = NULL, archbuf[16];
  int status = CLI_OK, rc;
  pm__kernel_desc *kf = NULL;
  /* the output first: a path that cannot be written is refused before the compile, not after */
  if (output != NULL && pm__file_create(&out, output) != 0) {
    status = cli_fail("compile", "cannot write '%s': %s", output, pm__file_strerror(errno));
    goto done;
  }
  if (pm_open(&c, &opts) != PM_OK) {
    status = cli_fail("compile", "%s", pm_errmsg(c));
    goto done;
  }
  if ((status = cli_kernel_load("compile", c, kfile, &kf, NULL, NULL)) != CLI_OK) goto done;
  if (kf != NULL) {
    the_op = pm__kernel_desc_op(kf);
    t = pm__op_template(the_op);
    if (config == NULL) config = "seed";
  }
  if (arch == NULL) {
    int n = 0;
    pm__device_info d;
    if (pm__device_count(c, &n) != PM_OK || pm__device_query(c, 0, &d) != PM_OK) {
      status = cli_usage_error("compile", "no --arch given, and no GPU to take it from (%s)",
                               pm_errmsg(c));
      goto done;
    }
    snprintf(archbuf, sizeof archbuf, "%s", d.arch);
    arch = archbuf;
  }
  if (config != NULL) { /* the point's defines come first; -D may add more */
    const pm__op *o = the_op;
    int v[PM__MAX_PARAMS];
    pm__problem pr = {.radius = given.radius, .variant = given.variant, .dtype = given.dtype};
    if (strcmp(config, "seed") == 0)
      memcpy(v, o->seed, sizeof v);
    else if (pm__config_parse(c, o, config, v) != PM_OK) {
      status = cli_usage_error("compile", "%s", pm_errmsg(c));
      goto done;
    }
    pm__limits lim = pm__limits_default();
    const char *why = kf != NULL ? o->check(o, v, NULL, &lim) : NULL;
    if (why != NULL) {
      status = cli_usage_error("compile", "--config '%s' is not a point of %s's space: %s",
                               config, o->name, why);
      goto done;
    }
    int n = pm__config_defines(o, v, &pr, config_defs);
    if (ndefines + (size_t)n > MAX_DEFINES) {
      status = cli_usage_error("compile", "too many defines");
      goto done;
    }
    memmove(defines + n, defines, ndefines * sizeof *defines);
    for (int i = 0; i < n; i++) defines[i] = config_defs[i];
    ndefines += (size_t)n;
  } else if (given.dtype != PM_F32) { /* without a point, the type alone (config_defines' form) */
    if (ndefines == MAX_DEFINES) {
      status = cli_usage_error("compile", "too many defines");
      goto done;
    }
    snprintf(config_defs[0], sizeof config_defs[0], "PM_DTYPE=%d", given.dtype);
    defines[ndefines++] = config_defs[0];
  }
  if ((rc = pm__arch_check(c, arch, NULL)) != PM_OK) {
    status = cli_usage_error("compile", "%s", pm_errmsg(c));
    goto done;
  }

  const char *name = t ? t->file : file, *text = t ? t->source : NULL;
  if (file != NULL) {
    size_t len;
    if ((source = pm__read_file(file, (size_t)64 << 20, &len)) == NULL) {
      status = cli_fail("compile", "cannot read '%s': %s", file, pm__file_strerror(errno));
      goto done;
    }
    const char *slash = strrchr(file, '/');
    name = slash ? slash + 1 : file;
    text = source;
  }
  rc = pm__compile(c, name, text, arch, defines, ndefines, &cubin);
  if (rc == PM_EINVAL) {
    status = cli_usage_error("compile", "%s", pm_errmsg(c));
    goto done;
  }
  if (rc != PM_OK) {
    status = cli_fail("compile", "%s", pm_errmsg(c));
    goto done;
  }
  if (kf != NULL && pm__kernel_desc_check_cubin(c, kf, &cubin) != PM_OK) {
    status = cli_fail("compile", "%s", pm_errmsg(c));
    goto done;
  }
  printf("compiled  %s%s%s%s for %s with NVRTC %s\n", name, t ? " (template " : "",
         t ? t->name : "", t ? ")" : "", arch, pm__nvrtc_version());
  if (t) printf("  sha256    %s\n", t->sha256);
  printf("  defines  ");
  if (ndefines == 0) printf(" (none)");
  for (size_t i = 0; i < ndefines; i++) printf(" -D%s", defines[i]);
  printf("\n  cubin     %zu bytes\n  time      %.1f ms\n", cubin.size, cubin.compile_ms);
  if (output != NULL) {
    if (fwrite(cubin.data, 1, cubin.size, out.f) != cubin.size || pm__file_commit(&out) != 0) {
      status = cli_fail("compile", "cannot write '%s': %s", output, pm__file_strerror(errno));
      goto done;
    }
    printf("  written   %s\n", output);
  }
done:
  pm__file_abort(&out);
  pm__cubin_free(&cubin);
  free(source);
  pm__kernel_desc_free(kf);
  pm_close(c);
  return status;
}
