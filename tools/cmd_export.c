/* cmd_export.c: `pmtune export FILE`, the tuning results as a JSON document that import reads. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

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
  struct stat st;
  if (strcmp(file, "-") != 0 && lstat(file, &st) == 0 && !S_ISREG(st.st_mode))
    return cli_fail("export", "'%s' is not a regular file (a %s): export writes only a regular "
                    "file or a new one", file, S_ISLNK(st.st_mode)   ? "symbolic link"
                                                  : S_ISDIR(st.st_mode) ? "directory"
                                                  : S_ISFIFO(st.st_mode) ? "FIFO"
                                                  : "device or socket");

  pm_ctx *c = NULL;
  pm_options opts = {.device = PM_DEVICE_NONE};
  pm__db *db = NULL;
  FILE *out = NULL;
  char tmp[PM__DB_PATH_MAX + 32] = "";
  int status = CLI_OK, count = 0, to_stdout = strcmp(file, "-") == 0;
  pm__kernel_file *kf = NULL;
  pm__ops_db_plus plus;
  const pm__db_op *const *ops = NULL;
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
  if (to_stdout) {
    out = stdout;
  } else {
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", file, (long)getpid());
    if ((out = fopen(tmp, "w")) == NULL) {
      status = cli_fail("export", "cannot write '%s': %s", tmp, strerror(errno));
      tmp[0] = '\0';
      goto done;
    }
  }
  if (pm__db_export(db, out, all, &count) != PM_OK) {
    status = cli_fail("export", "%s", pm_errmsg(c));
    goto done;
  }
  if (!to_stdout) {
    int bad = fclose(out) != 0;
    out = NULL;
    if (bad || rename(tmp, file) != 0) {
      status = cli_fail("export", "cannot write '%s': %s", file, strerror(errno));
      goto done;
    }
    tmp[0] = '\0';
    printf("exported %d measurement%s from %s to %s\n", count, count == 1 ? "" : "s",
           pm__db_filename(db), file);
  }
done:
  if (out != NULL && out != stdout) fclose(out);
  if (tmp[0] != '\0') remove(tmp);
  pm__db_close(db);
  pm__kernel_file_free(kf);
  pm_close(c);
  return status;
}
