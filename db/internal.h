/* internal.h: what db/'s files share and no layer above sees: the handle's struct, the busy
 * handler's state, and the helpers one file of db/ lends another. */
#ifndef PM_DB_INTERNAL_H
#define PM_DB_INTERNAL_H

#include <sqlite3.h>

#include "pmdb.h"

/* Records an SQLite failure (rc) on db's context:
 * "tuning database PATH: message (SQLITE_X) [file:line: call]". Returns PM_EDB. */
int pm__db_sqlite_error(pm__db *db, int rc, const char *call, const char *file, int line);

/* Short write transactions: BEGIN IMMEDIATE (waits for the write lock up to the busy timeout),
 * COMMIT, and ROLLBACK (always harmless). */
int pm__db_begin(pm__db *db);
int pm__db_commit(pm__db *db);
void pm__db_rollback(pm__db *db);

/* Checks m (and the problem, params and config in it) and stores it inside the caller's
 * transaction. measured_at NULL: now. only_if_newer: keep a stored row of the same key unless
 * measured_at is later. *what (may be NULL): 0 added, 1 replaced, 2 kept. */
int pm__db_measurement_write(pm__db *db, const pm__db_measurement *m, const char *measured_at,
                             int only_if_newer, int *what);

/* Binds op, dtype, rows, cols, n, radius, variant and problem text at first..first+7 (NULL for
 * what does not apply). p must have been checked; text is its pm__db_problem_text. Returns an
 * SQLite code (the bits of all the binds' codes or'ed). */
int pm__db_bind_problem(sqlite3_stmt *st, int first, const pm__db_problem *p, const char *text);

/* Records a GPU inside the caller's transaction; keep_known: leave a known GPU's row as it is.
 * A known uuid of another model is refused: PM_EINVAL where keep_known (an import), else PM_EDB. */
int pm__db_gpu_write(pm__db *db, const pm__device_info *d, int driver_version, int runtime_version,
                     int keep_known, int64_t *id, int *added);

/* The check macro for SQLite calls: anything but SQLITE_OK, SQLITE_ROW or SQLITE_DONE records
 * the error on db's context, sets rc and jumps to the function's `fail`. The fault hook may fail
 * the call instead of making it (SQLITE_IOERR). */
#define PM__SQLITE(db, call)                                                                \
  do {                                                                                      \
    int sqlite_rc_ = pm__fault(PM__FAULT_SQLITE, PM__FAULT_SITE) ? SQLITE_IOERR : (call);   \
    if (sqlite_rc_ != SQLITE_OK && sqlite_rc_ != SQLITE_ROW && sqlite_rc_ != SQLITE_DONE) { \
      rc = pm__db_sqlite_error((db), sqlite_rc_, #call, __FILE__, __LINE__);                \
      goto fail;                                                                            \
    }                                                                                       \
  } while (0)

/* The same for a call on statement st: the error names its SQL rather than the C call. */
#define PM__SQLITE_ST(db, st, call)                                                         \
  do {                                                                                      \
    int sqlite_rc_ = pm__fault(PM__FAULT_SQLITE, PM__FAULT_SITE) ? SQLITE_IOERR : (call);   \
    if (sqlite_rc_ != SQLITE_OK && sqlite_rc_ != SQLITE_ROW && sqlite_rc_ != SQLITE_DONE) { \
      rc = pm__db_sqlite_error((db), sqlite_rc_, sqlite3_sql(st), __FILE__, __LINE__);      \
      goto fail;                                                                            \
    }                                                                                       \
  } while (0)

/* The text of column i of st's row, as sqlite3_column_text gives it, into the const char *var.
 * NULL is an SQL NULL, or SQLite out of memory making the text: that one is an error as in
 * PM__SQLITE (SQLITE_NOMEM recorded, rc set, a jump to `fail`), never taken for a NULL value. */
#define PM__SQLITE_TEXT(db, st, i, var)                                                   \
  do {                                                                                    \
    (var) = (const char *)sqlite3_column_text((st), (i));                                 \
    if ((var) == NULL && sqlite3_errcode(sqlite3_db_handle(st)) == SQLITE_NOMEM) {        \
      rc = pm__db_sqlite_error((db), SQLITE_NOMEM, sqlite3_sql(st), __FILE__, __LINE__);  \
      goto fail;                                                                          \
    }                                                                                     \
  } while (0)

/* Finalizes *st and sets it to NULL, so that a `fail` path's finalize of the same statement is
 * harmless after a later call failed. */
static inline void pm__db_finalize(sqlite3_stmt **st) {
  sqlite3_finalize(*st);
  *st = NULL;
}

/* The context a database was opened with. */
pm_ctx *pm__db_ctx(pm__db *db);

/* Statements prepared once for the handle's life (its slot, PM__DB_KEPT_*): those run for every
 * row an import stores (preparing them again each time was two thirds of an import's time), and
 * for every candidate a tuning run weighs (pm__db_measured).
 * pm__db_keep gives slot's statement, preparing sql on first use (an SQLite result code, for
 * PM__SQLITE); its user lets it go with pm__db_let_go (reset, bindings cleared), never finalizes
 * it: pm__db_close does. */
enum {
  PM__DB_KEPT_GPU_RUN,
  PM__DB_KEPT_INSERT,
  PM__DB_KEPT_PARAMS,
  PM__DB_KEPT_PARAMS_EACH,
  PM__DB_KEPT_TEMPLATE_PUT,
  PM__DB_KEPT_TEMPLATE_GET,
  PM__DB_KEPT_MEASURED,
  PM__DB_KEPT_N
};
int pm__db_keep(pm__db *db, int slot, const char *sql, sqlite3_stmt **st);
void pm__db_let_go(sqlite3_stmt **st);

/* The SQLite connection, for tests and for reading what no function here gives. */
sqlite3 *pm__db_handle(pm__db *db);

/* Whether text is valid JSON (pm__json_syntax), then within SQLite's own limits (json_valid() on
 * h): 1 valid, 0 not, -1 SQLite could not tell (out of memory). h NULL: the syntax alone, for a
 * text that no SQLite JSON function reads whole (an import's document, which exchange.c reads
 * itself; each configuration in it is checked again as it is stored). */
int pm__db_json_check(sqlite3 *h, const char *text, int len);

#define BUSY_TIMEOUT_MS 10000     /* how long a statement waits for a lock while nothing moves */
#define BUSY_LIMIT_MS 300000      /* how long it waits at most, however busy the file is */
#define APPLICATION_ID 1886221429 /* 0x706d7475, 'pmtu', set by 0001_initial.sql */
#define NOW "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
/* The oldest schema a read-only handle reads (library calls never migrate): every migration
 * since has only added tables that the lookups do not read (0002: seen), so a file that no
 * newer pmtune has written yet still serves. A migration that changes what is read raises it. */
#define READ_SINCE 1

/* What the busy handler of a connection knows of its current wait (see busy_wait). */
typedef struct {
  const char *path;    /* the database file; PATH-wal is watched beside it */
  long long start_ms;  /* when this wait began */
  long long moved_ms;  /* when another process was last seen writing */
  long long signature; /* the files' sizes and times when last looked at */
  int at_once;         /* fail at once rather than wait (pm__db_set_wait) */
  int gave_up;         /* the last wait ended without the lock */
} waiter;

struct pm__db {
  pm_ctx *c;
  waiter wait;
  const pm__db_op *const *ops; /* what problems may be: the caller's list */
  sqlite3 *sql;
  char *path;
  int readonly;
  int memory;      /* PM__DB_MEMORY: this process's own, which nothing else writes */
  int version_was; /* user_version when opened */
  sqlite3_stmt *kept[PM__DB_KEPT_N]; /* pm__db_keep's statements, finalized at close */
  /* What a write transaction has found already, so that the rows of one import do not ask the
   * file again (each is valid only in the transaction it was found in: txn, counted by
   * pm__db_begin, while one is open): the last template found to be an op's, the last GPU and
   * run found to exist. */
  unsigned long txn, tpl_txn, ids_txn;
  char tpl_op[64], tpl_sha[65];
  int64_t ids_gpu, ids_run;
  struct params_memo *memo; /* config_from_params' recent answers (heap; NULL: none yet) */
  /* pm__db_problem_text's last answer (its text "" where none), and its problem's strings */
  pm__db_problem last;
  char last_op[64], last_dtype[16], last_variant[48], last_text[PM__DB_PROBLEM_MAX];
};

/* config_from_params' answer for a params text: what it reads depends on the text alone. */
#define MEMO_SLOTS 2048 /* the shipped H100 results hold 780 configurations */
#define MEMO_TEXT 128   /* longer texts are not remembered */
typedef struct params_memo {
  char params[MEMO_TEXT], json[MEMO_TEXT], text[MEMO_TEXT];
} params_memo;

/* pmdb.c */
const char *pm__dbi_code_name(int rc);
void pm__dbi_set_busy_wait(sqlite3 *h, waiter *w, const char *path);
int pm__dbi_query_int(pm__db *db, const char *sql, int64_t *v);
int pm__dbi_valid_sha(const char *s);
int pm__dbi_config_from_params(pm__db *db, const char *params, char json_out[PM__DB_PARAMS_MAX],
                               char text_out[PM__DB_CONFIG_MAX]);
/* schema.c */
int pm__dbi_reference_schema(pm__db *db, int64_t version, sqlite3 **ref);
int pm__dbi_foreign_objects(pm__db *db, sqlite3 *ref,
                            int (*each)(void *arg, const char *type, const char *name,
                                        const char *table),
                            void *arg);
int pm__dbi_check_shape(pm__db *db, int64_t version, int *differs, int refuse_triggers);

#endif
