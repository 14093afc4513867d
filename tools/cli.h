/* cli.h: what the pmtune command's subcommands share: the command table and usage errors. */
#ifndef PM_CLI_H
#define PM_CLI_H

#include <stdio.h>

#include "op.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 }; /* exit statuses */

typedef struct cli_cmd {
  const char *name;
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
  const char *summary;               /* one line for `pmtune --help` */
  const char *usage;                 /* the whole text of `pmtune NAME --help` */
} cli_cmd;

extern const cli_cmd cli_commands[];

/* Prints "pmtune CMD: message" on one line to stderr and returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "pmtune CMD: message" to stderr and returns CLI_FAIL. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reports a getopt_long failure as a usage error: ret is what getopt_long returned, ':' for a
 * missing value (the option string must start with ':'), '?' for an unknown option. */
int cli_bad_option(const char *cmd, char **argv, int ret);

/* Prints the usage text of a command to out. */
void cli_print_usage(FILE *out, const cli_cmd *cmd);

/* The command of that name, or NULL. */
const cli_cmd *cli_find(const char *name);

/* Parses an integer option value in [lo, hi] into *out; otherwise prints a one-line usage error
 * naming the option ("--samples 'x': expected 1 to 64") and returns CLI_USAGE. */
int cli_int_arg(const char *cmd, const char *opt, const char *arg, long lo, long hi, long *out);

/* The value of --db: *out is it; an empty path prints "--db: empty path" and returns CLI_USAGE. */
int cli_db_arg(const char *cmd, const char *arg, const char **out);

/* The options that say more of a problem than its size, one meaning for every command that
 * takes them: --radius R ('r'), --order row|col ('o'), --border clamp|zero ('b'). Sets the
 * field of *pr; returns CLI_OK, or CLI_USAGE after a one-line error. */
int cli_problem_option(const char *cmd, int ch, const char *arg, pm__problem *pr);

/* The operation --op names: *out is it, or NULL for "all" where all_ok. Otherwise prints
 * "unknown --op 'x' (one of: ...)" and returns CLI_USAGE. */
int cli_op_arg(const char *cmd, const char *name, int all_ok, const pm__op **out);

/* The comma-separated names of the operations, for messages. */
const char *cli_op_names(void);



/* The subcommands, one file each (cmd_NAME.c): the entry point and the --help text. */
#define CLI_COMMANDS(X)                                                 \
  X(devices, "list the CUDA devices of this machine")                  \
  X(compile, "compile a kernel template with NVRTC (no GPU needed)")  \
  X(space, "show an operation's search space and how many points are valid") \
  X(tune, "tune the kernels on this machine's GPUs and store the winners")   \
  X(show, "list the tuned winners stored in the database")                   \
  X(explain, "say which configuration a call would run for a size, and why")  \
  X(bench, "time tuned vs seed vs the copy ceiling vs the peers, in one run") \
  X(report, "draw the tuned results as SVG: bars per op, heat maps per size")  \
  X(db, "the tuning database: which file, create it, check it")       \
  X(export, "write the tuning results to a JSON file for other machines") \
  X(import, "merge tuning results that another machine exported")

#define CLI_DECLARE(name, summary) \
  int cmd_##name(int argc, char **argv); \
  extern const char cmd_##name##_usage[];
CLI_COMMANDS(CLI_DECLARE)
#undef CLI_DECLARE
#endif /* PM_CLI_H */
