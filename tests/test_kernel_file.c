/* test_kernel_file.c: kernel descriptions (tuner/kernel_*.c) without a GPU: the
 * example's space as the generic space code counts it, and each fault of a broken description
 * refused with the file, the field and what is wrong, on one line, within a second;
 * hostile ones too (expressions that run forever, take gigabytes or escape their statement,
 * duplicate keys, \u0000, a source outside the description's folder). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dbtest.h"
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
  pm__kernel_desc *k = NULL;
  cr_assert_eq(pm__kernel_desc_load(c, EXAMPLE, &k), PM_OK, "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_desc_op(k);
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
  pm__kernel_desc_free(k);
}

/* The second example: a shared-memory tile whose size is an expression of the point, held to a
 * device's limit. */
Test(kernel_file, the_transpose_example_prunes_by_shared_memory) {
  pm__kernel_desc *k = NULL;
  cr_assert_eq(pm__kernel_desc_load(c, PM_SOURCE_DIR "/examples/kernels/transpose.json", &k), PM_OK,
               "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_desc_op(k);
  cr_assert_eq(valid_points(op, NULL), 45);
  pm__limits small = pm__limits_default();
  small.max_smem = 8192; /* TILE = 64 needs 16,384 bytes and more; 32 with PAD 2 is 4,352 */
  int v[PM__MAX_PARAMS] = {64, 8, 0}, w[PM__MAX_PARAMS] = {32, 8, 2};
  cr_assert_str_eq(op->check(op, v, NULL, &small), "the shared memory is more than a block has");
  cr_assert_null(op->check(op, w, NULL, &small));
  pm__problem pr = {.rows = 1000, .cols = 3000};
  cr_assert_eq(op->bytes(op, &pr), 2.0 * 4 * 1000 * 3000);
  pm__kernel_desc_free(k);
}

/* The example's source compiles at every valid point for any size (NVRTC, sm_90: no GPU). */
Test(kernel_file, the_example_compiles_at_every_valid_point) {
  pm__kernel_desc *k = NULL;
  cr_assert_eq(pm__kernel_desc_load(c, EXAMPLE, &k), PM_OK, "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_desc_op(k);
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
  pm__kernel_desc_free(k);
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
  static char out[16384];
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

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int ncases; /* refused()'s, for the tests that count them */

/* Loading the example broken so fails with PM_EINVAL, naming the file, field and fault, on one
 * line, within a second. */
static void refused(const char *from, const char *to, const char *field, const char *what) {
  pm__kernel_desc *k = (pm__kernel_desc *)1;
  const char *path = broken(from, to);
  double t0 = seconds();
  int rc = pm__kernel_desc_load(c, path, &k);
  double took = seconds() - t0;
  ncases++;
  cr_assert_lt(took, 1.0, "%s -> %s: refused after %.2f s", from, to, took);
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
  pm__kernel_desc *k = NULL;
  cr_assert_eq(pm__kernel_desc_load(c, "/nonexistent/k.json", &k), PM_EIO);
  cr_assert_null(k);
  cr_assert_not_null(strstr(pm_errmsg(c), "/nonexistent/k.json"), "%s", pm_errmsg(c));
  /* a FIFO, which no one writes: refused, not waited on */
  char fifo[128];
  snprintf(fifo, sizeof fifo, "%s/k.fifo", dir);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  cr_assert_eq(pm__kernel_desc_load(c, fifo, &k), PM_EIO);
  cr_assert_not_null(strstr(pm_errmsg(c), "k.fifo: is a FIFO, not a regular file"), "%s", pm_errmsg(c));
}

/* What is checked before tuning touches a database: each buffer's count at each size asked for,
 * and that the seed compiles with its entry unmangled (NVRTC, sm_90: no GPU). */
Test(kernel_file, sizes_and_the_seed_are_checked_before_tuning) {
  pm__kernel_desc *k = NULL;
  const char *path = broken("\"count\": \":rows * :cols\", \"dir\": \"out\"",
                            "\"count\": \":rows * :cols * 1000000\", \"dir\": \"out\"");
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  pm__problem small = {.rows = 10, .cols = 10}, big = {.rows = 1u << 20, .cols = 1u << 10};
  cr_assert_eq(pm__kernel_desc_check_size(c, k, &small), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__kernel_desc_check_size(c, k, &big), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(c), "args[0].count"), "%s", pm_errmsg(c));
  cr_assert_not_null(strstr(pm_errmsg(c), "1 to 2^40 bytes"), "%s", pm_errmsg(c));
  cr_assert_eq(pm__kernel_desc_compile_seed(c, k, "sm_90"), PM_OK, "%s", pm_errmsg(c));
  pm__kernel_desc_free(k);

  /* a source that does not compile at the seed: one line, with NVRTC's words */
  char cu[160];
  snprintf(cu, sizeof cu, "%s/matadd.cu", dir);
  path = broken("\"bytes\":", "\"bytes\":");
  FILE *f = fopen(cu, "a");
  cr_assert_not_null(f);
  fputs("#if BLOCK == 256\nthis is not C++;\n#endif\n", f);
  fclose(f);
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__kernel_desc_compile_seed(c, k, "sm_90"), PM_ECOMPILE);
  cr_assert_not_null(strstr(pm_errmsg(c), "source: the seed does not compile for sm_90"), "%s",
                     pm_errmsg(c));
  cr_assert_null(strchr(pm_errmsg(c), '\n'), "one line: %s", pm_errmsg(c));
  pm__kernel_desc_free(k);

  /* an entry that C++ mangles */
  path = broken("\"bytes\":", "\"bytes\":");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "sed -i 's/extern \"C\" __global__/__global__/' %s", cu);
  cr_assert_eq(system(cmd), 0);
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__kernel_desc_compile_seed(c, k, "sm_90"), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(c), "entry: 'my_matadd' is not a kernel of the compiled"),
                     "%s", pm_errmsg(c));
  pm__kernel_desc_free(k);
}

/* ---- An expression is one bounded, read-only value ------------------------------------------ */

#define BYTES "\"3 * 4 * :rows * :cols\""
#define CONSTRAINT "\":BLOCK * :ITEMS * :VEC <= 8192\""
#define GRID "\"(:rows * :cols + :BLOCK * :ITEMS * :VEC - 1) / (:BLOCK * :ITEMS * :VEC)\""

/* What could run forever or read something: a query inside the expression, refused when the
 * description is read (within a second, as refused() checks), by the authorizer. */
Test(kernel_file, an_expression_that_could_run_forever_is_refused_at_once) {
  ncases = 0;
  refused(BYTES, "\"(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT max(x) FROM c)\"",
          "bytes", "is not one SQL expression");
  refused(CONSTRAINT, "\"(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT "
                      "count(*) FROM c) > :BLOCK\"",
          "constraints[0]", "is not one SQL expression");
  refused(BYTES, "\"(WITH c(x) AS (SELECT 1) SELECT x FROM c)\"", "bytes", "a query inside it");
  refused(BYTES, "\"(SELECT 1)\"", "bytes", "a query inside it");
  refused(BYTES, "\"(VALUES (1))\"", "bytes", "a query inside it");
  refused(CONSTRAINT, "\"EXISTS (SELECT 1)\"", "constraints[0]", "a query inside it");
  refused(CONSTRAINT, "\":BLOCK IN (SELECT 64)\"", "constraints[0]", "a query inside it");
  refused(GRID, "\"max(:rows) OVER ()\"", "grid[0]", "a query inside it");
  refused(BYTES, "\"1 IN sqlite_master\"", "bytes", "a table read");
  refused(BYTES, "\"(SELECT count(*) FROM sqlite_master)\"", "bytes", "is not one SQL expression");
  refused(BYTES, "\"(SELECT 1 FROM pragma_table_list)\"", "bytes", "is not one SQL expression");
  refused(BYTES, "\":rows IN json_each('[1]')\"", "bytes", "is not one SQL expression");
  refused(BYTES, "\"1 IN (SELECT 1 FROM (SELECT 2))\"", "bytes", "a query inside it");
  cr_assert_eq(ncases, 13);
}

/* What could take gigabytes: a function that makes strings or blobs is not one of the allowed
 * ones; what is allowed is held to 2048 characters, a nesting of 64, strings of 8 KiB. */
Test(kernel_file, an_expression_that_could_take_gigabytes_is_refused) {
  ncases = 0;
  refused(BYTES, "\"length(printf('%.*c', 999999999, 'x'))\"", "bytes",
          "the function length() (allowed: abs, ceil, coalesce, floor, ifnull, iif, max, min, "
          "nullif, round)");
  refused(BYTES, "\"printf('%.*c', 999999999, 'x') IS NOT NULL\"", "bytes", "the function printf()");
  refused(BYTES, "\"length(hex(zeroblob(499999999)))\"", "bytes", "the function");
  refused(BYTES, "\"zeroblob(499999999) IS NULL\"", "bytes", "the function zeroblob()");
  refused(CONSTRAINT, "\"randomblob(999999999) IS NOT NULL\"", "constraints[0]",
          "the function randomblob()");
  refused(CONSTRAINT, "\"replace(hex(:BLOCK), '0', '00') <> ''\"", "constraints[0]", "the function");
  refused(BYTES, "\"'a' LIKE 'b'\"", "bytes", "the function like()");
  refused(BYTES, "\"json_array_length('[1]') * :rows\"", "bytes", "the function json_array_length()");
  refused(BYTES, "\"load_extension('x')\"", "bytes", "is not one SQL expression");
  /* 3000 characters; 100 levels of nesting; a string past 8 KiB */
  static char text[4000], deep[1200];
  size_t at = (size_t)snprintf(text, sizeof text, "\":rows");
  while (at < 3000) at += (size_t)snprintf(text + at, sizeof text - at, " + 0");
  snprintf(text + at, sizeof text - at, "\"");
  refused(BYTES, text, "bytes", "longer than 2048 characters");
  at = (size_t)snprintf(deep, sizeof deep, "\"");
  for (int i = 0; i < 100; i++) at += (size_t)snprintf(deep + at, sizeof deep - at, "1 + (");
  at += (size_t)snprintf(deep + at, sizeof deep - at, ":rows");
  for (int i = 0; i < 100; i++) at += (size_t)snprintf(deep + at, sizeof deep - at, ")");
  snprintf(deep + at, sizeof deep - at, "\"");
  refused(BYTES, deep, "bytes", "is not one SQL expression");
  at = (size_t)snprintf(text, sizeof text, "\"length(");
  snprintf(text + at, sizeof text - at, "x'%01800d')\"", 0); /* a blob literal: 900 bytes */
  refused(BYTES, text, "bytes", "the function length()");
  cr_assert_eq(ncases, 12);
}

/* The texts cannot escape their own statement: each is parsed alone and whole, its parentheses
 * balanced inside the one `SELECT (text)` opens, no comment, one column, nothing after. */
Test(kernel_file, an_expression_cannot_escape_its_statement) {
  ncases = 0;
  refused(GRID, "\"(:rows * :cols + 255) / 256) --\"", "grid[0]", "is not one SQL expression");
  refused(GRID, "\"1), (2048\"", "grid[0]", "a ')' that closes what it did not open");
  refused(GRID, "\"1) WHERE (0\"", "grid[0]", "is not one SQL expression");
  refused(GRID, "\"1) FROM sqlite_master WHERE (1\"", "grid[0]", "is not one SQL expression");
  refused(GRID, "\"1) UNION SELECT (2\"", "grid[0]", "is not one SQL expression");
  refused(BYTES, "\"3 * :rows -- the bytes\"", "bytes", "a comment (--)");
  refused(BYTES, "\"3 * :rows /* the bytes */\"", "bytes", "a comment (/*)");
  refused(BYTES, "\"3 * :rows /*\"", "bytes", "a comment (/*)");
  refused(BYTES, "\"3; SELECT 4\"", "bytes", "a ';'");
  refused(BYTES, "\":rows * (:cols\"", "bytes", "a '(' left open");
  refused(BYTES, "\":rows * ':cols\"", "bytes", "a quote left open");
  refused(BYTES, "\":rows * [cols\"", "bytes", "a '[' left open");
  refused(BYTES, "\"?1 * :rows\"", "bytes", "parameters are written :NAME");
  refused(BYTES, "\"$rows * :cols\"", "bytes", "parameters are written :NAME");
  refused(BYTES, "\"@rows * :cols\"", "bytes", "parameters are written :NAME");
  refused(BYTES, "\"\\\"rows\\\" * 4\"", "bytes", "no such column"); /* no string in "" */
  refused(BYTES, "\"   \"", "bytes", "empty");
  refused(BYTES, "\"(1, 2)\"", "bytes", "is not one SQL expression");
  refused(GRID, "\"')' || (2048\"", "grid[0]", "a '(' left open"); /* a quote hides nothing */
  cr_assert_eq(ncases, 19);
  /* a quote, a [name] and a string with a parenthesis in it are a single value still */
  pm__kernel_desc *k = NULL;
  const char *path = broken(BYTES, "\"3 * 4 * :rows * :cols + length(')') * 0\"");
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_EINVAL); /* length() is not allowed */
  path = broken(BYTES, "\"3 * 4 * :rows * :cols + (CASE WHEN ')(' = ')(' THEN 0 ELSE 1 END)\"");
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  pm__problem odd = {.rows = 4097, .cols = 3001};
  const pm__op *op = pm__kernel_desc_op(k);
  cr_assert_eq(op->bytes(op, &odd), 3.0 * 4 * 4097 * 3001);
  pm__kernel_desc_free(k);
}

/* What launch math needs still reads: the allowed functions, CASE, CAST, BETWEEN, IN lists, %,
 * shifts, each evaluated right, per point, as a statement of its own. */
Test(kernel_file, launch_math_evaluates_as_written) {
  pm__kernel_desc *k = NULL;
  const char *path = broken(GRID, "\"max(1, min(2147483647, (:rows * :cols + (1 << 8) - 1) >> 8)) "
                                  "+ abs(-0) + coalesce(NULL, 0) + ifnull(NULL, 0) + "
                                  "iif(:BLOCK BETWEEN 64 AND 1024, 0, 1) + ifnull(nullif(0, 0), 0) "
                                  "+ CAST(round(0.4) AS INTEGER) + CAST(ceil(0.0) AS INTEGER) + "
                                  "CAST(floor(0.9) AS INTEGER) + (CASE WHEN :VEC IN (1, 2, 4) THEN "
                                  "0 ELSE 1 END) + :ITEMS % 1\"");
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_desc_op(k);
  pm__limits lim = pm__limits_default();
  /* the grid is (rows * cols + 255) / 256: at most 2^31 - 1 blocks */
  pm__problem fits = {.rows = 1u << 15, .cols = 1u << 16}, past = {.rows = 1u << 20, .cols = 1u << 20};
  int v[PM__MAX_PARAMS] = {256, 1, 1};
  cr_assert_null(op->check(op, v, &fits, &lim));
  cr_assert_null(op->check(op, v, &past, &lim)); /* min() caps it */
  pm__kernel_desc_free(k);
  path = broken(GRID, "\"(:rows * :cols + 255) / 256\"");
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  op = pm__kernel_desc_op(k);
  cr_assert_null(op->check(op, v, &fits, &lim));
  cr_assert_str_eq(op->check(op, v, &past, &lim), "a grid dimension out of range");
  pm__kernel_desc_free(k);
}

/* Evaluation is bounded per evaluation, not per statement's life: SQLite counts a statement's VM
 * instructions over all its runs, and a bound kept per statement (the progress handler's) would
 * start failing points after some thousands of checks. */
Test(kernel_file, the_space_counts_the_same_however_often_it_is_checked) {
  pm__kernel_desc *k = NULL;
  cr_assert_eq(pm__kernel_desc_load(c, PM_SOURCE_DIR "/examples/kernels/transpose.json", &k), PM_OK,
               "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_desc_op(k);
  pm__problem pr = {.rows = 1000, .cols = 3000};
  for (int pass = 0; pass < 400; pass++) {
    cr_assert_eq(valid_points(op, NULL), 45, "pass %d", pass);
    cr_assert_eq(valid_points(op, &pr), 45, "pass %d", pass);
  }
  pm__kernel_desc_free(k);
}

/* ---- What a description holds is what is read ----------------------------------------------- */

Test(kernel_file, duplicate_keys_and_nul_characters_are_refused_naming_the_field) {
  ncases = 0;
  refused("\"name\": \"my_matadd\"", "\"name\": \"my_matadd\", \"name\": \"other\"", "name",
          "given twice");
  refused("\"bytes\": " BYTES, "\"bytes\": " BYTES ", \"bytes\": \"0\"", "bytes", "given twice");
  refused("\"bytes\": " BYTES, "\"bytes\": " BYTES ", \"block\": [\":BLOCK\"]", "block",
          "given twice");
  refused("\"BLOCK\": 256, \"VEC\": 1", "\"BLOCK\": 256, \"VEC\": 1, \"VEC\": 2", "seed.VEC",
          "given twice");
  refused("\"BLOCK\": 256, \"VEC\": 1", "\"BLOCK\": 256, \"BLOCK\": 256, \"VEC\": 1", "seed.BLOCK",
          "given twice");
  refused("\"name\": \"c\", \"type\": \"f32\"", "\"name\": \"c\", \"name\": \"d\", \"type\": \"f32\"",
          "args[0].name", "given twice");
  refused("\"dir\": \"out\"", "\"dir\": \"out\", \"dir\": \"in\"", "args[0].dir", "given twice");
  refused("\"scalar\": \"i32\", \"value\": \":rows\"",
          "\"scalar\": \"i32\", \"value\": \":rows\", \"value\": \":cols\"", "args[3].value",
          "given twice");
  refused("\"VEC\": [1, 2, 4]", "\"VEC\": [1, 2, 4], \"VEC\": [8]", "params.VEC", "given twice");
  refused("\"entry\": \"my_matadd\"", "\"entry\": \"my_matadd\\u0000junk\"", "entry", "\\u0000");
  refused("\"source\": \"matadd.cu\"", "\"source\": \"matadd.cu\\u0000.txt\"", "source", "\\u0000");
  refused("\"name\": \"my_matadd\"", "\"name\": \"my_matadd\\u0000\"", "name", "\\u0000");
  refused("\"summary\": \"C = A", "\"summary\": \"\\u0000C = A", "summary", "\\u0000");
  refused("\"name\": \"c\", \"type\": \"f32\"", "\"name\": \"c\\u0000d\", \"type\": \"f32\"",
          "args[0].name", "\\u0000");
  refused(BYTES, "\"3 * 4 * :rows * :cols\\u0000 + 1\"", "bytes", "\\u0000");
  refused(CONSTRAINT, "\":BLOCK\\u0000 * 0\"", "constraints[0]", "\\u0000");
  refused("\"BLOCK\": 256, \"VEC\": 1", "\"BLOCK\": 256, \"V\\u0000EC\": 1", "seed", "\\u0000");
  refused("\"bytes\":", "\"by\\u0000tes\": 1, \"bytes\":", "(top)", "\\u0000");
  cr_assert_eq(ncases, 18);
  /* a NUL byte in the file itself */
  const char *path = broken("\"summary\": \"C", "\"summary\": \"@C");
  FILE *f = fopen(path, "r+b");
  cr_assert_not_null(f);
  char *text = malloc(16384);
  size_t n = fread(text, 1, 16384, f);
  char *at = memchr(text, '@', n);
  cr_assert_not_null(at);
  *at = '\0';
  rewind(f);
  cr_assert_eq(fwrite(text, 1, n, f), n);
  fclose(f);
  free(text);
  pm__kernel_desc *k = (pm__kernel_desc *)1;
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(c), "(top): not valid JSON: a NUL byte"), "%s", pm_errmsg(c));
}

/* The source is named relative to the description and stays in its folder: no absolute path, no
 * way out by .., nor by a symbolic link (real paths compared). */
Test(kernel_file, the_source_stays_in_the_descriptions_folder) {
  char cmd[512];
  ncases = 0;
  refused("\"source\": \"matadd.cu\"", "\"source\": \"/etc/passwd\"", "source",
          "'/etc/passwd': a path relative to the description's folder wanted");
  refused("\"source\": \"matadd.cu\"", "\"source\": \"../../../etc/passwd\"", "source",
          "is outside the description's folder");
  refused("\"source\": \"matadd.cu\"", "\"source\": \"../matadd.cu\"", "source",
          "is outside the description's folder");
  refused("\"source\": \"matadd.cu\"", "\"source\": \"\"", "source", "a path relative");
  snprintf(cmd, sizeof cmd, "ln -sf /etc/passwd %s/passwd.cu && mkdir -p %s/sub && "
                            "ln -sfn /etc %s/etc && ln -sf ../matadd.cu %s/sub/up.cu", dir, dir, dir, dir);
  cr_assert_eq(system(cmd), 0);
  refused("\"source\": \"matadd.cu\"", "\"source\": \"passwd.cu\"", "source",
          "is outside the description's folder");
  refused("\"source\": \"matadd.cu\"", "\"source\": \"etc/passwd\"", "source",
          "is outside the description's folder");
  refused("\"source\": \"matadd.cu\"", "\"source\": \"sub\"", "source", "not a regular file");
  refused("\"source\": \"matadd.cu\"", "\"source\": \"sub/nowhere.cu\"", "source",
          "No such file");
  cr_assert_eq(ncases, 8);
  /* inside, by any way of writing it */
  const char *ok[] = {"./matadd.cu", "sub/../matadd.cu", "sub/up.cu", "sub/m.cu"};
  snprintf(cmd, sizeof cmd, "cp %s/examples/kernels/matadd.cu %s/sub/m.cu", PM_SOURCE_DIR, dir);
  cr_assert_eq(system(cmd), 0);
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    char to[128];
    snprintf(to, sizeof to, "\"source\": \"%s\"", ok[i]);
    const char *path = broken("\"source\": \"matadd.cu\"", to);
    pm__kernel_desc *k = NULL;
    cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_OK, "%s: %s", ok[i], pm_errmsg(c));
    pm__kernel_desc_free(k);
  }
}

/* A value echoed into a message is on the message's one line (refused() checks the line); a
 * file too large says which and the limit. */
Test(kernel_file, messages_are_one_line_and_name_the_limit) {
  ncases = 0;
  refused("\"name\": \"my_matadd\"", "\"name\": \"my\\nmatadd\"", "name", "'my\\nmatadd'");
  refused("\"dir\": \"out\"", "\"dir\": \"out\\nsecond line\"", "args[0].dir", "'out\\nsecond line'");
  refused("\"type\": \"f32\", \"count\": \":rows * :cols\", \"dir\": \"out\"",
          "\"type\": \"f32\\r\\t\\u0001\", \"count\": \":rows * :cols\", \"dir\": \"out\"",
          "args[0].type", "'f32\\r\\t\\x01'");
  refused("\"entry\": \"my_matadd\"", "\"entry\": \"my\\nmatadd\"", "entry", "'my\\nmatadd'");
  refused("\"source\": \"matadd.cu\"", "\"source\": \"no\\nwhere.cu\"", "source", "no\\nwhere.cu");
  refused(BYTES, "\"3 * 4 *\\n :rows * :cols / 0\"", "bytes", "'3 * 4 *\\n :rows * :cols / 0'");
  refused("\"VEC\": [1, 2, 4]", "\"V\\nEC\": [1, 2, 4]", "params.V\\nEC", "C identifier");
  refused("\"bytes\":", "\"col\\nour\": 1, \"bytes\":", "(top)", "'col\\nour'");
  cr_assert_eq(ncases, 8);
  /* a constraint written over two lines prunes with a reason of one */
  pm__kernel_desc *k = NULL;
  const char *path = broken(CONSTRAINT, "\":BLOCK * :ITEMS * :VEC\\n <= 8192\"");
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_desc_op(k);
  pm__limits lim = pm__limits_default();
  int v[PM__MAX_PARAMS] = {1024, 4, 8};
  cr_assert_str_eq(op->check(op, v, NULL, &lim), "constraints[0]: :BLOCK * :ITEMS * :VEC\\n <= 8192");
  pm__kernel_desc_free(k);
  /* a description of 2 MiB, a source of 17 MiB */
  path = broken("\"summary\": \"C", "\"summary\": \"C");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "head -c 2097152 /dev/zero | tr '\\0' ' ' >> %s", path);
  cr_assert_eq(system(cmd), 0);
  k = (pm__kernel_desc *)1;
  double t0 = seconds();
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_EINVAL);
  cr_assert_lt(seconds() - t0, 1.0);
  char want[256];
  snprintf(want, sizeof want, "%s: larger than 1 MiB, the most a kernel description may be", path);
  cr_assert_str_eq(pm_errmsg(c), want);
  path = broken("\"summary\": \"C", "\"summary\": \"C");
  snprintf(cmd, sizeof cmd, "head -c 17825792 /dev/zero | tr '\\0' ' ' >> %s/matadd.cu", dir);
  cr_assert_eq(system(cmd), 0);
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(c), "source: "), "%s", pm_errmsg(c));
  cr_assert_not_null(strstr(pm_errmsg(c), "matadd.cu: larger than 16 MiB, the most a source may be"),
                     "%s", pm_errmsg(c));
}

/* A new database in the test's folder for op (its ops the built-in ones and op: plus), with the
 * fake GPU d in it (*gpu). */
static pm__db *db_for(const pm__op *op, pm__ops_db_plus *plus, const pm__device_info *d,
                      int64_t *gpu) {
  char file[128];
  pm__db *db = NULL;
  snprintf(file, sizeof file, "%s/%s.db", dir, op->name);
  unlink(file);
  cr_assert_eq(pm__db_open(c, file, 0, pm__ops_db_with(op, plus), &db), PM_OK, "%s",
               pm_errmsg(c));
  cr_assert_eq(pm__db_gpu_put(db, d, 12040, 12080, gpu), PM_OK, "%s", pm_errmsg(c));
  return db;
}

/* Three dims: a batch of matrices, the batch in pm__problem.n. The example's sizes
 * parse as BATCHxROWSxCOLS, its expressions see :batch, and the database keeps such a problem
 * as "batch=B rows=R cols=C", its size the elements of the whole batch: the nearest tuned batch
 * serves another. */
Test(kernel_file, a_batch_of_matrices_is_three_dims) {
  pm__kernel_desc *k = NULL;
  cr_assert_eq(pm__kernel_desc_load(c, PM_SOURCE_DIR "/examples/kernels/batched_transpose.json", &k),
               PM_OK, "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_desc_op(k);
  cr_assert_eq(op->dims, 3);
  cr_assert_str_eq(pm__kernel_desc_dim_name(k, 0), "batch");
  cr_assert_null(pm__kernel_desc_dim_name(k, 3));
  pm__problem pr = {0};
  cr_assert_eq(pm__problem_parse(c, op, "8x1000x768", &pr), PM_OK, "%s", pm_errmsg(c));
  cr_assert(pr.n == 8 && pr.rows == 1000 && pr.cols == 768);
  char text[64];
  pm__problem_text(op, &pr, text, sizeof text);
  cr_assert_str_eq(text, "8x1000x768");
  pm__problem bad = {0};
  cr_assert_eq(pm__problem_parse(c, op, "1000x768", &bad), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(c), "BATCHxROWSxCOLS"), "%s", pm_errmsg(c));
  cr_assert_eq(pm__problem_parse(c, op, "65536x65536x2", &bad), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(c), "more than 2^32 elements"), "%s", pm_errmsg(c));
  cr_assert_eq(op->bytes(op, &pr), 2.0 * 4 * 8 * 1000 * 768, "bytes sees :batch");
  cr_assert_eq(valid_points(op, &pr), 45);
  pm__problem many = {.n = 70000, .rows = 8, .cols = 8};
  cr_assert_eq(valid_points(op, &many), 0, "a constraint on :batch prunes");
  cr_assert_eq(pm__kernel_desc_check_size(c, k, &pr), PM_OK, "%s", pm_errmsg(c));

  pm__ops_db_plus plus;
  pm__device_info d = dbtest_gpu(0, 0);
  int64_t gpu;
  pm__db *db = db_for(op, &plus, &d, &gpu);
  const char *sha = pm__op_template(op)->sha256;
  pm__db_problem p;
  pm__op_db_problem(op, &pr, &p);
  cr_assert(p.n == 8 && p.rows == 1000 && p.cols == 768);
  char ptext[PM__DB_PROBLEM_MAX];
  cr_assert_eq(pm__db_problem_text(db, &p, ptext), PM_OK, "%s", pm_errmsg(c));
  cr_assert_str_eq(ptext, "batch=8 rows=1000 cols=768");
  pm__db_problem no_batch = p;
  no_batch.n = 0;
  cr_assert_eq(pm__db_problem_text(db, &no_batch, ptext), PM_EINVAL);
  pm__db_measurement m = dbtest_measurement(gpu, p, sha, "{\"TILE\":64,\"BY\":4,\"PAD\":1}", 0.05);
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__db_template_current(db, op->name, sha), PM_OK, "%s", pm_errmsg(c));
  pm__db_known known;
  cr_assert_eq(pm__op_known_load(db, &d, op, &known), PM_OK, "%s", pm_errmsg(c));
  pm__db_winner w;
  cr_assert_eq(pm__db_known_get_if(&known, &p, NULL, NULL, &w), PM_OK, "%s", pm_errmsg(c));
  cr_assert_str_eq(w.config, "TILE=64 BY=4 PAD=1");
  pm__db_problem other = p;
  other.n = 16;
  cr_assert_eq(pm__db_known_get_if(&known, &other, NULL, NULL, &w), PM_ENOTFOUND,
               "another batch is another size");
  cr_assert_eq(pm__db_known_nearest_if(&known, &other, NULL, NULL, &w), PM_OK, "%s", pm_errmsg(c));
  cr_assert(w.n == 8 && w.rows == 1000 && w.cols == 768, "the nearest: the batch of 8");
  pm__db_known_free(&known);
  pm__db_close(db);
  pm__kernel_desc_free(k);
}

/* A scalar the tuning must depend on is marked "tuned": an integer each call gives,
 * its value part of the size (":k=V" after it, pm__problem.radius), named by expressions as a
 * dimension is, kept apart in the database ("rows=R cols=C k=V"): a value never tuned is served
 * nothing tuned at another. What is not such a scalar is refused naming the field. */
Test(kernel_file, a_tuned_scalar_is_part_of_the_size) {
#define COLS_ARG "{\"name\": \"cols\", \"scalar\": \"i32\", \"value\": \":cols\"}"
  pm__kernel_desc *k = NULL;
  const char *path = broken(COLS_ARG, COLS_ARG ", {\"name\": \"k\", \"scalar\": \"i32\", \"tuned\": true}");
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_desc_op(k);
  int is_i64 = -1;
  cr_assert_eq(pm__kernel_desc_tuned(k, &is_i64), 2, "the third scalar");
  cr_assert_eq(is_i64, 0);
  cr_assert_str_eq(op->radius_name, "k");
  pm__problem pr = {0};
  cr_assert_eq(pm__problem_parse(c, op, "100x200:k=3", &pr), PM_OK, "%s", pm_errmsg(c));
  cr_assert(pr.rows == 100 && pr.cols == 200 && pr.radius == 3);
  char ptext[64];
  pm__problem_text(op, &pr, ptext, sizeof ptext);
  cr_assert_str_eq(ptext, "100x200 k=3");
  pm__problem bad = {0};
  cr_assert_eq(pm__problem_parse(c, op, "100x200", &bad), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(c), ":k=V"), "%s", pm_errmsg(c));
  cr_assert_eq(pm__problem_parse(c, op, "100x200:k=0", &bad), PM_EINVAL);
  cr_assert_eq(pm__problem_parse(c, op, "100x200:j=3", &bad), PM_EINVAL);
  pm__kernel_desc_free(k);

  /* checked at load with its least value, 1: an expression may divide by it */
  path = broken("\"bytes\": \"3 * 4 * :rows * :cols\"", "\"bytes\": \"3 * 4 * :rows * :cols / :k\"");
  char sub[512];
  snprintf(sub, sizeof sub, "sed -i 's/%s/%s/' %s", COLS_ARG,
           COLS_ARG ", {\"name\": \"k\", \"scalar\": \"i32\", \"tuned\": true}", path);
  cr_assert_eq(system(sub), 0);
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  pm__problem two = {.rows = 10, .cols = 10, .radius = 2};
  cr_assert_eq(pm__kernel_desc_op(k)->bytes(pm__kernel_desc_op(k), &two), 3.0 * 4 * 100 / 2);
  pm__kernel_desc_free(k);

  /* an expression names it as it names a dimension: BLOCK at least k */
  path = broken("\":BLOCK * :ITEMS * :VEC <= 8192\"",
                "\":BLOCK * :ITEMS * :VEC <= 8192\", \":BLOCK >= :k\"");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "sed -i 's/%s/%s/' %s", COLS_ARG,
           COLS_ARG ", {\"name\": \"k\", \"scalar\": \"i64\", \"tuned\": true}", path);
  cr_assert_eq(system(cmd), 0);
  cr_assert_eq(pm__kernel_desc_load(c, path, &k), PM_OK, "%s", pm_errmsg(c));
  op = pm__kernel_desc_op(k);
  cr_assert_eq(pm__kernel_desc_tuned(k, &is_i64), 2);
  cr_assert_eq(is_i64, 1);
  pm__problem small = {.rows = 64, .cols = 64, .radius = 1},
              large = {.rows = 64, .cols = 64, .radius = 300};
  cr_assert_eq(valid_points(op, &small), 56);
  cr_assert_eq(valid_points(op, &large), 2 * 3 * 4 - 4, "BLOCK 512 and 1024 alone (less the 4 "
                                                        "points of over 8192 floats a block)");

  pm__ops_db_plus plus;
  pm__device_info d = dbtest_gpu(0, 0);
  int64_t gpu;
  pm__db *db = db_for(op, &plus, &d, &gpu);
  const char *sha = pm__op_template(op)->sha256;
  pm__db_problem p;
  pm__problem three = {.rows = 100, .cols = 200, .radius = 3};
  pm__op_db_problem(op, &three, &p);
  char dbtext[PM__DB_PROBLEM_MAX];
  cr_assert_eq(pm__db_problem_text(db, &p, dbtext), PM_OK, "%s", pm_errmsg(c));
  cr_assert_str_eq(dbtext, "rows=100 cols=200 k=3");
  pm__db_measurement m =
      dbtest_measurement(gpu, p, sha, "{\"BLOCK\":512,\"VEC\":4,\"ITEMS\":1}", 0.01);
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(c));
  pm__db_problem p300 = p;
  p300.radius = 300; /* past a filter's radii: an export carries it, an import takes it */
  m = dbtest_measurement(gpu, p300, sha, "{\"BLOCK\":512,\"VEC\":2,\"ITEMS\":1}", 0.02);
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(c));
  char *doc = NULL;
  size_t doclen = 0;
  FILE *mem = open_memstream(&doc, &doclen);
  int exported = 0;
  cr_assert_eq(pm__db_export(db, mem, 1, &exported), PM_OK, "%s", pm_errmsg(c));
  fclose(mem);
  cr_assert_eq(exported, 2);
  char copy[128];
  snprintf(copy, sizeof copy, "%s/copy.db", dir);
  pm__db *db2 = NULL;
  cr_assert_eq(pm__db_open(c, copy, 0, pm__ops_db_with(op, &plus), &db2), PM_OK, "%s",
               pm_errmsg(c));
  cr_assert_eq(pm__db_import(db2, doc, doclen, NULL), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm_test_count(pm__db_handle(db2),
                             "SELECT count(*) FROM measurement WHERE problem = 'rows=100 cols=200 "
                             "k=300' AND radius = 300"),
               1);
  pm__db_close(db2);
  free(doc);
  cr_assert_eq(pm__db_template_current(db, op->name, sha), PM_OK, "%s", pm_errmsg(c));
  pm__db_known known;
  pm__db_winner w;
  cr_assert_eq(pm__op_known_load(db, &d, op, &known), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__db_known_get_if(&known, &p, NULL, NULL, &w), PM_OK, "%s", pm_errmsg(c));
  pm__db_problem other = p;
  other.radius = 4;
  cr_assert_eq(pm__db_known_nearest_if(&known, &other, NULL, NULL, &w), PM_ENOTFOUND,
               "k=4 is another problem: nothing tuned serves it");
  other.radius = 0;
  cr_assert_eq(pm__db_problem_text(db, &other, dbtext), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(c), "k 0 is not 1 to"), "%s", pm_errmsg(c));
  pm__db_known_free(&known);
  pm__db_close(db);
  pm__kernel_desc_free(k);

  refused(COLS_ARG, COLS_ARG ", {\"name\": \"k\", \"scalar\": \"f32\", \"tuned\": true}",
          "args[5].tuned", "an integer (i32 or i64)");
  refused(COLS_ARG, COLS_ARG ", {\"name\": \"k\", \"scalar\": \"i32\", \"value\": \"2\", "
                    "\"tuned\": true}", "args[5].tuned", "has no \"value\"");
  refused(COLS_ARG, COLS_ARG ", {\"name\": \"k\", \"scalar\": \"i32\", \"tuned\": 1}",
          "args[5].tuned", "true or false wanted");
  refused(COLS_ARG, COLS_ARG ", {\"name\": \"k\", \"scalar\": \"i32\", \"tuned\": true}, "
                    "{\"name\": \"j\", \"scalar\": \"i32\", \"tuned\": true}",
          "args[6].tuned", "at most one");
  refused(COLS_ARG, COLS_ARG ", {\"name\": \"rows\", \"scalar\": \"i32\", \"tuned\": true}",
          "args", "also a dimension's name");
#undef COLS_ARG
}
