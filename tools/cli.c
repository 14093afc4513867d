/* cli.c: helpers the pmtune subcommands share: errors, usage text, lookups. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>

#include "cli.h"

static void vreport(const char *cmd, const char *fmt, va_list ap) {
  fprintf(stderr, "pmtune%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(cmd, fmt, ap);
  va_end(ap);
  return CLI_USAGE;
}

int cli_fail(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(cmd, fmt, ap);
  va_end(ap);
  return CLI_FAIL;
}

int cli_bad_option(const char *cmd, char **argv, int ret) {
  const char *arg = argv[optind - 1];
  if (ret == ':')
    return cli_usage_error(cmd, "option '%s' needs a value (see 'pmtune %s --help')", arg, cmd);
  if (optopt > 0 && optopt < 128)
    return cli_usage_error(cmd, "unknown option '-%c' (see 'pmtune %s --help')", optopt, cmd);
  return cli_usage_error(cmd, "unknown option '%s' (see 'pmtune %s --help')", arg, cmd);
}

void cli_print_usage(FILE *out, const cli_cmd *cmd) { fputs(cmd->usage, out); }

const cli_cmd *cli_find(const char *name) {
  for (const cli_cmd *c = cli_commands; c->name != NULL; c++)
    if (strcmp(c->name, name) == 0) return c;
  return NULL;
}

int cli_int_arg(const char *cmd, const char *opt, const char *arg, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(arg, &end, 10);
  if (*arg == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi)
    return cli_usage_error(cmd, "%s '%s': expected %ld to %ld", opt, arg, lo, hi);
  *out = v;
  return CLI_OK;
}

int cli_db_arg(const char *cmd, const char *arg, const char **out) {
  if (arg[0] == '\0') return cli_usage_error(cmd, "--db: empty path");
  *out = arg;
  return CLI_OK;
}

int cli_problem_option(const char *cmd, int ch, const char *arg, pm__problem *pr) {
  long r = 0;
  switch (ch) {
    case 'r':
      if (cli_int_arg(cmd, "--radius", arg, 1, PM__MAX_RADIUS, &r) != CLI_OK) return CLI_USAGE;
      pr->radius = (int)r;
      return CLI_OK;
    case 'o':
      if (strcmp(arg, "row") != 0 && strcmp(arg, "col") != 0)
        return cli_usage_error(cmd, "--order '%s': expected row or col", arg);
      pr->colmajor = arg[0] == 'c';
      return CLI_OK;
    case 'b':
      if (strcmp(arg, "clamp") != 0 && strcmp(arg, "zero") != 0)
        return cli_usage_error(cmd, "--border '%s': expected clamp or zero", arg);
      pr->zero_border = arg[0] == 'z';
      return CLI_OK;
  }
  return cli_usage_error(cmd, "internal: option %d is not a problem option", ch);
}

int cli_op_arg(const char *cmd, const char *name, int all_ok, const pm__op **out) {
  *out = NULL;
  if (all_ok && strcmp(name, "all") == 0) return CLI_OK;
  if ((*out = pm__op_find(name)) != NULL) return CLI_OK;
  return cli_usage_error(cmd, "unknown --op '%s' (one of: %s%s)", name, cli_op_names(),
                         all_ok ? ", all" : "");
}

const char *cli_op_names(void) {
  static char buf[256];
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; pm__ops[i] != NULL && len + 2 < sizeof buf; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? ", " : "", pm__ops[i]->name);
  return buf;
}
