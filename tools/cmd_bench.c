/* cmd_bench.c: `pmtune bench`, in one run and with the tuner's protocol: the served (tuned)
 * kernel, the seed configuration, the copy bandwidth measured on the spot, the peers (through
 * pmtune_peers, where it was built), and the tuned time the database recorded. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kernel_file.h"
#include "serve.h"
#include "subprocess.h"
#include "tune.h"

static const char about[] =
    "Times, for each (op, size), in one run on one GPU: the configuration a library call is\n"
    "served (see 'pmtune explain'), the seed configuration, a device-to-device copy of as many\n"
    "bytes (the hardware's limit, measured on the spot), and the peer in the same element type\n"
    "(CUB's DeviceReduce, NPP's nppiFilterBorder where NPP has one for the type, a 16-byte\n"
    "grid-stride add for matadd) through pmtune_peers where it was built beside pmtune. Each is\n"
    "verified first, then (after 200 ms of work that brings the GPU's clocks up) warmed up and\n"
    "timed as the tuner times: each sample flushes the L2 cache, then runs once on each of K\n"
    "copies of the data between two CUDA events (K: enough that a sample moves twice the L2\n"
    "cache, at most 32), and counts the time per run; medians are reported.\n"
    "Also the median the database recorded when tuning, to check that an independent re-timing\n"
    "agrees.\n";

static const cli_help help = {.cmd = "bench", .about = about};

typedef struct item {
  const pm__op *op;
  pm__problem pr;
} item;

typedef struct timing {
  double ms, gbps;
  int ok;
} timing;

/* Verifies point v on d (placed in its layout), then times it: median of `samples`, after 200 ms
 * of GPU work (compiling left the GPU idle, and an idle GPU's clocks are down). */
static int measure(pm_ctx *c, pm__timer *tm, const pm__op *op, const int *v, const pm__problem *pr,
                   pm__data *d, int samples, timing *out) {
  char defs[PM__MAX_DEFINES][24];
  const char *dp[PM__MAX_DEFINES];
  int nd = pm__config_defines(op, v, pr, defs), rc;
  for (int i = 0; i < nd; i++) dp[i] = defs[i];
  const pm__template *t = pm__op_template(op);
  pm__cubin bin;
  pm__module k;
  double err, ms[64];
  memset(out, 0, sizeof *out);
  if ((rc = pm__compile(c, t->file, t->source, c->dev.arch, dp, (size_t)nd, &bin)) != PM_OK) return rc;
  rc = pm__module_load(c, &bin, op->entries, op->nentries, &k);
  pm__cubin_free(&bin);
  if (rc != PM_OK) return rc;
  if ((rc = pm__data_place(c, d, op->layout(op, v))) == PM_OK &&
      (rc = op->launch(op, c, &k, v, d, 0)) == PM_OK &&
      (rc = cudaDeviceSynchronize() == cudaSuccess ? PM_OK : PM_ELAUNCH) == PM_OK &&
      (rc = op->verify(op, c, v, d, &err)) == PM_OK && (rc = pm__timer_warm(c, tm, 200)) == PM_OK &&
      (rc = pm__time_runs(c, tm, op, &k, v, d, 3, ms)) == PM_OK &&
      (rc = pm__time_runs(c, tm, op, &k, v, d, samples, ms)) == PM_OK) {
    out->ms = pm__median(ms, samples, NULL, NULL);
    out->gbps = op->bytes(op, pr) / (out->ms * 1e6);
    out->ok = 1;
  }
  pm__module_unload(&k);
  return rc;
}

typedef struct copy_run {
  char *src, *dst;
  size_t half, stride;
} copy_run;

/* One device-to-device copy, of copy j of the buffers. */
static int run_copy(pm_ctx *c, void *arg, int j) {
  const copy_run *r = arg;
  cudaError_t e = cudaMemcpyAsync(r->dst + (size_t)j * r->stride, r->src + (size_t)j * r->stride,
                                  r->half, cudaMemcpyDeviceToDevice, 0);
  return e == cudaSuccess ? PM_OK : pm__cuda_error(c, PM_ECUDA, e, "cudaMemcpyAsync", __FILE__, __LINE__);
}

/* A device-to-device copy moving `bytes` (read + written), timed like the kernels: k copies of
 * its buffers (the kernels' count), one copy after another per sample; 3 samples first, not
 * counted. */
static int copy_ceiling(pm_ctx *c, pm__timer *tm, double bytes, int k, int samples, timing *out) {
  int rc = PM_OK;
  copy_run r = {.half = (size_t)(bytes / 2)};
  double ms[64];
  memset(out, 0, sizeof *out);
  if (r.half < 4) r.half = 4;
  r.stride = pm__pitch(r.half, 512);
  PM__CUDA(c, cudaMalloc((void **)&r.src, r.stride * k));
  PM__CUDA(c, cudaMalloc((void **)&r.dst, r.stride * k));
  PM__CUDA(c, cudaMemset(r.src, 0x3c, r.stride * k));
  if ((rc = pm__time_batches(c, tm, 3, k, run_copy, &r, ms)) != PM_OK ||
      (rc = pm__time_batches(c, tm, samples, k, run_copy, &r, ms)) != PM_OK)
    goto fail;
  out->ms = pm__median(ms, samples, NULL, NULL);
  out->gbps = 2.0 * (double)r.half / (out->ms * 1e6);
  out->ok = 1;
fail:
  if (r.src) cudaFree(r.src);
  if (r.dst) cudaFree(r.dst);
  return rc;
}

/* The value of the JSON string member "key" in line (no escapes: the peer writes none in those
 * it names), into out; 0 where there is none. */
static int json_member(const char *line, const char *key, char *out, size_t len) {
  char pat[32];
  snprintf(pat, sizeof pat, "\"%s\":\"", key);
  const char *s = strstr(line, pat), *e;
  if (s == NULL || (e = strchr(s += strlen(pat), '"')) == NULL) return 0;
  snprintf(out, len, "%.*s", (int)(e - s), s);
  return 1;
}

/* Runs pmtune_peers (beside this program, where it was built) for the problem in its element type
 * (--dtype), with k copies of its data per sample (the kernels' count), through an argument
 * vector: no shell sees its path.
 * Fills name and timing; where the peer gives no timing, `why` says why in the peer's own words
 * where it gave some (its "why" where it is not built in or has no peer of the type, its last
 * message where it failed),
 * else how it ended; "" where there is no peer to run (not built) or it was timed. */
static void peer(const pm__op *op, const pm__problem *pr, int k, int samples, char *name,
                 size_t len, timing *out, char *why, size_t whylen) {
  char exe[PATH_MAX], line[8192], ended[PATH_MAX + 64];
  memset(out, 0, sizeof *out);
  snprintf(name, len, "-");
  why[0] = '\0';
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 16);
  if (n <= 0) return;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL) return;
  strcpy(slash + 1, "pmtune_peers");
  if (access(exe, F_OK) != 0) return; /* not built: no peer column, and nothing to say */
  char size[32], radius[16], nsamples[16], copies[16];
  if (op->dims == 1)
    snprintf(size, sizeof size, "%u", pr->n);
  else
    snprintf(size, sizeof size, "%ux%u", pr->rows, pr->cols);
  snprintf(radius, sizeof radius, "%d", pr->radius);
  snprintf(nsamples, sizeof nsamples, "%d", samples);
  snprintf(copies, sizeof copies, "%d", k);
  char *argv[] = {exe,       "--op",    (char *)op->name,
                  "--size",  size,      "--dtype", (char *)pm_dtype_name((pm_dtype)pr->dtype),
                  "--samples", nsamples, "--copies", copies,
                  NULL,      NULL,      NULL};
  if (op->radius_max > 0) argv[11] = "--radius", argv[12] = radius;
  int failed = cli_spawn_read(exe, argv, line, sizeof line, ended, sizeof ended);
  json_member(line, "peer", name, len);
  char *m = strstr(line, "\"median_ms\":");
  if (!failed && m != NULL && strstr(line, "\"verified\":true") != NULL) {
    out->ms = strtod(m + 12, NULL);
    out->gbps = op->bytes(op, pr) / (out->ms * 1e6);
    out->ok = out->ms > 0;
    return;
  }
  if (json_member(line, "why", why, whylen)) return; /* not built in: "built without NPP" */
  /* its last message ("pmtune_peers: ..."), the prefix dropped, and how it ended */
  const char *msg = NULL;
  for (const char *p = line; (p = strstr(p, "pmtune_peers: ")) != NULL; p++) msg = p + 14;
  int mlen = msg ? (int)strcspn(msg, "\n") : 0;
  if (msg != NULL)
    snprintf(why, whylen, "%.*s (%.100s)", mlen > 300 ? 300 : mlen, msg,
             failed ? ended : "no timing");
  else
    snprintf(why, whylen, "%.300s", failed ? ended : "it printed no verified timing");
}

/* Adds op's default sizes (its entry's bench_sizes) in each type of dtypes that op takes to
 * items[n..max); returns the new count. */
static int add_defaults(const pm__op *op, unsigned dtypes, item *items, int n, int max) {
  for (int t = 0; t < PM__NDTYPES; t++)
    for (int i = 0; i < op->nbench_sizes && n < max && (dtypes & op->dtypes & 1u << t); i++) {
      items[n] = (item){op, op->bench_sizes[i]};
      items[n++].pr.dtype = t;
    }
  return n;
}

int cmd_bench(int argc, char **argv) {
  const char *opname = NULL, *sizes[32], *dbpath = NULL, *kfile = NULL;
  int device = 0, samples = 25, json = 0;
  cli_list slist = {sizes, 0, 32};
  pm__problem given = {0}; /* radius 0: not given (cli_apply_variants) */
  cli_variants cv = CLI_VARIANTS_NONE;
  unsigned dtypes = 0;
  char ophelp[160];
  const cli_option options[] = {
      CLI_STRING(0, "op", "OP|all", &opname,
                 cli_op_help(ophelp, sizeof ophelp, "", ", ", " or all (default)")),
      CLI_STRING(0, "kernel", "FILE", &kfile,
                 "a kernel of your own, described in FILE (JSON), at the sizes --size gives: its "
                 "tuned configuration, its seed and the copy (no peer); not with --op, --radius "
                 "or --dtype"),
      CLI_LIST(0, "size", "S", &slist,
               "ROWSxCOLS or N, repeatable (with one --op), a filter size with its own radius "
               "ROWSxCOLS:rR; default: the targets' sizes"),
      CLI_RADIUS(&given, "filter radius of the sizes without their own (default 1)"),
      CLI_DTYPE(&dtypes, "the element types, each timed apart (default f32; at the default sizes, "
                         "each op in those of them it takes)"),
      CLI_INT(0, "device", "N", &device, 0, 1023, "which GPU (default 0)"),
      CLI_INT(0, "samples", "N", &samples, 1, 64, "timed samples of each (default 25, at most 64)"),
      CLI_FLAG(0, "json", &json, "one JSON object per line instead of the table"),
      CLI_DB(&dbpath),
      CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, NULL);
  if (parsed != CLI_OK) return parsed;
  int nsizes = slist.n;
  const pm__op *only;
  if (kfile != NULL && (opname != NULL || given.radius != 0 || dtypes != 0))
    return cli_usage_error("bench", "--kernel FILE is the op: not with --op, --radius or --dtype "
                                    "(a kernel file has its own)");
  if (kfile != NULL && nsizes == 0)
    return cli_usage_error("bench", "--kernel needs --size (a kernel file has no default sizes)");
  if (cli_op_arg("bench", opname ? opname : "all", 1, &only) != CLI_OK) return CLI_USAGE;
  if (nsizes > 0 && only == NULL && kfile == NULL)
    return cli_usage_error("bench", "--size needs one --op");
  int radius_given = given.radius != 0;
  if (cli_apply_variants("bench", only, &cv, &given) != CLI_OK) return CLI_USAGE;
  if (nsizes > 0 && cli_dtype_check("bench", only, dtypes) != CLI_OK) return CLI_USAGE;
  if (dtypes == 0) dtypes = 1u << PM_F32;
  if (nsizes == 0 && radius_given)
    return cli_usage_error("bench", "--radius applies to --size (the default sizes have their "
                                    "own)");

  item items[64];
  int nitems = 0, status = CLI_OK;
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  pm__timer *tm = NULL;
  pm__kernel_desc *kf = NULL;
  if (pm_open(&c, &o) != PM_OK) return cli_fail("bench", "%s", pm_errmsg(c));
  if ((status = cli_kernel_load("bench", c, kfile, &kf, NULL, NULL)) != CLI_OK) {
    pm_close(c);
    return status;
  }
  if (kf != NULL) only = pm__kernel_desc_op(kf);
  for (int i = 0; i < nsizes; i++) {
    pm__problem pr = given;
    if ((status = cli_parse_size("bench", c, only, sizes[i], radius_given, &pr)) != CLI_OK) {
      pm__kernel_desc_free(kf);
      pm_close(c);
      return status;
    }
    for (int t = 0; t < PM__NDTYPES; t++)
      if (dtypes & 1u << t && nitems < (int)(sizeof items / sizeof *items)) {
        pr.dtype = t;
        items[nitems++] = (item){only, pr};
      }
  }
  for (int i = 0; nsizes == 0 && pm__ops[i] != NULL; i++)
    if (only == NULL || only == pm__ops[i])
      nitems = add_defaults(pm__ops[i], dtypes, items, nitems, (int)(sizeof items / sizeof *items));
  pm_close(c);
  o.device = device;
  o.db_path = dbpath;
  if (pm_open(&c, &o) != PM_OK || pm__timer_new(c, &tm) != PM_OK) {
    status = cli_fail("bench", "%s", pm_errmsg(c));
    goto done;
  }
  if (!json)
    printf("%s, %d samples each, medians; ceiling = device-to-device copy of as many bytes\n"
           "%-7s %-24s %-15s %10s %6s %6s %10s %7s %10s %7s %10s %8s  %s\n",
           c->dev.name, samples, "op", "problem", "served", "tuned us", "GB/s", "ceil", "seed us",
           "vs seed", "peer us", "vs peer", "tuned us*", "agree", "peer");
  for (int i = 0; i < nitems; i++) {
    const pm__op *op = items[i].op;
    pm__problem pr = items[i].pr;
    char ptext[96], pname[96], pwhy[512];
    pm__problem_text(op, &pr, ptext, sizeof ptext);
    pm__decision dec;
    if (kf != NULL) cli_kernel_decide(c, kfile, op, &pr, &dec);
    else pm__serve_decide(c, op, &pr, &dec); /* caller_align 0: in the layout the winner was tuned in */
    pm__data d = {0};
    timing tuned, seed, ceil, pt;
    int copies = pm__copies_for(c, op->bytes(op, &pr)); /* for the kernels, the copy and the peer */
    int prepared = op->prepare(op, c, &pr, 0x5eed, &d) == PM_OK;
    d.copies = copies;
    if (!prepared ||
        measure(c, tm, op, dec.v, &pr, &d, samples, &tuned) != PM_OK ||
        measure(c, tm, op, op->seed, &pr, &d, samples, &seed) != PM_OK ||
        copy_ceiling(c, tm, op->bytes(op, &pr), copies, samples, &ceil) != PM_OK) {
      status = cli_fail("bench", "%s %s: %s", op->name, ptext, pm_errmsg(c));
      pm__data_free(&d);
      continue;
    }
    pm__data_free(&d);
    if (kf != NULL) /* a kernel of one's own has no peer */
      snprintf(pname, sizeof pname, "-"), pwhy[0] = '\0', memset(&pt, 0, sizeof pt);
    else
      peer(op, &pr, copies, samples, pname, sizeof pname, &pt, pwhy, sizeof pwhy);
    double rec = dec.source == PM__FROM_EXACT ? dec.median_ms : 0;
    if (json) {
      printf("{\"gpu\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\",\"problem\":\"%s\",\"source\":\"%s\","
             "\"shipped\":%s,"
             "\"config\":\"%s\","
             "\"tuned_ms\":%.6g,\"tuned_gbps\":%.6g,\"ceiling_gbps\":%.6g,\"fraction_of_ceiling\":%.4f,"
             "\"seed_ms\":%.6g,\"speedup_vs_seed\":%.4f,\"peer\":\"%s\",\"peer_ms\":%.6g,"
             "\"speedup_vs_peer\":%.4f,\"recorded_ms\":%.6g,\"samples\":%d,\"peer_error\":",
             c->dev.name, op->name, pm_dtype_name((pm_dtype)pr.dtype), ptext,
             pm__decision_kind(&dec),
             dec.shipped ? "true" : "false", dec.config, tuned.ms,
             tuned.gbps, ceil.gbps, tuned.gbps / ceil.gbps, seed.ms, seed.ms / tuned.ms, pname,
             pt.ok ? pt.ms : 0, pt.ok ? pt.ms / tuned.ms : 0, rec, samples);
      if (pwhy[0] != '\0') cli_json_string(stdout, pwhy);
      else printf("null");
      printf("}\n");
    } else {
      char peer_us[16] = "-", vs_peer[16] = "-", rec_us[16] = "-", agree[16] = "-";
      if (pt.ok) snprintf(peer_us, sizeof peer_us, "%.1f", pt.ms * 1e3), snprintf(vs_peer, sizeof vs_peer, "%.2fx", pt.ms / tuned.ms);
      if (rec > 0) snprintf(rec_us, sizeof rec_us, "%.1f", rec * 1e3), snprintf(agree, sizeof agree, "%+.1f%%", (tuned.ms / rec - 1) * 100);
      char served[24];
      snprintf(served, sizeof served, "%s%s", dec.shipped ? "shipped " : "",
               pm__decision_kind(&dec));
      printf("%-7s %-24s %-15s %10.1f %6.0f %5.1f%% %10.1f %6.2fx %10s %7s %10s %8s  %s\n", op->name,
             ptext, served, tuned.ms * 1e3,
             tuned.gbps,
             100 * tuned.gbps / ceil.gbps, seed.ms * 1e3, seed.ms / tuned.ms, peer_us, vs_peer,
             rec_us, agree, pname);
      if (pwhy[0] != '\0') printf("          peer not timed: %s\n", pwhy);
    }
    fflush(stdout);
  }
  if (!json) printf("* the median `pmtune tune` recorded for the served configuration; agree = re-timed / recorded - 1\n");
done:
  pm__timer_free(tm);
  pm_close(c);
  pm__kernel_desc_free(kf);
  return status;
}
