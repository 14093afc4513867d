/* cmd_import.c: `pmtune import FILE`, merging another machine's exported tuning results. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kernel_file.h"
#include "pmdb.h"

static const char about[] =
    "Merges a document that 'pmtune export' wrote into the tuning database, so that this\n"
    "machine serves what another machine with the same GPU model tuned. Every field is\n"
    "checked first, each configuration against its op's space; anything wrong imports\n"
    "nothing, and nothing is written into a database that fails 'pmtune db check'. A\n"
    "measurement replaces a stored one only if it was measured later. FILE '-' is the\n"
    "standard input; a gzip document (as results/ ships) is read as the document it holds.\n"
    "A document holding a kernel of your own imports where its description is given\n"
    "(--kernel FILE), which then serves.\n";

static const cli_help help = {.cmd = "import", .operands = "FILE", .about = about};

#define MAX_BYTES ((size_t)512 << 20)

int cmd_import(int argc, char **argv) {
  const char *dbpath = NULL, *kfile = NULL;
  int first;
  const cli_option options[] = {
      CLI_STRING(0, "kernel", "FILE", &kfile,
                 "a kernel of your own, described in FILE (JSON), whose results the document "
                 "holds: they are imported too, as its current version"),
      CLI_DB(&dbpath), CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, &first);
  if (parsed != CLI_OK) return parsed;
  if (first == argc)
    return cli_usage_error("import", "no FILE given (see 'pmtune import --help')");
  const char *file = argv[first];
  if (first + 1 < argc)
    return cli_usage_error("import", "unexpected argument '%s'", argv[first + 1]);
  if (file[0] == '\0') return cli_usage_error("import", "FILE is empty");

  pm_ctx *c = NULL;
  pm_options opts = {.device = PM_DEVICE_NONE};
  pm__db *db = NULL;
  pm__db_import_stats st;
  pm__kernel_desc *kf = NULL;
  pm__ops_db_plus plus;
  const pm__db_op *const *ops = NULL;
  char *doc = NULL;
  size_t len = 0;
  int status = CLI_OK, from_stdin = strcmp(file, "-") == 0;
  FILE *in = from_stdin ? stdin : pm__file_open(file);
  if (in == NULL || (doc = pm__read_stream(in, MAX_BYTES, &len)) == NULL) {
    if (in != NULL && errno == EFBIG)
      status = cli_fail("import", "%s: larger than %zu MiB; nothing imported", file,
                        MAX_BYTES >> 20);
    else
      status = cli_fail("import", "cannot read '%s': %s", file, pm__file_strerror(errno));
    goto done;
  }
  int zerr = pm__gunzip(&doc, &len, MAX_BYTES); /* a gzip document, as results/ ships */
  if (zerr != 0) {
    status = cli_fail("import", "%s: %s; nothing imported", file,
                      zerr == EFBIG   ? "gzip that inflates to more than the limit"
                      : zerr == EILSEQ ? "gzip that is damaged or cut short"
                                       : pm__file_strerror(zerr));
    goto done;
  }
  if (pm_open(&c, &opts) != PM_OK) {
    status = cli_fail("import", "%s", pm_errmsg(c));
    goto done;
  }
  if ((status = cli_kernel_load("import", c, kfile, &kf, &plus, &ops)) != CLI_OK) goto done;
  if (pm__db_open(c, dbpath, 0, ops, &db) != PM_OK) {
    status = cli_fail("import", "%s; nothing imported", pm_errmsg(c));
    goto done;
  }
  if (pm__db_import(db, doc, len, &st) != PM_OK) {
    status = cli_fail("import", "%s: %s; nothing imported", file, pm_errmsg(c));
    goto done;
  }
  if (kf != NULL) { /* what it imported is the kernel's current version, as after tuning it */
    const pm__op *op = pm__kernel_desc_op(kf);
    if (pm__db_template_current(db, op->name, pm__op_template(op)->sha256) != PM_OK) {
      status = cli_fail("import", "%s: %s", file, pm_errmsg(c));
      goto done;
    }
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
  pm__kernel_desc_free(kf);
  pm_close(c);
  return status;
}
