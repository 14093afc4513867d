/* cmd_import.c: `pmtune import FILE`, merging another machine's exported tuning results. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pmdb.h"

const char cmd_import_usage[] =
    "usage: pmtune import FILE [--db PATH]\n"
    "\n"
    "Merges a document that 'pmtune export' wrote into the tuning database, so that this\n"
    "machine serves what another machine with the same GPU model tuned. Every field is\n"
    "checked first; anything wrong imports nothing. A measurement replaces a stored one only\n"
    "if it was measured later. FILE '-' is the standard input.\n"
    "\n"
    "  --db PATH   the tuning database (default: see 'pmtune db --help')\n";

#define MAX_BYTES ((size_t)512 << 20)

/* Reads all of f (at most MAX_BYTES + 1 bytes, so that a larger one is seen as such). */
static char *slurp(FILE *f, size_t *len) {
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n == cap) {
      if (cap > MAX_BYTES) break;
      char *p = realloc(buf, cap = cap ? cap * 2 : 65536);
      if (p == NULL) {
        free(buf);
        return NULL;
      }
      buf = p;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    free(buf);
    return NULL;
  }
  *len = n;
  return buf ? buf : calloc(1, 1);
}

int cmd_import(int argc, char **argv) {
  static const struct option longopts[] = {{"db", required_argument, 0, 'd'}, {0, 0, 0, 0}};
  const char *dbpath = NULL;
  int ch;
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
    switch (ch) {
      case 'd':
        if (cli_db_arg("import", optarg, &dbpath) != CLI_OK) return CLI_USAGE;
        break;
      default: return cli_bad_option("import", argv, ch);
    }
  }
  if (optind == argc)
    return cli_usage_error("import", "no FILE given (see 'pmtune import --help')");
  const char *file = argv[optind];
  if (optind + 1 < argc)
    return cli_usage_error("import", "unexpected argument '%s'", argv[optind + 1]);
  if (file[0] == '\0') return cli_usage_error("import", "FILE is empty");

  pm_ctx *c = NULL;
  pm_options opts = {.device = PM_DEVICE_NONE};
  pm__db *db = NULL;
  pm__db_import_stats st;
  char *doc = NULL;
  size_t len = 0;
  int status = CLI_OK, from_stdin = strcmp(file, "-") == 0;
  FILE *in = from_stdin ? stdin : fopen(file, "rb");
  if (in == NULL || (doc = slurp(in, &len)) == NULL) {
    status = cli_fail("import", "cannot read '%s': %s", file, strerror(errno));
    goto done;
  }
  if (len > MAX_BYTES) {
    status = cli_fail("import", "%s: larger than %zu MiB; nothing imported", file, MAX_BYTES >> 20);
    goto done;
  }
  if (pm_open(&c, &opts) != PM_OK || pm__db_open(c, dbpath, 0, pm__ops_db(), &db) != PM_OK) {
    status = cli_fail("import", "%s", pm_errmsg(c));
    goto done;
  }
  if (pm__db_import(db, doc, len, &st) != PM_OK) {
    status = cli_fail("import", "%s: %s; nothing imported", file, pm_errmsg(c));
    goto done;
  }
  printf(
      "imported %s into %s: %d measurement%s added, %d updated, %d kept (stored already, as "
      "recent); %d GPU%s added\n",
      file, pm__db_filename(db), st.added, st.added == 1 ? "" : "s", st.updated, st.kept,
      st.gpus_added, st.gpus_added == 1 ? "" : "s");
done:
  if (in != NULL && in != stdin) fclose(in);
  free(doc);
  pm__db_close(db);
  pm_close(c);
  return status;
}
