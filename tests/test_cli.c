/* test_cli.c: the pmtune command as a user runs it: output, exit statuses, one-line usage errors. */
#include <ctype.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

typedef struct result {
  int status;
  char out[65536], err[65536];
} result;

static result R;

static void slurp(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
  buf[n] = '\0';
  if (f) fclose(f);
}

/* Runs the shell command line `line`; fills R with its exit status, stdout and stderr. */
static result *run_shell(const char *line) {
  char dir[] = "/tmp/pmtune-cli-XXXXXX", cmd[4096], out[64], err[64];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(out, sizeof out, "%s/out", dir);
  snprintf(err, sizeof err, "%s/err", dir);
  snprintf(cmd, sizeof cmd, "%s >%s 2>%s", line, out, err);
  int st = system(cmd);
  cr_assert(WIFEXITED(st), "%s: did not exit normally", cmd);
  R.status = WEXITSTATUS(st);
  slurp(out, R.out, sizeof R.out);
  slurp(err, R.err, sizeof R.err);
  remove(out), remove(err), rmdir(dir);
  return &R;
}

/* Runs `pmtune ARGS` through the shell, as run_shell. */
static result *run(const char *args) {
  char line[4096];
  snprintf(line, sizeof line, "'%s' %s", PMTUNE_BIN, args);
  return run_shell(line);
}

static int lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

static void expect_usage_error(const char *args, const char *needle) {
  result *r = run(args);
  cr_assert_eq(r->status, 2, "pmtune %s: status %d, stderr: %s", args, r->status, r->err);
  cr_assert_eq(lines(r->err), 1, "pmtune %s: one line, got: %s", args, r->err);
  cr_assert_not_null(strstr(r->err, needle), "pmtune %s: '%s' not in: %s", args, needle, r->err);
}

Test(cli, help_lists_the_commands) {
  result *r = run("--help");
  cr_assert_eq(r->status, 0);
  const char *cmds[] = {"devices", "compile", "space", "tune", "show", "explain", "bench",
                        "report", "db", "export", "import", "kernel"};
  for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
    char line[32];
    snprintf(line, sizeof line, "\n  %s ", cmds[i]);
    cr_assert_not_null(strstr(r->out, line), "%s is listed: %s", cmds[i], r->out);
  }
  r = run("");
  cr_assert_eq(r->status, 2, "no command is bad usage");
}

Test(cli, help_cmd_and_cmd_help_say_the_same) {
  static char a[65536];
  const char *cmds[] = {"devices", "compile", "space", "tune", "show", "explain", "bench",
                        "report", "db", "export", "import", "kernel"};
  for (int i = 0; i < (int)(sizeof cmds / sizeof *cmds); i++) {
    char args[64];
    snprintf(args, sizeof args, "help %s", cmds[i]);
    result *r = run(args);
    cr_assert_eq(r->status, 0, "help %s", cmds[i]);
    cr_assert_not_null(strstr(r->out, "usage: pmtune"), "help %s: %s", cmds[i], r->out);
    strcpy(a, r->out);
    snprintf(args, sizeof args, "%s --help", cmds[i]);
    r = run(args);
    cr_assert_eq(r->status, 0);
    cr_assert_str_eq(r->out, a);
  }
}

Test(cli, bad_usage_is_one_line_and_status_2) {
  expect_usage_error("frobnicate", "unknown command 'frobnicate'");
  expect_usage_error("help frobnicate", "unknown command 'frobnicate'");
  expect_usage_error("compile --arch sm_90 --op nosuch", "unknown --op 'nosuch'");
  expect_usage_error("compile --arch sm90 --op matadd", "malformed architecture 'sm90'");
  expect_usage_error("compile --arch sm_9x --op matadd", "malformed architecture");
  expect_usage_error("compile --arch sm_20 --op matadd", "cannot compile for sm_20");
  expect_usage_error("compile --arch sm_90", "no --op");
  expect_usage_error("compile --arch sm_90 --op matadd --bogus", "unknown option '--bogus'");
  expect_usage_error("compile --op matadd --arch", "needs a value");
  expect_usage_error("compile --arch sm_90 --op matadd -D 1BAD", "malformed define '1BAD'");
  expect_usage_error("compile --arch sm_90 --op matadd extra", "unexpected argument 'extra'");
  expect_usage_error("devices --all", "unknown option '--all'");
  expect_usage_error("space", "no --op");
  expect_usage_error("space --op matadd --size 12", "wants ROWSxCOLS");
  expect_usage_error("space --op filter --radius 9", "--radius '9'");
  expect_usage_error("tune --op nosuch", "unknown --op 'nosuch'");
  expect_usage_error("tune --size 64x64", "--size needs one --op");
  expect_usage_error("tune --op reduce --size 0", "from 1 to 2147483647");
  expect_usage_error("tune --op matadd --size 64x64 --strategy greedy", "--strategy 'greedy'");
  expect_usage_error("tune --op matadd --budget -3", "--budget '-3'");
  expect_usage_error("tune --op matadd --time soon", "--time 'soon'");
  expect_usage_error("tune --op filter --size 64x64 --border wrap", "--border 'wrap'");
  expect_usage_error("explain --op matadd --size 64x64 --border zero", "--border does not apply to matadd");
  expect_usage_error("space --op filter --order col", "--order does not apply to filter");
  expect_usage_error("tune --border zero", "--border needs one --op");
  expect_usage_error("tune --op matadd --device two", "--device 'two'");
  expect_usage_error("show --op nosuch", "unknown --op 'nosuch'");
}

Test(cli, space_counts_points_without_a_gpu) {
  result *r = run("space --op matadd --size 4097x3001");
  cr_assert_eq(r->status, 0, "%s", r->err);
  unsigned long long total = 0, valid = 0, kernels = 0;
  const char *p = strstr(r->out, "points: ");
  cr_assert(p && sscanf(p, "points: %llu in all, %llu valid for 4097x3001 row-major, compiling to %llu",
                        &total, &valid, &kernels) == 3, "%s", r->out);
  cr_assert_gt(valid, 0);
  cr_assert_lt(valid, total, "some points are pruned");
  cr_assert_lt(kernels, valid, "layouts share kernels");
  cr_assert_not_null(strstr(r->out, "packed lines are not aligned to the vector width"), "%s", r->out);
  cr_assert_not_null(strstr(r->out, "seed: bx=32 by=32 vec=1 ept=1 grid=0 map=0 align=0"), "%s", r->out);
}

/* A kernel of one's own: its space from its description; a broken one, one line and status 1. */
Test(cli, space_reads_a_kernel_file) {
  result *r = run("space --kernel " PM_SOURCE_DIR "/examples/kernels/matadd.json --size 4097x3001");
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "points: 60 in all, 56 valid for 4097x3001, compiling to 56"),
                     "%s", r->out);
  cr_assert_not_null(strstr(r->out, "pruned: 4, constraints[0]: :BLOCK * :ITEMS * :VEC <= 8192"), "%s", r->out);
  r = run("space --kernel /nonexistent/k.json");
  cr_assert_eq(r->status, 1, "%s", r->err);
  cr_assert_eq(lines(r->err), 1, "%s", r->err);
  cr_assert_not_null(strstr(r->err, "/nonexistent/k.json"), "%s", r->err);
  expect_usage_error("space --op matadd --kernel k.json", "--op and --kernel: one or the other");
  expect_usage_error("space --kernel k.json --dtype bf16", "a kernel file has its own");
}

/* The gallery (examples/kernels): each description's space prints for a size, and its seed and
 * its largest point compile without a GPU. */
Test(cli, every_gallery_kernel_prints_its_space_and_compiles) {
  static const struct {
    const char *name, *size, *largest;
  } gallery[] = {
      {"matadd", "4097x3001", "BLOCK=1024 VEC=4 ITEMS=2"},
      {"transpose", "4097x3001", "TILE=64 BY=16 PAD=2"},
      {"axpy", "1000003", "BLOCK=1024 VEC=4 ITEMS=2"},
      {"softmax", "4096x1000", "THREADS=1024 ROWS=1 VEC=4 KEEP=8"},
      {"layernorm", "4096x1000", "THREADS=1024 ROWS=1 VEC=4"},
  };
  for (size_t i = 0; i < sizeof gallery / sizeof *gallery; i++) {
    char args[512];
    snprintf(args, sizeof args, "space --kernel %s/examples/kernels/%s.json --size %s",
             PM_SOURCE_DIR, gallery[i].name, gallery[i].size);
    result *r = run(args);
    cr_assert_eq(r->status, 0, "%s: %s", gallery[i].name, r->err);
    cr_assert_not_null(strstr(r->out, "valid for"), "%s: %s", gallery[i].name, r->out);
    snprintf(args, sizeof args, "compile --kernel %s/examples/kernels/%s.json --arch sm_90",
             PM_SOURCE_DIR, gallery[i].name);
    r = run(args);
    cr_assert_eq(r->status, 0, "%s's seed: %s", gallery[i].name, r->err);
    snprintf(args, sizeof args, "compile --kernel %s/examples/kernels/%s.json --arch sm_90 "
                                "--config '%s'", PM_SOURCE_DIR, gallery[i].name, gallery[i].largest);
    r = run(args);
    cr_assert_eq(r->status, 0, "%s's %s: %s", gallery[i].name, gallery[i].largest, r->err);
  }
}

/* `pmtune kernel new NAME` writes a kernel and its description whose space prints and whose
 * seed compiles as they are; it never replaces a file, and writes both or neither. */
Test(cli, kernel_new_writes_a_kernel_whose_space_prints_and_seed_compiles) {
  char dir[] = "/tmp/pmtune-cli-new-XXXXXX", args[512], path[256];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(args, sizeof args, "kernel new my_scale --dir %s", dir);
  result *r = run(args);
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "my_scale.json"), "%s", r->out);
  snprintf(args, sizeof args, "space --kernel %s/my_scale.json --size 1000003", dir);
  r = run(args);
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "seed: BLOCK=256 ITEMS=1"), "%s", r->out);
  snprintf(args, sizeof args, "compile --kernel %s/my_scale.json --arch sm_90", dir);
  r = run(args);
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "-DBLOCK=256 -DITEMS=1"), "%s", r->out);
  snprintf(args, sizeof args, "compile --kernel %s/my_scale.json --arch sm_90 --config "
                              "'BLOCK=1024 ITEMS=4'", dir);
  cr_assert_eq(run(args)->status, 0, "the largest point compiles too: %s", R.err);
  /* again: both exist; one alone is not replaced either, and the other is not written */
  snprintf(path, sizeof path, "%s/my_scale.json", dir);
  static char before[8192], after[8192];
  slurp(path, before, sizeof before);
  cr_assert_gt(strlen(before), 100, "%s", path);
  snprintf(args, sizeof args, "kernel new my_scale --dir %s", dir);
  r = run(args);
  cr_assert_eq(r->status, 1);
  cr_assert_eq(lines(r->err), 1, "%s", r->err);
  cr_assert_not_null(strstr(r->err, "my_scale.cu' exists"), "%s", r->err);
  snprintf(path, sizeof path, "%s/other.json", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("mine\n", f);
  fclose(f);
  snprintf(args, sizeof args, "kernel new other --dir %s", dir);
  r = run(args);
  cr_assert_eq(r->status, 1);
  cr_assert_not_null(strstr(r->err, "other.json' exists"), "%s", r->err);
  snprintf(path, sizeof path, "%s/other.cu", dir);
  cr_assert_neq(access(path, F_OK), 0, "nothing written beside a file that exists");
  snprintf(path, sizeof path, "%s/my_scale.json", dir);
  slurp(path, after, sizeof after);
  cr_assert_str_eq(after, before);
  snprintf(args, sizeof args, "kernel new k --dir %s/my_scale.cu", dir);
  r = run(args);
  cr_assert_eq(r->status, 1);
  cr_assert_not_null(strstr(r->err, "not a folder"), "%s", r->err);
  snprintf(args, sizeof args, "kernel new k --dir %s/missing", dir);
  r = run(args);
  cr_assert_eq(r->status, 1);
  cr_assert_not_null(strstr(r->err, "No such file"), "%s", r->err);
  snprintf(args, sizeof args, "rm -rf %s", dir);
  cr_assert_eq(system(args), 0);
}

/* A point of a kernel of one's own compiles without a GPU; a point outside its space is bad
 * usage; an entry the cubin does not hold as written (C++ mangles it) fails, naming it. */
Test(cli, compile_compiles_a_kernel_files_point) {
  result *r = run("compile --kernel " PM_SOURCE_DIR "/examples/kernels/matadd.json --arch sm_90");
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "-DBLOCK=256 -DVEC=1 -DITEMS=1"), "the seed: %s", r->out);
  r = run("compile --kernel " PM_SOURCE_DIR "/examples/kernels/matadd.json --arch sm_90 "
          "--config 'BLOCK=128 VEC=4 ITEMS=2'");
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "-DBLOCK=128 -DVEC=4 -DITEMS=2"), "%s", r->out);
  expect_usage_error("compile --kernel " PM_SOURCE_DIR "/examples/kernels/matadd.json --arch "
                     "sm_90 --config 'BLOCK=1024 VEC=4 ITEMS=8'",
                     "is not a point of my_matadd's space: constraints[0]");
  cr_assert_eq(system("mkdir -p /tmp/pmtune-cli-kernel"), 0);
  FILE *f = fopen("/tmp/pmtune-cli-kernel/k.cu", "w");
  cr_assert_not_null(f);
  fputs("__global__ void twice(float *x) { x[threadIdx.x] *= 2; }\n", f); /* not extern "C" */
  fclose(f);
  f = fopen("/tmp/pmtune-cli-kernel/k.json", "w");
  cr_assert_not_null(f);
  fputs("{\"name\": \"twice\", \"source\": \"k.cu\", \"entry\": \"twice\", \"dims\": [\"n\"],"
        " \"params\": {\"B\": [32, 64]}, \"seed\": {\"B\": 32}, \"grid\": [\"(:n + :B - 1) / :B\"],"
        " \"block\": [\":B\"], \"args\": [{\"name\": \"x\", \"type\": \"f32\", \"count\": \":n\","
        " \"dir\": \"inout\"}], \"bytes\": \"8 * :n\"}",
        f);
  fclose(f);
  r = run("compile --kernel /tmp/pmtune-cli-kernel/k.json --arch sm_90");
  cr_assert_eq(r->status, 1, "%s", r->out);
  cr_assert_eq(lines(r->err), 1, "%s", r->err);
  cr_assert_not_null(strstr(r->err, "entry: 'twice' is not a kernel of the compiled k.cu"), "%s",
                     r->err);
  cr_assert_eq(system("rm -rf /tmp/pmtune-cli-kernel"), 0);
}

/* A filter size may carry its own radius (three sizes with three radii were tuned at
 * the last --radius): the same as --radius for that size; both given and different: refused. */
Test(cli, a_filter_size_carries_its_own_radius) {
  static char own[sizeof R.out];
  result *r = run("space --op filter --size 640x480:r3");
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "640x480 r=3"), "%s", r->out);
  snprintf(own, sizeof own, "%s", r->out);
  r = run("space --op filter --size 640x480 --radius 3");
  cr_assert_str_eq(r->out, own, "the size's radius and --radius say the same");
  r = run("space --op filter --size 640x480:r3 --radius 3");
  cr_assert_str_eq(r->out, own);
  r = run("space --op filter --size 640x480");
  cr_assert_not_null(strstr(r->out, "640x480 r=1"), "the default radius: %s", r->out);
  expect_usage_error("space --op filter --size 640x480:r3 --radius 2", "--radius says 2");
  expect_usage_error("tune --op filter --size 64x64:r2 --size 64x64:r3 --radius 1", "--radius says 1");
  expect_usage_error("explain --op filter --size 64x64:r4", ":rR, R from 1 to 3");
  expect_usage_error("bench --op matadd --size 64x64:r2", "ROWSxCOLS");
}

Test(cli, tune_needs_a_gpu) {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0)
    cr_skip_test("this machine has a GPU: test_gpu_tune covers tuning");
  result *r = run("tune --op matadd --size 64x64 --db /tmp/pmtune-cli-tune.db");
  cr_assert_eq(r->status, 1, "%s", r->err);
  cr_assert_not_null(strstr(r->err, "no CUDA device"), "%s", r->err);
}

Test(cli, compile_without_gpu_prints_what_it_made) {
  result *r = run("compile --arch sm_90 --op matadd -D BX=64 -D BY=4 -o /tmp/pmtune-cli-test.cubin");
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "matadd.cu"), "%s", r->out);
  cr_assert_not_null(strstr(r->out, "sm_90"), "%s", r->out);
  cr_assert_not_null(strstr(r->out, "-DBX=64 -DBY=4"), "%s", r->out);
  size_t bytes = 0;
  const char *p = strstr(r->out, "cubin");
  cr_assert(p && sscanf(p, "cubin %zu bytes", &bytes) == 1, "%s", r->out);
  cr_assert_not_null(strstr(r->out, " ms"), "%s", r->out);
  FILE *f = fopen("/tmp/pmtune-cli-test.cubin", "rb");
  cr_assert_not_null(f);
  char magic[4];
  fseek(f, 0, SEEK_END);
  cr_assert_eq((size_t)ftell(f), bytes, "the file holds the cubin it reported");
  rewind(f);
  cr_assert_eq(fread(magic, 1, 4, f), 4);
  fclose(f);
  remove("/tmp/pmtune-cli-test.cubin");
  cr_assert_eq(memcmp(magic, "\177ELF", 4), 0);
}

Test(cli, compile_a_named_configuration) {
  result *r = run("compile --arch sm_90 --op matadd --config seed");
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "-DBX=32 -DBY=32 -DVEC=1 -DEPT=1 -DGRID=0 -DMAP=0"), "%s", r->out);
  r = run("compile --arch sm_80 --op filter --config seed --radius 3");
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "-DR=3 -DZERO=0"), "%s", r->out);
  r = run("compile --arch sm_80 --op filter --config seed --radius 2 --border zero");
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "-DR=2 -DZERO=1"), "%s", r->out);
  expect_usage_error("compile --arch sm_80 --op filter --config seed --border wrap", "--border 'wrap'");
  r = run("compile --arch sm_90 --op reduce --config 'block=512 items=8 vec=4 step=2 combine=0 acc=1 grid=4'");
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_not_null(strstr(r->out, "-DBLOCK=512 -DITEMS=8 -DVEC=4 -DSTEP=2 -DCOMBINE=0 -DACC=1"), "%s", r->out);
  expect_usage_error("compile --arch sm_90 --op reduce --config 'block=500'", "not a value of block");
  expect_usage_error("compile --arch sm_90 --file /tmp/x.cu --config seed", "--config needs --op");
}

Test(cli, a_failed_compile_shows_the_nvrtc_log) {
  const char *path = "/tmp/pmtune-cli-broken.cu";
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("extern \"C\" __global__ void k(float *p) {\n  p[0] = not_declared;\n}\n", f);
  fclose(f);
  result *r = run("compile --arch sm_80 --file /tmp/pmtune-cli-broken.cu");
  remove(path);
  cr_assert_eq(r->status, 1, "%s", r->err);
  cr_assert_not_null(strstr(r->err, "pmtune-cli-broken.cu(2): error"), "%s", r->err);
  cr_assert_not_null(strstr(r->err, "not_declared"), "%s", r->err);
  r = run("compile --arch sm_80 --file /nonexistent/x.cu");
  cr_assert_eq(r->status, 1);
  cr_assert_not_null(strstr(r->err, "cannot read '/nonexistent/x.cu'"), "%s", r->err);
}

Test(cli, devices_reports_gpus_or_their_absence) {
  int n = 0;
  int have_gpu = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  result *r = run("devices");
  if (have_gpu) {
    cr_assert_eq(r->status, 0, "%s", r->err);
    cr_assert_not_null(strstr(r->out, "peak GB/s"), "%s", r->out);
    struct cudaDeviceProp p;
    CUDA_OK(cudaGetDeviceProperties(&p, 0));
    cr_assert_not_null(strstr(r->out, p.name), "%s", r->out);
  } else {
    cr_assert_eq(r->status, 1, "%s", r->err);
    cr_assert_not_null(strstr(r->err, "no CUDA device"), "%s", r->err);
    cr_assert_eq(lines(r->err), 1, "%s", r->err);
  }
}

/* The toolkit's stub libcuda found before a driver (a common mistake of LD_LIBRARY_PATH) is "no
 * CUDA device", like no driver at all, in one line. */
Test(cli, a_stub_driver_is_no_cuda_device) {
  char stub[512], dir[] = "/tmp/pmtune-stub-XXXXXX", link[600], cmd[2048], err[640];
  snprintf(stub, sizeof stub, "%s/stubs/libcuda.so", PM_CUDA_LIB_DIR);
  if (access(stub, R_OK) != 0) cr_skip_test("no stub libcuda at %s", stub);
  cr_assert_not_null(mkdtemp(dir));
  snprintf(link, sizeof link, "%s/libcuda.so.1", dir);
  cr_assert_eq(symlink(stub, link), 0);
  snprintf(err, sizeof err, "%s/err", dir);
  snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s '%s' devices >/dev/null 2>%s", dir, PMTUNE_BIN, err);
  int st = system(cmd);
  slurp(err, R.err, sizeof R.err);
  remove(err), remove(link), rmdir(dir);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "%s: status %d", cmd, WEXITSTATUS(st));
  cr_assert_not_null(strstr(R.err, "no CUDA device"), "%s", R.err);
  cr_assert_not_null(strstr(R.err, "cudaErrorStubLibrary"), "%s", R.err);
  cr_assert_eq(lines(R.err), 1, "%s", R.err);
}

/* ---- The README's command table against each command's --help ---- */

typedef struct optset {
  int n;
  char name[32][40];
  char alias[32][40]; /* the help's "-D, --define": "-D" beside "--define", else "" */
} optset;

/* The length of the option at p, "--size" or "-D" (a short one: one letter or digit alone), or
 * 0 where p starts none. */
static size_t option_len(const char *p) {
  if (p[0] != '-') return 0;
  if (p[1] != '-') return isalnum((unsigned char)p[1]) && !isalnum((unsigned char)p[2]) ? 2 : 0;
  size_t k = 2;
  while (isalnum((unsigned char)p[k]) || (k > 2 && p[k] == '-')) k++;
  return k > 2 ? k : 0;
}

/* Adds the option of len bytes at p to s, with its short alias (or ""), once. */
static void add_option(optset *s, const char *p, size_t len, const char *alias) {
  char name[40];
  snprintf(name, sizeof name, "%.*s", (int)len, p);
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->name[i], name) == 0) return;
  cr_assert_lt(s->n, 32, "too many options");
  snprintf(s->name[s->n], sizeof s->name[0], "%s", name);
  snprintf(s->alias[s->n], sizeof s->alias[0], "%s", alias);
  s->n++;
}

static int has_option(const optset *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->name[i], name) == 0) return 1;
  return 0;
}

/* The options of the option list of a command's --help: its lines that start "  --name" or
 * "  -X, --name" (help's other lines, prose or wrapped, never start with two spaces and a dash). */
static void help_options(const char *out, optset *s) {
  for (const char *line = out; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
    if (strncmp(line, "  -", 3) != 0) continue;
    const char *p = line + 2, *alias = "";
    char shortname[3] = "";
    if (p[1] != '-' && option_len(p) == 2 && strncmp(p + 2, ", --", 4) == 0) {
      snprintf(shortname, sizeof shortname, "%.2s", p);
      alias = shortname;
      p += 4;
    }
    size_t len = option_len(p);
    cr_assert_gt(len, 0, "an option line of help: %.60s", line);
    add_option(s, p, len, alias);
  }
}

/* The options that a README row's first cell (the command's synopsis) names: "--name", or
 * "-X" written as the long name that help gives it. */
static void readme_options(const char *cell, size_t cell_len, const optset *help, optset *s) {
  for (size_t i = 0; i < cell_len; i++) {
    if (cell[i] != '-' || (i > 0 && !strchr(" [|", cell[i - 1]))) continue;
    size_t len = option_len(cell + i);
    if (len == 0) continue;
    const char *name = cell + i;
    if (len == 2 && cell[i + 1] != '-')
      for (int k = 0; k < help->n; k++)
        if (strncmp(help->alias[k], cell + i, 2) == 0) name = help->name[k], len = strlen(name);
    add_option(s, name, len, "");
    i += len - 1;
  }
}

Test(cli, readme_table_names_the_options_of_each_commands_help) {
  FILE *f = fopen(PM_SOURCE_DIR "/README.md", "rb");
  cr_assert_not_null(f, "cannot open %s", PM_SOURCE_DIR "/README.md");
  static char readme[1 << 20];
  size_t n = fread(readme, 1, sizeof readme - 1, f);
  readme[n] = '\0';
  fclose(f);
  const char *section = strstr(readme, "## Using `pmtune`");
  cr_assert_not_null(section, "README.md has no section \"Using `pmtune`\"");
  const char *end = strstr(section + 1, "\n## ");
  const char *cmds[] = {"devices", "compile", "space", "tune", "show", "explain", "bench",
                        "report", "db", "export", "import", "kernel"};
  int rows[sizeof cmds / sizeof *cmds] = {0};
  for (const char *line = section; line != NULL && (end == NULL || line < end);
       line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (strncmp(line, "| `pmtune ", 10) != 0) continue;
    const char *cell = line + 3, *cell_end = strchr(cell, '`');
    cr_assert_not_null(cell_end, "a README row's first cell is not closed: %.60s", line);
    char cmd[32];
    cr_assert_eq(sscanf(cell, "pmtune %31[a-z]", cmd), 1, "%.60s", line);
    size_t k = 0;
    while (k < sizeof cmds / sizeof *cmds && strcmp(cmds[k], cmd) != 0) k++;
    cr_assert_lt(k, sizeof cmds / sizeof *cmds, "README.md's table has a row for 'pmtune %s', "
                 "which is no command", cmd);
    rows[k]++;

    char args[64];
    snprintf(args, sizeof args, "%s --help", cmd);
    result *r = run(args);
    cr_assert_eq(r->status, 0, "pmtune %s: %s", args, r->err);
    optset help = {0}, row = {0};
    help_options(r->out, &help);
    readme_options(cell, (size_t)(cell_end - cell), &help, &row);
    for (int i = 0; i < help.n; i++)
      cr_expect(has_option(&row, help.name[i]),
                "README.md's row for 'pmtune %s' lacks %s, which 'pmtune %s --help' lists", cmd,
                help.name[i], cmd);
    for (int i = 0; i < row.n; i++)
      cr_expect(has_option(&help, row.name[i]),
                "README.md's row for 'pmtune %s' names %s, which 'pmtune %s --help' does not list",
                cmd, row.name[i], cmd);
  }
  for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++)
    cr_expect_eq(rows[k], 1, "README.md's command table has %d rows for 'pmtune %s', not one",
                 rows[k], cmds[k]);
}

/* ---- The man page the build writes (pmtune.1) against the command's tables ---- */

/* The man page that the build wrote with `pmtune help --man` (PM_MAN_PAGE), in a static buffer. */
static const char *man_page(void) {
  static char page[1 << 20];
  FILE *f = fopen(PM_MAN_PAGE, "rb");
  cr_assert_not_null(f, "no man page at %s: the build writes it (target pmtune_man)", PM_MAN_PAGE);
  size_t n = fread(page, 1, sizeof page - 1, f);
  page[n] = '\0';
  fclose(f);
  return page;
}

/* How many times needle occurs in [from, to). */
static int occurs(const char *from, const char *to, const char *needle) {
  int n = 0;
  for (const char *p = strstr(from, needle); p != NULL && p < to; p = strstr(p + 1, needle)) n++;
  return n;
}

/* Writes option name ("--size", "-D") as the man page's roff has it: "\fB\-\-size\fR". */
static void roff_option(char *out, size_t cap, const char *name) {
  size_t len = (size_t)snprintf(out, cap, "\\fB");
  for (const char *p = name; *p != '\0' && len < cap; p++)
    len += (size_t)snprintf(out + len, cap - len, *p == '-' ? "\\-" : "%c", *p);
  if (len < cap) snprintf(out + len, cap - len, "\\fR");
}

Test(cli, man_page_names_every_command_and_option) {
  const char *page = man_page();
  result *r = run("help --man");
  cr_assert_eq(r->status, 0, "pmtune help --man: %s", r->err);
  cr_assert_lt(strlen(r->out), sizeof r->out - 1, "the man page outgrew this test's buffer");
  cr_assert_str_eq(r->out, page, "%s is not what 'pmtune help --man' prints now", PM_MAN_PAGE);

  /* The commands as `pmtune --help` lists them (cli_commands): "  NAME  summary" lines. */
  static char list[65536];
  r = run("--help");
  cr_assert_eq(r->status, 0);
  snprintf(list, sizeof list, "%s", r->out);
  int ncmds = 0;
  for (const char *line = strstr(list, "commands:\n"); line != NULL && *line != '\0';
       line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    char cmd[32], want[96];
    if (strncmp(line, "  ", 2) != 0 || sscanf(line, " %31[a-z]", cmd) != 1) continue;
    ncmds++;
    snprintf(want, sizeof want, ".TP\n.B %s\n", cmd);
    cr_expect_not_null(strstr(page, want), "the man page's COMMANDS do not list %s", cmd);
    snprintf(want, sizeof want, ".SS \"pmtune %s\"\n", cmd);
    const char *section = strstr(page, want);
    cr_assert_not_null(section, "the man page has no section for 'pmtune %s'", cmd);
    const char *end = section + strlen(want), *usage;
    while (*end != '\0' && strncmp(end, "\n.SS ", 5) != 0 && strncmp(end, "\n.SH ", 5) != 0) end++;
    snprintf(want, sizeof want, "\\fBpmtune %s\\fR", cmd);
    usage = strstr(section, want);
    cr_assert(usage != NULL && usage < end, "'pmtune %s''s section has no usage line", cmd);
    const char *usage_end = strstr(usage, "\n.PP\n") ? strstr(usage, "\n.PP\n") : end;

    /* Every option its --help lists, in the usage line and as an entry of the option list,
     * "-X, --name" for one with a short name; no entry more. */
    char args[64], roff[96], long_roff[96], entry[200];
    snprintf(args, sizeof args, "%s --help", cmd);
    r = run(args);
    cr_assert_eq(r->status, 0, "pmtune %s: %s", args, r->err);
    optset help = {0};
    help_options(r->out, &help);
    for (int i = 0; i < help.n; i++) {
      int has_short = help.alias[i][0] != '\0';
      roff_option(roff, sizeof roff, has_short ? help.alias[i] : help.name[i]);
      cr_expect_gt(occurs(usage, usage_end, roff), 0,
                   "the man page's usage line of 'pmtune %s' lacks %s", cmd, help.name[i]);
      roff_option(long_roff, sizeof long_roff, help.name[i]);
      if (has_short)
        snprintf(entry, sizeof entry, "\n.TP\n%s, %s", roff, long_roff);
      else
        snprintf(entry, sizeof entry, "\n.TP\n%s", roff);
      cr_expect_eq(occurs(section, end, entry), 1,
                   "the man page's section of 'pmtune %s' has not one entry for %s", cmd,
                   help.name[i]);
    }
    cr_expect_eq(occurs(section, end, "\n.TP\n\\fB\\-"), help.n,
                 "the man page's section of 'pmtune %s' has %d option entries, its --help %d",
                 cmd, occurs(section, end, "\n.TP\n\\fB\\-"), help.n);
  }
  cr_assert_gt(ncmds, 10, "'pmtune --help' lists %d commands", ncmds);
}

Test(cli, man_page_renders_without_warnings) {
  if (run_shell("command -v groff")->status != 0)
    cr_skip_test("groff is not installed: nothing here renders %s (man -l needs it too)",
                 PM_MAN_PAGE);
  char line[1024];
  /* -ww: every warning groff knows; -z: format, write nothing */
  snprintf(line, sizeof line, "groff -man -Tutf8 -ww -z '%s'", PM_MAN_PAGE);
  result *r = run_shell(line);
  cr_expect_eq(r->status, 0, "%s: status %d", line, r->status);
  cr_expect_str_empty(r->err, "%s warns: %s", line, r->err);
  if (run_shell("command -v man")->status != 0) return; /* groff has rendered it */
  snprintf(line, sizeof line, "MANWIDTH=80 man -l '%s'", PM_MAN_PAGE);
  r = run_shell(line);
  cr_expect_eq(r->status, 0, "%s: status %d: %s", line, r->status, r->err);
  cr_expect_str_empty(r->err, "%s warns: %s", line, r->err);
  cr_expect_not_null(strstr(r->out, "pmtune tune [--op OP|all]"), "%s: %.400s", line, r->out);
}
