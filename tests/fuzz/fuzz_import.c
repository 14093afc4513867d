/* fuzz_import.c: libFuzzer harness for the JSON import, pm__db_import (db/exchange.c), into a
 * scratch database: all or nothing (a refused document writes no row), and what it takes leaves
 * a database that passes pm__db_check, exports, and imports its export again as known rows. */
#include "fuzz.h"

/* Rows an import may write. */
static int64_t rows(pm__db *db) {
  return fuzz_int(db,
                  "SELECT (SELECT count(*) FROM measurement) + (SELECT count(*) FROM gpu) +"
                  " (SELECT count(*) FROM template)");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pm_ctx *c = fuzz_ctx();
  pm__db *db = fuzz_db(NULL);
  pm__db_import_stats st;
  int64_t before = rows(db);
  int rc = pm__db_import(db, (const char *)data, size, &st);
  if (rc != PM_OK) {
    FUZZ_CHECK(rc == PM_EINVAL, "status %d: %s", rc, pm_errmsg(c));
    FUZZ_CHECK(pm_errmsg(c)[0] != '\0', "no message");
    FUZZ_CHECK(rows(db) == before, "a refused document wrote rows: %s", pm_errmsg(c));
    return 0;
  }
  FUZZ_CHECK(st.added + st.updated + st.kept ==
                 fuzz_int(db, "SELECT count(*) FROM measurement"),
             "%d added, %d updated, %d kept", st.added, st.updated, st.kept);
  char *report = NULL;
  int problems = -1;
  FUZZ_CHECK(pm__db_check(db, &report, &problems) == PM_OK, "%s", pm_errmsg(c));
  FUZZ_CHECK(problems == 0, "the import left %d problems:\n%s", problems, report);
  free(report);

  char *doc = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&doc, &len);
  FUZZ_CHECK(out != NULL, "open_memstream");
  int count = 0;
  FUZZ_CHECK(pm__db_export(db, out, 1, &count) == PM_OK, "%s", pm_errmsg(c));
  fclose(out);
  FUZZ_CHECK(count == st.added + st.updated + st.kept, "exported %d", count);
  pm__db_import_stats again;
  FUZZ_CHECK(pm__db_import(db, doc, len, &again) == PM_OK, "its export: %s", pm_errmsg(c));
  FUZZ_CHECK(again.added == 0 && again.updated == 0 && again.kept == count,
             "its export: %d added, %d updated, %d kept of %d", again.added, again.updated,
             again.kept, count);
  free(doc);
  fuzz_db_reset(db);
  return 0;
}
