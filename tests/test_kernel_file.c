/* test_kernel_file.c: kernel descriptions (tuner/kernel_file.c, issue 18) without a GPU: the
 * example's space as the generic space code counts it, and each fault of a broken description
 * refused with the file, the field and what is wrong. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel_file.h"
#include "testutil.h"

static pm_ctx *c;
static char dir[] = "/tmp/pmtune-kfile-XXXXXX";

static void setup(void) {
  cr_assert_eq(pm__ctx_create(&c, PM_DEVICE_NONE, NULL), PM_OK);
  cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert_eq(system(cmd), 0);
  pm__ctx_free(c);
}

TestSuite(kernel_file, .init = setup, .fini = teardown, .timeout = 30);

#define EXAMPLE PM_SOURCE_DIR "/examples/kernels/matadd.json"

/* Valid points of op for pr (NULL: any size) under the generic limits. */
static unsigned long long valid_points(const pm__op *op, const pm__problem *pr) {
  pm__limits lim = pm__limits_default();
  unsigned long long valid = 0;
  for (uint64_t i = 0; i < pm__space_size(op); i++) {
    int v[PM__MAX_PARAMS];
    pm__space_point(op, i, v);
    valid += op->check(op, v, pr, &lim) == NULL;
  }
  return valid;
}

Test(kernel_file, the_example_is_a_space_like_the_built_in_ones) {
  pm__kernel_file *k = NULL;
  cr_assert_eq(pm__kernel_file_load(c, EXAMPLE, &k), PM_OK, "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_file_op(k);
  cr_assert_str_eq(op->name, "my_matadd");
  cr_assert_eq(op->dims, 2);
  cr_assert_eq(op->nparams, 3);
  cr_assert_eq(pm__space_size(op), 5 * 3 * 4);
  char seed[PM__CONFIG_TEXT];
  pm__config_text(op, op->seed, seed, sizeof seed);
  cr_assert_str_eq(seed, "BLOCK=256 VEC=1 ITEMS=1");
  /* 60 points, 4 of more than 8192 floats a block (1024 x 8 x 4, 1024 x 8 x 2, 1024 x 4 x 4,
   * 512 x 8 x 4) */
  cr_assert_eq(valid_points(op, NULL), 56);
  pm__problem odd = {.rows = 4097, .cols = 3001};
  cr_assert_eq(valid_points(op, &odd), 56);
  /* 2^39 floats: a block of 256 floats or fewer needs a grid of 2^31 blocks or more (64 threads
   * x 1 to 4 floats: 6 points; 128 x 1 or 2: 3; 256 x 1: 1) */
  pm__problem huge = {.rows = 1u << 20, .cols = 1u << 19};
  cr_assert_eq(valid_points(op, &huge), 46);
  pm__limits lim = pm__limits_default();
  int v[PM__MAX_PARAMS] = {1024, 4, 8};
  cr_assert_str_eq(op->check(op, v, NULL, &lim), "constraints[0]: :BLOCK * :ITEMS * :VEC <= 8192");
  int small[PM__MAX_PARAMS] = {64, 1, 1};
  cr_assert_str_eq(op->check(op, small, &huge, &lim), "a grid dimension out of range");
  int big[PM__MAX_PARAMS] = {1024, 1, 1};
  lim.max_threads = 512;
  cr_assert_str_eq(op->check(op, big, NULL, &lim), "threads per block out of range");
  cr_assert_eq(op->bytes(op, &odd), 3.0 * 4 * 4097 * 3001);
  char defines[PM__MAX_DEFINES][24];
  cr_assert_eq(pm__config_defines(op, op->seed, &odd, defines), 3);
  cr_assert_str_eq(defines[0], "BLOCK=256");
  cr_assert_str_eq(defines[2], "ITEMS=1");
  /* named by its content: 64 hex digits, the template's name the kernel's */
  const pm__template *t = pm__op_template(op);
  cr_assert_str_eq(t->name, "my_matadd");
  cr_assert_str_eq(t->file, "matadd.cu");
  cr_assert_eq(strlen(t->sha256), 64);
  cr_assert_eq(strspn(t->sha256, "0123456789abcdef"), 64);
  pm__kernel_file_free(k);
}

/* The second example: a shared-memory tile whose size is an expression of the point, held to a
 * device's limit. */
Test(kernel_file, the_transpose_example_prunes_by_shared_memory) {
  pm__kernel_file *k = NULL;
  cr_assert_eq(pm__kernel_file_load(c, PM_SOURCE_DIR "/examples/kernels/transpose.json", &k), PM_OK,
               "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_file_op(k);
  cr_assert_eq(valid_points(op, NULL), 45);
  pm__limits small = pm__limits_default();
  small.max_smem = 8192; /* TILE = 64 needs 16,384 bytes and more; 32 with PAD 2 is 4,352 */
  int v[PM__MAX_PARAMS] = {64, 8, 0}, w[PM__MAX_PARAMS] = {32, 8, 2};
  cr_assert_str_eq(op->check(op, v, NULL, &small), "the shared memory is more than a block has");
  cr_assert_null(op->check(op, w, NULL, &small));
  pm__problem pr = {.rows = 1000, .cols = 3000};
  cr_assert_eq(op->bytes(op, &pr), 2.0 * 4 * 1000 * 3000);
  pm__kernel_file_free(k);
}

/* The example's source compiles at every valid point for any size (NVRTC, sm_90: no GPU). */
Test(kernel_file, the_example_compiles_at_every_valid_point) {
  pm__kernel_file *k = NULL;
  cr_assert_eq(pm__kernel_file_load(c, EXAMPLE, &k), PM_OK, "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_file_op(k);
  FILE *f = fopen(PM_SOURCE_DIR "/examples/kernels/matadd.cu", "rb");
  cr_assert_not_null(f);
  static char src[16384];
  src[fread(src, 1, sizeof src - 1, f)] = '\0';
  fclose(f);
  pm__limits lim = pm__limits_default();
  int compiled = 0;
  for (uint64_t i = 0; i < pm__space_size(op); i++) {
    int v[PM__MAX_PARAMS];
    pm__space_point(op, i, v);
    if (op->check(op, v, NULL, &lim) != NULL || v[0] != 256) continue; /* a slice */
    char defines[PM__MAX_DEFINES][24];
    const char *d[PM__MAX_DEFINES];
    int n = pm__config_defines(op, v, NULL, defines);
    for (int j = 0; j < n; j++) d[j] = defines[j];
    pm__cubin cubin = {0};
    cr_assert_eq(pm__compile(c, "matadd.cu", src, "sm_90", d, (size_t)n, &cubin), PM_OK, "%s",
                 pm_errmsg(c));
    cr_assert_gt(cubin.size, 0);
    pm__cubin_free(&cubin);
    compiled++;
  }
  cr_assert_eq(compiled, 12, "BLOCK = 256: VEC 1, 2, 4 x ITEMS 1 to 8");
  pm__kernel_file_free(k);
}

/* The example with `from` replaced by `to` (once), written to the test's folder beside a copy
 * of its source. */
static const char *broken(const char *from, const char *to) {
  static char path[128];
  FILE *f = fopen(EXAMPLE, "rb");
  cr_assert_not_null(f);
  char text[8192];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  char *at = strstr(text, from);
  cr_assert_not_null(at, "'%s' not in the example", from);
  char out[9000];
  snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  snprintf(path, sizeof path, "%s/k.json", dir);
  f = fopen(path, "wb");
  cr_assert_not_null(f);
  fputs(out, f);
  fclose(f);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "cp %s/examples/kernels/matadd.cu %s/", PM_SOURCE_DIR, dir);
  cr_assert_eq(system(cmd), 0);
  return path;
}

/* Loading the example broken so fails with PM_EINVAL, naming the file, field and fault. */
static void refused(const char *from, const char *to, const char *field, const char *what) {
  pm__kernel_file *k = (pm__kernel_file *)1;
  const char *path = broken(from, to);
  int rc = pm__kernel_file_load(c, path, &k);
  cr_assert_eq(rc, PM_EINVAL, "%s -> %s: %s (%s)", from, to, pm_errname(rc), pm_errmsg(c));
  cr_assert_null(k);
  char want[256];
  snprintf(want, sizeof want, "%s: %s: ", path, field);
  cr_assert_not_null(strstr(pm_errmsg(c), want), "'%s' not in: %s", want, pm_errmsg(c));
  cr_assert_not_null(strstr(pm_errmsg(c), what), "'%s' not in: %s", what, pm_errmsg(c));
  cr_assert_null(strchr(pm_errmsg(c), '\n'), "one line: %s", pm_errmsg(c));
}

Test(kernel_file, each_fault_is_named_with_its_file_and_field) {
  refused("\"bytes\":", "\"colour\": 1, \"bytes\":", "(top)", "unknown field 'colour'");
  refused("\"entry\": \"my_matadd\",", "", "entry", "missing");
  refused("\"entry\": \"my_matadd\"", "\"entry\": \"your_matadd\"", "entry",
          "'your_matadd' is not a function of matadd.cu");
  refused("\"source\": \"matadd.cu\"", "\"source\": \"nowhere.cu\"", "source", "nowhere.cu");
  refused("\"name\": \"my_matadd\"", "\"name\": \"matadd\"", "name", "built-in");
  refused("\"BLOCK\": [64, 128, 256, 512, 1024]", "\"BLOCK\": []", "params.BLOCK", "no values");
  refused("\"BLOCK\": [64, 128, 256, 512, 1024]", "\"BLOCK\": [8, 16, 8]", "params.BLOCK", "the value 8 twice");
  refused("\"BLOCK\": [64, 128, 256, 512, 1024]", "\"BLOCK\": [8, 1.5]", "params.BLOCK", "integers");
  refused("\"BLOCK\": [64, 128, 256, 512, 1024]", "\"BLOCK\": 8", "params.BLOCK", "an array of integers");
  refused("\"VEC\": [1, 2, 4]", "\"BLOCK\": [1, 2]", "params.BLOCK", "given twice");
  refused("\"BLOCK\": [64, 128, 256, 512, 1024]", "\"B-X\": [8]", "params.B-X", "C identifier");
  refused("\":BLOCK * :ITEMS * :VEC <= 8192\"", "\":BLOCK * :BZ <= 8192\"", "constraints[0]",
          "names :BZ, which is neither a parameter nor a dimension");
  refused("\":BLOCK * :ITEMS * :VEC <= 8192\"", "\"1); DROP TABLE t; --\"", "constraints[0]",
          "is not one SQL expression");
  refused("\":BLOCK * :ITEMS * :VEC <= 8192\"", "\":BLOCK >=\"", "constraints[0]", "is not one SQL expression");
  refused("\"3 * 4 * :rows * :cols\"", "\"3 * 4 * :rows * :cols / 0\"", "bytes",
          "does not evaluate to a number");
  refused("\"3 * 4 * :rows * :cols\"", "\"3 * :VEC * :rows\"", "bytes",
          "may name the dimensions alone");
  refused("\"BLOCK\": 256, \"VEC\": 1", "\"BLOCK\": 7, \"VEC\": 1", "seed.BLOCK",
          "7 is not one of the parameter's values");
  refused("\"BLOCK\": 256, \"VEC\": 1, \"ITEMS\": 1", "\"BLOCK\": 256, \"VEC\": 1", "seed.ITEMS",
          "missing");
  refused("\"dims\": [\"rows\", \"cols\"]", "\"dims\": [\"height\", \"width\"]", "dims",
          "[\"rows\", \"cols\"]");
  refused("\"block\": [\":BLOCK\"]", "\"block\": []", "block", "1 to 3 expressions");
  refused("\"type\": \"f32\", \"count\": \":rows * :cols\", \"dir\": \"out\"",
          "\"type\": \"f8\", \"count\": \":rows * :cols\", \"dir\": \"out\"", "args[0].type",
          "'f8'");
  refused("\"dir\": \"out\"", "\"dir\": \"sideways\"", "args[0].dir", "in, out or inout");
  refused("\"dir\": \"out\"", "\"dir\": \"out\", \"size\": 4", "args[0]", "unknown field 'size'");
  refused("\"scalar\": \"i32\", \"value\": \":rows\"", "\"scalar\": \"int\", \"value\": \":rows\"",
          "args[3].scalar", "i32, i64, f32 or f64");
  refused("\"bytes\": \"3 * 4 * :rows * :cols\"", "\"bytes\": \"3 * 4 * :rows * :cols\", \"tolerance\": -1",
          "tolerance", "at least 0");
  refused("{", "[", "(top)", "not valid JSON");
  refused("\"entry\": \"my_matadd\",", "\"entry\": \"my_matadd\", \"reference\": \"ref\",",
          "reference", "'ref' is not a function of matadd.cu");
  refused("\"entry\": \"my_matadd\",", "\"entry\": \"my_matadd\", \"reference\": \"my_matadd\",",
          "reference", "another kernel of the source");
  refused("\"entry\": \"my_matadd\",", "\"entry\": \"my_matadd\", \"reference\": 3,",
          "reference", "a string wanted");
}

Test(kernel_file, a_missing_file_is_an_io_error) {
  pm__kernel_file *k = NULL;
  cr_assert_eq(pm__kernel_file_load(c, "/nonexistent/k.json", &k), PM_EIO);
  cr_assert_null(k);
  cr_assert_not_null(strstr(pm_errmsg(c), "/nonexistent/k.json"), "%s", pm_errmsg(c));
}

/* What is checked before tuning touches a database: each buffer's count at each size asked for,
 * and that the seed compiles with its entry unmangled (NVRTC, sm_90: no GPU). */
Test(kernel_file, sizes_and_the_seed_are_checked_before_tuning) {
  pm__kernel_file *k = NULL;
  const char *path = broken("\"count\": \":rows * :cols\", \"dir\": \"out\"",
                            "\"count\": \":rows * :cols * 1000000\", \"dir\": \"out\"");
  cr_assert_eq(pm__kernel_file_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  pm__problem small = {.rows = 10, .cols = 10}, big = {.rows = 1u << 20, .cols = 1u << 10};
  cr_assert_eq(pm__kernel_file_check_size(c, k, &small), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__kernel_file_check_size(c, k, &big), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(c), "args[0].count"), "%s", pm_errmsg(c));
  cr_assert_not_null(strstr(pm_errmsg(c), "1 to 2^40 bytes"), "%s", pm_errmsg(c));
  cr_assert_eq(pm__kernel_file_compile_seed(c, k, "sm_90"), PM_OK, "%s", pm_errmsg(c));
  pm__kernel_file_free(k);

  /* a source that does not compile at the seed: one line, with NVRTC's words */
  char cu[160];
  snprintf(cu, sizeof cu, "%s/matadd.cu", dir);
  path = broken("\"bytes\":", "\"bytes\":");
  FILE *f = fopen(cu, "a");
  cr_assert_not_null(f);
  fputs("#if BLOCK == 256\nthis is not C++;\n#endif\n", f);
  fclose(f);
  cr_assert_eq(pm__kernel_file_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__kernel_file_compile_seed(c, k, "sm_90"), PM_ECOMPILE);
  cr_assert_not_null(strstr(pm_errmsg(c), "source: the seed does not compile for sm_90"), "%s",
                     pm_errmsg(c));
  cr_assert_null(strchr(pm_errmsg(c), '\n'), "one line: %s", pm_errmsg(c));
  pm__kernel_file_free(k);

  /* an entry that C++ mangles */
  path = broken("\"bytes\":", "\"bytes\":");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "sed -i 's/extern \"C\" __global__/__global__/' %s", cu);
  cr_assert_eq(system(cmd), 0);
  cr_assert_eq(pm__kernel_file_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__kernel_file_compile_seed(c, k, "sm_90"), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(c), "entry: 'my_matadd' is not a kernel of the compiled"),
                     "%s", pm_errmsg(c));
  pm__kernel_file_free(k);
}
