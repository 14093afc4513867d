/* fuzz.h: what the libFuzzer harnesses share: a context without a device, a scratch database, the
 * input as a C string, and a check that stops the run (a finding) when an invariant breaks. */
#ifndef PM_FUZZ_H
#define PM_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* db's: tests read the file through SQLite */
#include "op.h"

/* A broken invariant: says which, and aborts (libFuzzer keeps the input as a crash). */
#define FUZZ_CHECK(cond, ...)                                              \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
      abort();                                                             \
    }                                                                      \
  } while (0)

/* The context every harness records its errors on: opened without a device, once. */
static inline pm_ctx *fuzz_ctx(void) {
  static pm_ctx *c;
  if (c == NULL) {
    pm_options o = {.device = PM_DEVICE_NONE};
    FUZZ_CHECK(pm_open(&c, &o) == PM_OK, "pm_open");
  }
  return c;
}

/* data[0..size) as a NUL-terminated string (heap; text stops at a NUL it holds). */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  FUZZ_CHECK(s != NULL, "out of memory");
  memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

#define FUZZ_GPU_UUID "GPU-00000000-0000-0000-0000-000000000000"

/* The fake GPU that fuzz_db records (dbtest.h's model 0). */
static inline pm__device_info fuzz_gpu(void) {
  pm__device_info d;
  memset(&d, 0, sizeof d);
  snprintf(d.uuid, sizeof d.uuid, "%s", FUZZ_GPU_UUID);
  snprintf(d.name, sizeof d.name, "Fake H100");
  d.cc_major = 9;
  snprintf(d.arch, sizeof d.arch, "sm_90");
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.mem_bytes = (size_t)80 << 30;
  return d;
}

static char fuzz_dir[64];

static inline void fuzz_remove_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", fuzz_dir);
}

/* A fresh database in a scratch directory (removed at exit), opened for writing with every op,
 * and the fake GPU of dbtest.h's model 0 recorded in it (*gpu its row). One per process: the
 * harnesses empty what an input wrote (fuzz_db_reset) so that each input meets the same file. */
static inline pm__db *fuzz_db(int64_t *gpu) {
  static pm__db *db;
  static int64_t gpu_id;
  if (db == NULL) {
    snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/pmtune-fuzz-XXXXXX");
    FUZZ_CHECK(mkdtemp(fuzz_dir) != NULL, "mkdtemp");
    atexit(fuzz_remove_dir);
    char path[128];
    snprintf(path, sizeof path, "%s/pmtune.db", fuzz_dir);
    FUZZ_CHECK(pm__db_open(fuzz_ctx(), path, 0, pm__ops_db(), &db) == PM_OK, "%s",
               pm_errmsg(fuzz_ctx()));
    pm__device_info d = fuzz_gpu();
    FUZZ_CHECK(pm__db_gpu_put(db, &d, 12040, 12080, &gpu_id) == PM_OK, "%s",
               pm_errmsg(fuzz_ctx()));
  }
  if (gpu) *gpu = gpu_id;
  return db;
}

/* Runs sql on the database's own connection; aborts where it fails. */
static inline void fuzz_exec(pm__db *db, const char *sql) {
  char *err = NULL;
  int r = sqlite3_exec(pm__db_handle(db), sql, NULL, NULL, &err);
  FUZZ_CHECK(r == SQLITE_OK, "%s: %s", sql, err ? err : "?");
}

/* The first column of the first row of sql, as an integer. */
static inline int64_t fuzz_int(pm__db *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  FUZZ_CHECK(sqlite3_prepare_v2(pm__db_handle(db), sql, -1, &st, NULL) == SQLITE_OK, "%s", sql);
  FUZZ_CHECK(sqlite3_step(st) == SQLITE_ROW, "%s", sql);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* Empties what an input wrote: every measurement, seen size and GPU but the fake one, and the
 * templates that no current one is. */
static inline void fuzz_db_reset(pm__db *db) {
  fuzz_exec(db,
            "DELETE FROM measurement; DELETE FROM seen; DELETE FROM run;"
            " DELETE FROM gpu WHERE uuid <> '" FUZZ_GPU_UUID "';"
            " DELETE FROM template WHERE current = 0;");
}

#endif /* PM_FUZZ_H */
