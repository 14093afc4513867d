/* main.c: the pmtune command: dispatches to the subcommands of the table below. */
#include <signal.h>
#include <string.h>

#include "cli.h"

const cli_cmd cli_commands[] = {
#define CLI_ENTRY(name, summary) {#name, cmd_##name, summary},
    CLI_COMMANDS(CLI_ENTRY)
#undef CLI_ENTRY
    {NULL, NULL, NULL}};

static void print_help(FILE *out) {
  fprintf(out,
          "usage: pmtune COMMAND [OPTIONS]\n"
          "\n"
          "pmtune tunes memory-bound CUDA kernels (%s) for the GPUs of this\n"
          "machine and serves the fastest one to library calls.\n"
          "\n"
          "commands:\n",
          cli_op_names());
  for (const cli_cmd *c = cli_commands; c->name != NULL; c++)
    fprintf(out, "  %-10s %s\n", c->name, c->summary);
  fprintf(out,
          "\n"
          "'pmtune help COMMAND' or 'pmtune COMMAND --help' tells more of one.\n"
          "Exit status: 0 success, 1 the operation failed, 2 bad usage.\n");
}

int main(int argc, char **argv) {
  /* A file past `ulimit -f` is a write that fails (EFBIG), said and cleaned up like any other,
   * not a death by SIGXFSZ that leaves a half-written temporary behind. */
  signal(SIGXFSZ, SIG_IGN);
  if (argc < 2) {
    print_help(stderr);
    return CLI_USAGE;
  }
  const char *name = argv[1];
  int is_help = strcmp(name, "help") == 0;
  /* `--help`, `-h` and `--version` take nothing after them, `help` one command: more is
   * refused, never passed over in silence. */
  if (argc > 2 + is_help && (is_help || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
                             strcmp(name, "--version") == 0))
    return cli_usage_error(NULL, "%s: unexpected argument '%s'", name, argv[2 + is_help]);
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
    print_help(stdout);
    return CLI_OK;
  }
  if (strcmp(name, "--version") == 0) {
    printf("pmtune %s (NVRTC %s)\n", pm_version(), pm__nvrtc_version());
    return CLI_OK;
  }
  if (is_help) {
    if (argc < 3) {
      print_help(stdout);
      return CLI_OK;
    }
    const cli_cmd *c = cli_find(argv[2]);
    if (c == NULL) return cli_usage_error(NULL, "help: unknown command '%s'", argv[2]);
    /* The command prints its own help from its option table: `pmtune help X` is X --help. */
    char help[] = "--help", *args[] = {argv[2], help, NULL};
    int rc = c->run(2, args);
    return rc == CLI_DONE ? CLI_OK : rc;
  }
  const cli_cmd *c = cli_find(name);
  if (c == NULL)
    return cli_usage_error(NULL, "unknown command '%s' (see 'pmtune --help')", name);
  int rc = c->run(argc - 1, argv + 1); /* --help anywhere before "--" prints its help */
  return rc == CLI_DONE ? CLI_OK : rc;
}
