/* cmd_export.c: `pmtune export FILE`, the tuning results as a JSON document that import reads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kernel_file.h"
#include "pmdb.h"

static const char about[] =
    "Writes the winners (the fastest verified configuration per GPU, op, dtype and problem\n"
    "size, with their seed configurations and GPUs) to FILE as JSON, for 'pmtune import' on\n"
    "other machines with the same GPU model. FILE '-' is the standard output. FILE is\n"
    "replaced at once when the document is complete, never left half written; it must be a\n"
    "regular file or a new one (a symlink, device, FIFO or directory is refused, not replaced;\n"
    "so is the tuning database itself). A kernel of your own is exported where its\n"
    "description is given (--kernel FILE).\n";

static const cli_help help = {.cmd = "export", .operands = "FILE", .about = about};

int cmd_export(int argc, char **argv) {
  const char *dbpath = NULL, *kfile = NULL;
  int all = 0, first;
  const cli_option options[] = {
      CLI_FLAG(0, "all", &all, "every measurement instead: failed ones and older templates' too"),
      CLI_STRING(0, "kernel", "FILE", &kfile,
                 "a kernel of your own, described in FILE (JSON): its results too"),
      CLI_DB(&dbpath),
      CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, &first);
  if (parsed != CLI_OK) return parsed;
  if (first == argc)
    return cli_usage_error("export", "no FILE given (see 'pmtune export --help')");
  const char *file = argv[first];
  if (first + 1 < argc)
    return cli_usage_error("export", "unexpected argument '%s'", argv[first + 1]);
  if (file[0] == '\0') return cli_usage_error("export", "FILE is empty");
  pm_ctx *c = NULL;
  pm_options opts = {.device = PM_DEVICE_NONE};
  pm__db *db = NULL;
  FILE *out = NULL;
  pm__file_out o = {0};
  int status = CLI_OK, count = 0, to_stdout = strcmp(file, "-") == 0;
  pm__kernel_desc *kf = NULL;
  pm__ops_db_plus plus;
  const pm__db_op *const *ops = NULL;
  if (!to_stdout) { /* refused before anything is read (pm__file_create: a link is not followed) */
    if (pm__file_create(&o, file) != 0) {
      status = cli_fail("export", "cannot write '%s': %s", file, pm__file_strerror(errno));
      goto done;
    }
    out = o.f;
  }
  if (pm_open(&c, &opts) != PM_OK) {
    status = cli_fail("export", "%s", pm_errmsg(c));
    goto done;
  }
  if ((status = cli_kernel_load("export", c, kfile, &kf, &plus, &ops)) != CLI_OK) goto done;
  if (pm__db_open(c, dbpath, PM__DB_READONLY, ops, &db) != PM_OK) {
    status = cli_fail("export", "%s", pm_errmsg(c));
    goto done;
  }
  if (!to_stdout && cli_same_file(file, pm__db_filename(db))) {
    status = cli_fail("export", "'%s' is the tuning database itself: export would replace it",
                      file);
    goto done;
  }
  if (to_stdout) out = stdout;
  if (pm__db_export(db, out, all, &count) != PM_OK) {
    status = cli_fail("export", "%s", pm_errmsg(c));
    goto done;
  }
  if (!to_stdout) {
    out = NULL;
    if (pm__file_commit(&o) != 0) {
      status = cli_fail("export", "cannot write '%s': %s", file, pm__file_strerror(errno));
      goto done;
    }
    printf("exported %d measurement%s from %s to %s\n", count, count == 1 ? "" : "s",
           pm__db_filename(db), file);
  }
done:
  pm__file_abort(&o);
  pm__db_close(db);
  pm__kernel_desc_free(kf);
  pm_close(c);
  return status;
}
