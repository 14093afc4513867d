/* internal.h: what db/'s files share and no layer above sees: the handle's struct, the busy
 * handler's state, and the helpers one file of db/ lends another. */
#ifndef PM_DB_INTERNAL_H
#define PM_DB_INTERNAL_H

#include "pmdb.h"

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
