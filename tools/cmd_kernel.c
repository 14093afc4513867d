/* cmd_kernel.c: `pmtune kernel new NAME`, a kernel of your own to start from: NAME.cu and its
 * description NAME.json, whose space prints and whose seed compiles as they are. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "kernel_file.h"
#include "op.h"

static const char about[] =
    "Writes a kernel of your own to start from: DIR/NAME.cu, a CUDA kernel (out = alpha * in\n"
    "over n floats, its block size and elements a thread -D defines to tune, alpha given by\n"
    "each call: pm_kernel_launch_with), and\n"
    "DIR/NAME.json, its description (dims, parameters, constraints, seed, launch, arguments),\n"
    "which 'pmtune space', 'compile' and 'tune' take with --kernel as they are. Edit both\n"
    "into your kernel (examples/kernels/README.md walks it through). NAME is a C identifier\n"
    "of at most 31 characters, not a built-in op's name; it is the kernel's entry and its\n"
    "name in the database. Neither file is ever replaced: one that exists is an error.\n"
    "\n"
    "  new NAME    write DIR/NAME.cu and DIR/NAME.json\n";

static const cli_help help = {.cmd = "kernel", .operands = "new NAME", .about = about};

/* The two files, %s the name throughout (cu_text 3 times, json_text 4). */
static const char cu_text[] =
    "// %s.cu: out = alpha * in over n floats, a kernel of your own (`pmtune kernel new`).\n"
    "// Edit the body into your kernel; keep each choice to tune a -D define with a default, and\n"
    "// list its values in %s.json (\"params\"), which also says how it is launched.\n"
    "#ifndef BLOCK\n"
    "#define BLOCK 256 // threads a block\n"
    "#endif\n"
    "#ifndef ITEMS\n"
    "#define ITEMS 1 // elements a thread, BLOCK apart\n"
    "#endif\n"
    "\n"
    "extern \"C\" __global__ void __launch_bounds__(BLOCK)\n"
    "%s(float *__restrict__ out, const float *__restrict__ in, float alpha, int n) {\n"
    "  const long long first = (long long)blockIdx.x * BLOCK * ITEMS + threadIdx.x;\n"
    "#pragma unroll\n"
    "  for (int it = 0; it < ITEMS; it++) {\n"
    "    const long long i = first + (long long)it * BLOCK;\n"
    "    if (i < n) out[i] = alpha * in[i];\n"
    "  }\n"
    "}\n";

static const char json_text[] =
    "{\n"
    "  \"name\": \"%s\",\n"
    "  \"summary\": \"out = alpha * in over n floats, made by pmtune kernel new: edit it into yours\",\n"
    "  \"source\": \"%s.cu\",\n"
    "  \"entry\": \"%s\",\n"
    "  \"dims\": [\"n\"],\n"
    "  \"params\": {\"BLOCK\": [64, 128, 256, 512, 1024], \"ITEMS\": [1, 2, 4, 8]},\n"
    "  \"constraints\": [\":BLOCK * :ITEMS <= 4096\"],\n"
    "  \"seed\": {\"BLOCK\": 256, \"ITEMS\": 1},\n"
    "  \"grid\": [\"(:n + :BLOCK * :ITEMS - 1) / (:BLOCK * :ITEMS)\"],\n"
    "  \"block\": [\":BLOCK\"],\n"
    "  \"args\": [\n"
    "    {\"name\": \"out\", \"type\": \"f32\", \"count\": \":n\", \"dir\": \"out\"},\n"
    "    {\"name\": \"in\", \"type\": \"f32\", \"count\": \":n\", \"dir\": \"in\"},\n"
    "    {\"name\": \"alpha\", \"scalar\": \"f32\"},\n"
    "    {\"name\": \"n\", \"scalar\": \"i32\", \"value\": \":n\"}\n"
    "  ],\n"
    "  \"bytes\": \"2 * 4 * :n\"\n"
    "}\n";

/* Writes text (a format of the name alone) to path, only where nothing is there yet. */
static int write_new(const char *path, const char *text, const char *name) {
  pm__file_out o;
  if (pm__file_create(&o, path) != 0) return -1;
  if (fprintf(o.f, text, name, name, name, name) < 0) {
    int err = errno ? errno : EIO;
    pm__file_abort(&o);
    return errno = err, -1;
  }
  return pm__file_commit_new(&o);
}

int cmd_kernel(int argc, char **argv) {
  const char *dir = ".";
  int first;
  const cli_option options[] = {
      CLI_STRING(0, "dir", "DIR", &dir, "the folder to write the two files in (default: here)"),
      CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, &first);
  if (parsed != CLI_OK) return parsed;
  if (first == argc) return cli_usage_error("kernel", "no action given (new)");
  if (strcmp(argv[first], "new") != 0)
    return cli_usage_error("kernel", "unknown action '%s' (new)", argv[first]);
  if (first + 1 == argc) return cli_usage_error("kernel", "new: no NAME given");
  const char *name = argv[first + 1];
  if (first + 2 < argc) return cli_usage_error("kernel", "unexpected argument '%s'", argv[first + 2]);
  if (!pm__is_identifier(name, 31))
    return cli_usage_error("kernel", "new: '%s' is not a C identifier of at most 31 characters",
                           name);
  if (pm__op_find(name) != NULL)
    return cli_usage_error("kernel", "new: '%s' is a built-in op's name", name);
  if (dir[0] == '\0') return cli_usage_error("kernel", "--dir is empty");
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return cli_fail("kernel", "'%s': %s", dir,
                    errno == 0 || S_ISDIR(st.st_mode) ? "not a folder" : strerror(errno));
  char cu[4096], json[4096];
  if (snprintf(cu, sizeof cu, "%s/%s.cu", dir, name) >= (int)sizeof cu ||
      snprintf(json, sizeof json, "%s/%s.json", dir, name) >= (int)sizeof json)
    return cli_usage_error("kernel", "--dir is too long");
  const char *paths[2] = {cu, json}, *texts[2] = {cu_text, json_text};
  for (int i = 0; i < 2; i++) /* said before either is written */
    if (lstat(paths[i], &st) == 0)
      return cli_fail("kernel", "'%s' exists: give another NAME or --dir (nothing was written)",
                      paths[i]);
  for (int i = 0; i < 2; i++)
    if (write_new(paths[i], texts[i], name) != 0) {
      int err = errno;
      if (i == 1) unlink(cu); /* the pair, or neither */
      return cli_fail("kernel", "cannot write '%s': %s (nothing was written)", paths[i],
                      pm__file_strerror(err));
    }
  printf("wrote %s and %s; next:\n"
         "  pmtune space --kernel %s --size 1000000        # its space, no GPU needed\n"
         "  pmtune compile --kernel %s --arch sm_90        # its seed, compiled\n"
         "  pmtune tune --kernel %s --size 1000000 --size 50000000\n",
         cu, json, json, json, json);
  return CLI_OK;
}
