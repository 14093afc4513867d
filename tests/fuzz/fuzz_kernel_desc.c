/* fuzz_kernel_desc.c: libFuzzer harness for the kernel-description reader, pm__kernel_desc_load
 * (tuner/kernel_load.c): the input is a description, written beside stand-in sources; a
 * description refused says so on one line naming the file, and one read is an op whose callbacks
 * (check with and without a size, bytes, the buffer counts) give answers, quickly. */
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "kernel_file.h"

/* One source that every example's description finds its entry in (a name, then '('). */
static const char stand_in[] =
    "extern \"C\" __global__ void my_matadd(float *c, const float *a, const float *b, int rows,"
    " int cols) {}\n"
    "extern \"C\" __global__ void my_transpose(float *o, const float *i, int rows, int cols) {}\n"
    "extern \"C\" __global__ void ref(float *c, const float *a, const float *b, int r, int k) {}\n"
    "extern \"C\" __global__ void k(float *x, int n) {}\n";

static char desc[128];

/* The scratch folder (removed at exit) with the stand-in as each source name the corpus uses, a
 * folder and a link out of the folder (what `source` must not reach). */
static void scratch(void) {
  if (desc[0] != '\0') return;
  snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/pmtune-fuzz-kdesc-XXXXXX");
  FUZZ_CHECK(mkdtemp(fuzz_dir) != NULL, "mkdtemp");
  atexit(fuzz_remove_dir);
  static const char *const names[] = {"matadd.cu", "transpose.cu", "k.cu", "sub/k.cu"};
  char path[192];
  snprintf(path, sizeof path, "%s/sub", fuzz_dir);
  FUZZ_CHECK(mkdir(path, 0755) == 0, "mkdir %s", path);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    snprintf(path, sizeof path, "%s/%s", fuzz_dir, names[i]);
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL && fputs(stand_in, f) >= 0 && fclose(f) == 0, "%s", path);
  }
  snprintf(path, sizeof path, "%s/out.cu", fuzz_dir);
  FUZZ_CHECK(symlink("/etc/hostname", path) == 0, "symlink %s", path);
  snprintf(desc, sizeof desc, "%s/k.json", fuzz_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pm_ctx *c = fuzz_ctx();
  scratch();
  FILE *f = fopen(desc, "wb");
  FUZZ_CHECK(f != NULL && fwrite(data, 1, size, f) == size && fclose(f) == 0, "%s", desc);
  pm__kernel_desc *k = (pm__kernel_desc *)1;
  int rc = pm__kernel_desc_load(c, desc, &k);
  const char *msg = pm_errmsg(c);
  if (rc != PM_OK) {
    FUZZ_CHECK(rc == PM_EINVAL || rc == PM_EIO, "status %d: %s", rc, msg);
    FUZZ_CHECK(k == NULL, "a handle on failure");
    FUZZ_CHECK(strncmp(msg, desc, strlen(desc)) == 0, "the message names no file: %s", msg);
    FUZZ_CHECK(strchr(msg, '\n') == NULL, "a message of two lines: %s", msg);
    return 0;
  }
  const pm__op *op = pm__kernel_desc_op(k);
  FUZZ_CHECK(op->nparams >= 1 && op->nparams <= PM__MAX_PARAMS, "%d parameters", op->nparams);
  FUZZ_CHECK(op->dims == 1 || op->dims == 2, "%d dimensions", op->dims);
  pm__limits lim = pm__limits_default();
  pm__problem sizes[3] = {{.rows = 1, .cols = 1, .n = 1},
                          {.rows = 4097, .cols = 3001, .n = 4097u * 3001u},
                          {.rows = 1u << 20, .cols = 1u << 19, .n = 0x7fffffffu}};
  FUZZ_CHECK(op->check(op, op->seed, &sizes[0], &lim) == NULL ||
                 op->check(op, op->seed, &sizes[0], &lim)[0] != '\0',
             "an empty reason");
  uint64_t n = pm__space_size(op);
  for (uint64_t i = 0; i < n && i < 64; i++) { /* the first points, each way */
    int v[PM__MAX_PARAMS];
    pm__space_point(op, i, v);
    const char *why = op->check(op, v, NULL, &lim);
    FUZZ_CHECK(why == NULL || strchr(why, '\n') == NULL, "a reason of two lines: %s", why);
    for (int s = 0; s < 3; s++) {
      why = op->check(op, v, &sizes[s], &lim);
      FUZZ_CHECK(why == NULL || strchr(why, '\n') == NULL, "a reason of two lines: %s", why);
    }
  }
  for (int s = 0; s < 3; s++) {
    double b = op->bytes(op, &sizes[s]);
    FUZZ_CHECK(b >= 0, "bytes %g", b);
    if (pm__kernel_desc_check_size(c, k, &sizes[s]) != PM_OK)
      FUZZ_CHECK(strchr(pm_errmsg(c), '\n') == NULL, "a message of two lines: %s", pm_errmsg(c));
  }
  const pm__template *t = pm__op_template(op);
  FUZZ_CHECK(t != NULL && strlen(t->sha256) == 64, "no template");
  pm__kernel_desc_free(k);
  return 0;
}
