/* pmdb.h: the tuning database: where it is, its schema, and what the tuner and library calls
 * store in it and read from it (GPUs, runs, measurements, winners, compiled cubins). */
#ifndef PM_DB_H
#define PM_DB_H

#include <stdint.h>
#include <stdio.h>

#include "core.h"

/* Every function takes the context its errors are recorded on (through the pm__db it was opened
 * with): it returns PM_OK or a PM_E* status, and pm_errmsg(c) then names the database file and
 * says what failed. PM_EDB is an SQLite error (locked past the busy timeout, corrupt, not a
 * database, read-only, disk full), PM_EIO a file system error, PM_EINVAL a malformed argument or
 * document, PM_ENOTFOUND nothing stored for what was asked. Nothing here prints or exits.
 * A pm__db is used by one thread at a time; processes share the file through SQLite's locks. */

/* ---- The embedded schema (db/NNNN_what.sql, a generated table) ------------------------------ */

/* Migration NNNN brings a database from user_version NNNN-1 to NNNN. Same layout as
 * pm__template, so that one CMake script (cmake/embed_files.cmake) writes both tables. */
typedef struct pm__db_migration {
  const char *name;   /* "0001_initial" */
  const char *file;   /* "0001_initial.sql" */
  const char *source; /* the SQL, NUL-terminated */
  size_t length;
  const char *sha256;
} pm__db_migration;

/* In file name order, ended by an entry whose name is NULL. */
extern const pm__db_migration pm__db_migrations[];

/* The schema version this pmtune writes: the number of the last migration. */
int pm__db_schema_latest(void);

/* ---- Where it is, opening and closing ------------------------------------------------------- */

#define PM__DB_PATH_MAX 4096

/* Which file to use: path if not NULL, else $PMTUNE_DB, else $XDG_CACHE_HOME/pmtune/pmtune.db
 * (an unset, empty or relative $XDG_CACHE_HOME is ignored), else $HOME/.cache/pmtune/pmtune.db.
 * Writes it to out (cap bytes); touches no file. PM_EINVAL where none applies or it is too long. */
int pm__db_path(pm_ctx *c, const char *path, char *out, size_t cap);

typedef struct pm__db pm__db;

/* A problem as the database keys it. */
typedef struct pm__db_problem {
  const char *op;
  const char *dtype;
  int64_t rows, cols, n;
  int radius;
  const char *variant;
} pm__db_problem;

/* What the database must know of an operation to check its problems: the layer above makes one
 * per op from its entry (tuner/op.h, pm__ops_db) and hands the list to pm__db_open. */
typedef struct pm__db_op {
  const char *name;           /* "matadd" */
  int matrix;                 /* 1: problems are rows x cols; 0: n; 2: a batch of n rows x cols
                                 (a kernel of one's own of three dims) */
  int radius_min, radius_max; /* 0, 0 where the op has no radius */
  const char *radius_name;    /* what a problem's text calls its radius: NULL "radius" (filter);
                                 a kernel of one's own's tuned scalar's name */
  const char *variants[3];    /* the variant texts a problem may have, ended by NULL; {""}: none */
  unsigned dtypes;            /* the element types it takes: bit t for pm_dtype t (0: f32 alone) */
  /* The configuration text of the op's built-in default for problem p (what serving runs where
   * nothing is known, and the tuner measures at every size it tunes), into out[cap]; 0 where it
   * has none for p. NULL: the op has no default. owner is the op it was made from. */
  int (*default_config)(const struct pm__db_op *self, const pm__db_problem *p, char *out,
                        size_t cap);
  const void *owner;
  /* Whether config (its text, "bx=32 by=8") is a configuration of the op's space that may run
   * problem p on a GPU of sm_count SMs, as the tuner would have measured it: every parameter
   * once, in the space's order, each value one of its parameter's, no other parameter, and the
   * op's constraints met. 1 where it is; 0 where not, why (cap bytes) saying what is wrong
   * ("999 is not a value of BLOCK"). NULL: configurations are not checked. An import asks it of
   * every row. */
  int (*check_config)(const struct pm__db_op *self, const pm__db_problem *p, const char *config,
                      int sm_count, char *why, size_t cap);
} pm__db_op;

enum {
  PM__DB_READONLY = 1, /* for library calls: never creates, migrates or writes anything */
  PM__DB_MEMORY = 2    /* a new database in memory, gone at close (path is ignored): what is
                          imported into it is read as from a file (the shipped results) */
};

/* Opens the database at path (NULL: pm__db_path's choice) and keeps c for its errors. ops (ended
 * by NULL) are the operations whose problems this handle stores and looks up: any other is
 * refused as "unknown op"; the handle keeps the pointer.
 * Read-write: creates the file and its directories as needed, switches it to WAL, applies the
 * missing migrations (one transaction each) and marks the embedded templates current.
 * PM__DB_READONLY: the file must exist and have this pmtune's schema, or an older one that this
 * pmtune still reads (PM_ENOTFOUND where it is missing or empty, PM_EDB where its schema is
 * older than that): what a later migration added is then absent (pm__db_seen_list finds nothing
 * recorded in a file of schema 1). Either way a database of a newer schema,
 * or an SQLite file that is not pmtune's, is refused with PM_EDB and left untouched.
 * On failure *out is NULL. */
int pm__db_open(pm_ctx *c, const char *path, int flags, const pm__db_op *const *ops,
                pm__db **out);

/* How a statement of db meets another process's write lock: where wait is 1 (as opened) it waits
 * while that process is seen writing and up to 10 s after it stops; where 0 it fails at once
 * with "database is locked" (serving, which must not stall a call behind a tuning run). */
void pm__db_set_wait(pm__db *db, int wait);

/* Whether db's last statement failed because another process held the lock (see
 * pm__db_set_wait): try again later. Cleared by pm__db_set_wait. */
int pm__db_locked_out(const pm__db *db);

/* Closes it. pm__db_close(NULL) does nothing. */
void pm__db_close(pm__db *db);

/* The file in use, and the schema versions: *was when it was opened (0: new), *now after. */
const char *pm__db_filename(const pm__db *db);
void pm__db_schema(const pm__db *db, int *was, int *now);

/* Whether text (len bytes, -1: to its NUL) is JSON as RFC 8259 writes it, nested at most 2000
 * deep (as SQLite reads): 1 yes, 0 no. It parses nothing into values. SQLite 3.40's json_valid()
 * passes some malformed documents, on which its other JSON functions read memory never written,
 * so every JSON text from outside (an import, a kernel description, a bench document) passes
 * this before any SQLite JSON function sees it. */
int pm__json_syntax(const char *text, int len);

/* The names of the ops db was opened with, as a JSON array ('["matadd","reduce"]'), into out
 * (cap bytes, PM__DB_OPS_JSON enough for 16 built-in ops and a few more). */
#define PM__DB_OPS_JSON 1024
void pm__db_ops_json(const pm__db *db, char *out, size_t cap);
/* The op of that name among those db was opened with, or NULL. */
const pm__db_op *pm__db_op_named(const pm__db *db, const char *name);


/* Whether the file is sound enough to write into: PRAGMA integrity_check finds nothing (an index
 * that lacks a row would let a write add a duplicate), its schema is as the migrations make it
 * with no trigger that is not pmtune's (one would run on pmtune's writes and change what they
 * store), and no row refers to a missing one. PM_OK, or PM_EDB saying the first problem found
 * (`pmtune db check` lists them all). An import calls it inside its transaction, before it
 * writes anything. */
int pm__db_sound(pm__db *db);

/* Runs SQLite's integrity and foreign-key (orphan rows) checks and pmtune's own (application id,
 * schema version, tables present, every object of the file that the migrations do not make:
 * a trigger is a problem, a table, view or index of your own is listed) and counts what is
 * stored. *report (heap; the caller frees
 * it) says what was found, one finding a line; *problems is the number of problems among them.
 * PM_OK when the checks ran, whatever they found. */
int pm__db_check(pm__db *db, char **report, int *problems);

/* ---- GPUs and runs -------------------------------------------------------------------------- */

/* Records a GPU (identified by d->uuid; its arch, memory and the versions it ran with are kept up
 * to date); *id is its row. A row of d->uuid that names another
 * model (name, compute capability, SM count) is PM_EDB, the file left as it is: its
 * measurements were never this GPU's. */
int pm__db_gpu_put(pm__db *db, const pm__device_info *d, int driver_version, int runtime_version,
                   int64_t *id);

/* Makes every GPU of d's model in db (the same name, compute capability and SM count) say d's
 * memory size, so that the lookups take their rows as d's model's whatever d's memory reads (ECC
 * on or off): for a database in memory holding another machine's results (the shipped ones). */
int pm__db_gpu_adopt_memory(pm__db *db, const pm__device_info *d);

/* In a database of shipped results (in memory), makes the rows of GPU model `model` (another
 * model of d's architecture: the nearest one that ships) serve d's model where no row of d's own
 * model has their op and type: those of an (op, dtype) that d's model has are deleted, and the
 * GPUs of `model` made to read as d's model (name, SM count, memory). groups (cap bytes)
 * receives what it brings, "op/dtype op/dtype ...", in order. */
int pm__db_gpu_adopt_sibling(pm__db *db, const pm__device_info *d, const char *model,
                             char *groups, size_t cap);

typedef enum pm__db_run_status {
  PM__DB_RUN_OK,    /* it did what it was asked */
  PM__DB_RUN_FAILED /* it stopped on an error (message says which) */
} pm__db_run_status;

/* Starts a run of this pmtune on GPU gpu_id (0: none) for command_line; *id is its row. Runs of
 * this host left 'running' by processes that no longer exist are marked 'interrupted'. */
int pm__db_run_begin(pm__db *db, int64_t gpu_id, const char *command_line, int64_t *id);
/* Ends run id with status and an optional message (NULL). */
int pm__db_run_end(pm__db *db, int64_t id, pm__db_run_status status, const char *message);

/* ---- Problems and measurements -------------------------------------------------------------- */

/* What was tuned. Fields that do not apply to op are 0 / NULL: rows and cols for ops on
 * matrices, else n; radius where the op has one; variant one of the op's (NULL or "" where it has
 * none). dtype: a pm_dtype's name ("f32", "bf16") that the op takes. Every function checks a
 * problem against the handle's ops (PM_EINVAL, saying what is wrong). */

#define PM__DB_PROBLEM_MAX 128 /* the canonical text fits in this, NUL included */
#define PM__DB_CONFIG_MAX 256  /* the longest configuration text, NUL included */
#define PM__DB_PARAMS_MAX 512  /* the longest configuration JSON, NUL included */

/* The canonical text of a problem ("rows=4096 cols=4096 order=row", "n=1024",
 * "rows=8192 cols=8192 radius=2 border=zero"), the key SQL uses; checks p first. */
int pm__db_problem_text(pm__db *db, const pm__db_problem *p, char out[PM__DB_PROBLEM_MAX]);

typedef enum pm__db_outcome {
  PM__DB_MEASURED,      /* "ok": ran and was timed */
  PM__DB_COMPILE_ERROR, /* "compile_error" */
  PM__DB_LAUNCH_ERROR,  /* "launch_error" */
  PM__DB_WRONG_RESULT   /* "wrong_result": ran, but its result differs from the reference */
} pm__db_outcome;

/* One measurement, as the tuner hands it over. */
typedef struct pm__db_measurement {
  int64_t gpu_id; /* from pm__db_gpu_put */
  int64_t run_id; /* from pm__db_run_begin; 0: none */
  pm__db_problem problem;
  const char *template_sha256; /* the template's content hash: 64 lowercase hex digits */
  const char *params;          /* the configuration: a JSON object of integers {"bx":32,"by":8} */
  const char *config;          /* its text "bx=32 by=8": NULL to derive it from params; if given,
                                  it must be exactly that */
  int is_seed;                 /* 1: the seed configuration of this problem (one per problem) */
  pm__db_outcome outcome;
  const char *error;                /* why it failed: required unless outcome is PM__DB_MEASURED */
  double median_ms, min_ms, max_ms; /* required when measured: 0 < min <= median <= max */
  int samples;                      /* >= 1 when measured */
  double gbps;                      /* >= 0 */
  int verified;                     /* 1: checked against the reference */
  double max_error;                 /* the largest difference found when verified */
} pm__db_measurement;

/* Stores a measurement, replacing the row of the same (GPU, op, dtype, problem, config,
 * template): storing it again is harmless. One short transaction; checks every field first. */
int pm__db_measurement_put(pm__db *db, const pm__db_measurement *m);

/* Whether (gpu_id, problem, config text, template) is stored, whatever its outcome, or (model
 * not 0) stored for any GPU of gpu_id's model (an import's too): a tuning run that resumes skips
 * what is, and carrying what the fleet's GPUs of this model measured. *found is 1 or 0. */
int pm__db_measured(pm__db *db, int64_t gpu_id, int model, const pm__db_problem *p,
                    const char *config, const char *template_sha256, int *found);

/* What an export carries of each problem (db/README.md, "What an export carries"): of the
 * current templates' verified measurements, the seed, the op's default (pm__db_op's
 * default_config) and every configuration that is among the PM__DB_CARRY_TOP fastest at some
 * size of the same op, type, variant and radius on that GPU within a factor PM__DB_CARRY_WITHIN
 * in elements: what deciding between two tuned sizes reads (the configurations measured at
 * both), which `pmtune tune` measures at every such size (pm__db_carry_configs). */
#define PM__DB_CARRY_TOP 3
#define PM__DB_CARRY_WITHIN 16

/* Carrying what one size taught to the sizes around it: each
 * configuration among the PM__DB_CARRY_TOP fastest verified ones of some size of p's group (op,
 * dtype, variant, radius) on from_gpu (0: gpu_id; model not 0: on any GPU of its model, an
 * import's too) and template, within a factor PM__DB_CARRY_WITHIN of p's size in elements, p's own
 * size included, once each in order of text, handed to each(arg, config) (which returns nonzero
 * to stop); with model, those a GPU of gpu_id's model measured at p already are left out (after an
 * import of several machines' exports, `pmtune tune --carry` times what none of them measured, not
 * all again). What `pmtune tune` measures at p so that an export carries it. */
int pm__db_carry_configs(pm__db *db, int64_t gpu_id, int model, int64_t from_gpu,
                         const pm__db_problem *p, const char *template_sha256,
                         int (*each)(void *arg, const char *config), void *arg);

/* The sizes of p's group (op, dtype, variant, radius) that have a verified measurement on gpu_id
 * (model not 0: on any GPU of its model) and template, smallest first, each handed to each(arg,
 * problem) as p with that size (which returns nonzero to stop). */
int pm__db_group_sizes(pm__db *db, int64_t gpu_id, int model, const pm__db_problem *p,
                       const char *template_sha256,
                       int (*each)(void *arg, const pm__db_problem *size), void *arg);

/* A GPU of the model nearest gpu_id's among the others of its architecture (compute capability)
 * that measured p's group (op, dtype, variant, radius) with the template: the nearest SM count,
 * then the first name (as serving picks the shipped results of a model without its own); into
 * *sibling (0: none) and its name into name. What `pmtune tune --carry` carries from where
 * gpu_id's model measured nothing of the group (an H200 from the H100's imported results). */
int pm__db_group_sibling(pm__db *db, int64_t gpu_id, const pm__db_problem *p,
                         const char *template_sha256, int64_t *sibling, char *name, size_t cap);

/* ---- Winners -------------------------------------------------------------------------------- */

/* The fastest verified configuration of a problem, for the template of that hash. */
typedef struct pm__db_winner {
  char config[PM__DB_CONFIG_MAX]; /* "bx=32 by=8 vec=4" */
  char params[PM__DB_PARAMS_MAX]; /* {"bx":32,"by":8,"vec":4} */
  double median_ms, min_ms, max_ms, gbps;
  int samples;
  double speedup;        /* seed median / winner median; 0 where the seed was not measured */
  int64_t rows, cols, n; /* the problem it was tuned for (nearest: may differ from the ask) */
  int radius;
  int same_gpu;           /* 1: measured on this very GPU; 0: on another GPU of its model */
  double distance;        /* nearest: |ln(size asked / size tuned)|, size = rows*cols or n */
  double aspect_distance; /* nearest: |ln(aspect asked / aspect tuned)|, aspect = rows/cols */
  int between;            /* 1: decided between two tuned sizes (pm__db_known_find_if): */
  int64_t other_rows, other_cols, other_n; /* the other of the two (rows..n are the nearer) */
  double weight;          /* where the size asked lies: 0 at the smaller size, 1 at the larger */
  /* pm__db_known_find_if: the time predicted at the size asked for this configuration (exact: as
   * measured; between: interpolated in ln(time) against ln(size); nearest: scaled with the
   * elements above the size measured), and for the default it was given (0: not measured
   * there); guarded 1 where the default served, predicted faster than the best tuned. */
  double predicted_ms, default_ms;
  int guarded;
} pm__db_winner;

/* The winner of exactly problem p on GPU d, measured on d itself (same UUID) or else on a GPU of
 * d's model (same name, compute capability, SM count and memory size: what an import from
 * another machine gives), among rows of template template_sha256 that ran, were verified and
 * passed. PM_ENOTFOUND where there is none. Works read-only. */
int pm__db_winner_get(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                      const char *template_sha256, pm__db_winner *out);

/* The winner at the tuned size nearest to p, among problems of the same op, dtype, variant and
 * radius on GPU d or its model: nearest by distance (|ln(size / tuned size)|, where size is
 * rows*cols or n), then by aspect_distance (|ln(aspect / tuned aspect)|, aspect rows/cols), then
 * the smaller size. An exact match has distance 0. PM_ENOTFOUND where nothing is tuned. */
int pm__db_winner_nearest(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                          const char *template_sha256, pm__db_winner *out);

/* The same two lookups, taking only configurations that accept(arg, config text) takes (the
 * fastest of those): what a caller's buffers allow (a pitch the vector width must divide). The
 * nearest size is chosen first, among all tuned sizes; then the best accepted at it. */
int pm__db_winner_get_if(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                         const char *template_sha256, int (*accept)(void *arg, const char *config),
                         void *arg, pm__db_winner *out);
int pm__db_winner_nearest_if(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                             const char *template_sha256,
                             int (*accept)(void *arg, const char *config), void *arg,
                             pm__db_winner *out);

/* ---- What is known for one GPU, in memory (known.c) ----------------------------------------- */

/* A snapshot of every verified measurement that the lookups above could serve on one GPU (of it,
 * or of its model), for a set of templates: the same two lookups then run without SQL. It
 * borrows db (for messages and problem checks), which must outlive it. It does not follow later
 * changes to the file: a new snapshot does. */
typedef struct pm__db_known_row pm__db_known_row;
typedef struct pm__db_known {
  pm__db *db;
  pm__device_info dev;
  pm__db_known_row *rows;
  size_t n, cap;
  struct pm__db_known_group *groups; /* rows of one op, dtype, variant and radius */
  size_t ngroups;
} pm__db_known;

/* Loads the measurements of template shas[i] for op ops[i] (both lists ended by NULL) on d or
 * its model. Works read-only. On failure *out is empty. */
int pm__db_known_load(pm__db *db, const pm__device_info *d, const char *const *ops,
                      const char *const *shas, pm__db_known *out);
void pm__db_known_free(pm__db_known *k);

/* pm__db_winner_get_if and pm__db_winner_nearest_if on the snapshot: the same rules, answers and
 * errors (PM_ENOTFOUND, the message on the database's context). */
int pm__db_known_get_if(const pm__db_known *k, const pm__db_problem *p,
                        int (*accept)(void *arg, const char *config), void *arg,
                        pm__db_winner *out);
int pm__db_known_nearest_if(const pm__db_known *k, const pm__db_problem *p,
                            int (*accept)(void *arg, const char *config), void *arg,
                            pm__db_winner *out);
/* What serves p from the snapshot (*exact 1: tuned for exactly p's size): the exact winner, as
 * pm__db_known_get_if gives it; else, where p's size lies strictly between two tuned sizes next
 * to each other in elements (same op, dtype, variant, radius) on the line of sizes whose aspect
 * (rows / cols) lies nearest p's (sizes whose aspects lie within about a factor 2 of each other
 * form a line; a vector's sizes are one; a line whose largest size lies below p's is as far as
 * the greater of its distances in ln(aspect) and ln(elements)), the configuration measured at
 * both whose slowdown against each size's fastest, interpolated linearly in ln(size) to p's
 * size, is least
 * (out->between 1, its row at the nearer size, out->other_* the other size, out->weight where p
 * lies); else the winner at the size of that line nearest in elements (then in aspect). Each
 * only among configurations accept takes. dflt (may be NULL) is the configuration a call runs
 * where nothing is known: where it was measured there too and is predicted faster than the one
 * found, it is the answer (out->guarded), so a decision is never predicted worse than knowing
 * nothing; out->predicted_ms and out->default_ms say both predictions. alike (NULL: always) says
 * whether a configuration runs p the way it ran a tuned size `at` (the same code path): its
 * measurement there predicts p only where it does, and one that runs p as it ran neither size
 * of a bracket is passed over (at the nearest size, the fastest that runs p alike serves). Quick: the sizes are
 * searched by bisection (or one pass), the brackets' common configurations are matched when the
 * snapshot is loaded, and a miss formats no message: PM_ENOTFOUND, with nothing said on the
 * context, where nothing fits (pm__db_known_nearest_if says why). */
int pm__db_known_find_if(const pm__db_known *k, const pm__db_problem *p,
                         int (*accept)(void *arg, const char *config),
                         int (*alike)(void *arg, const char *config, const pm__db_problem *at),
                         void *arg, const char *dflt, pm__db_winner *out, int *exact);

/* ---- Sizes served without a tuned winner (seen.c) ------------------------------------------- */

/* Adds calls[i] (>= 1) to the count of problem ps[i] (0 <= i < n) on GPU gpu_id, in one
 * transaction: a new row where there is none (first_seen now); last_seen now. The problems are
 * checked as pm__db_measurement_put checks them (op known to the handle's op list, and so on),
 * all of them before anything is written: one bad problem or count writes nothing (PM_EINVAL
 * saying which). gpu_id must be a recorded GPU (pm__db_gpu_put). A count that would pass 2^63-1
 * stays there. n == 0 does nothing. */
int pm__db_seen_add(pm__db *db, int64_t gpu_id, const pm__db_problem *ps, const int64_t *calls,
                    size_t n);

/* The recorded problems of GPU gpu_id (and op, unless NULL), most calls first (equal counts:
 * the first recorded first), at most `limit` (0: all), each handed to cb (which returns nonzero
 * to stop) with its call count. p's strings live until cb returns; cb may read the database,
 * not write it. Rows that are no problem of the handle's ops (an op of another pmtune, a row
 * written by hand) are passed over. Works read-only; a file of schema 1 has recorded none. */
int pm__db_seen_list(pm__db *db, int64_t gpu_id, const char *op, size_t limit,
                     int (*cb)(void *arg, const pm__db_problem *p, int64_t calls), void *arg);

/* ---- Templates ------------------------------------------------------------------------------ */

/* Makes sha256 the current template of op: the winner view then shows only its measurements
 * (the others stay for history). pm__db_open does it for the embedded templates. */
int pm__db_template_current(pm__db *db, const char *op, const char *sha256);

/* ---- Compiled cubins ------------------------------------------------------------------------ */

typedef struct pm__db_cubin_key {
  const char *template_sha256;
  const char *defines;       /* canonical, as pm__db_defines_text writes it: "-DBX=32 -DBY=8" */
  const char *arch;          /* "sm_90" */
  const char *nvrtc_version; /* pm__nvrtc_version() */
  int driver_version;        /* as pm__cuda_versions gives it */
} pm__db_cubin_key;

/* The canonical defines text of defines[0..n): "-DNAME=VALUE" sorted by name, one space apart
 * ("" for none). PM_EINVAL where it does not fit in cap bytes. */
int pm__db_defines_text(pm_ctx *c, const char *const *defines, size_t n, char *out, size_t cap);

/* The cubin stored for exactly key k: out->data is heap (pm__cubin_free), out->compile_ms what
 * compiling it took then. PM_ENOTFOUND where none is. Works read-only. */
int pm__db_cubin_get(pm__db *db, const pm__db_cubin_key *k, pm__cubin *out);

/* Stores a cubin under k, replacing one stored there. */
int pm__db_cubin_put(pm__db *db, const pm__db_cubin_key *k, const pm__cubin *b);

/* ---- Export and import (exchange.c) --------------------------------------------------------- */

/* Writes what is carried of each problem (above), with the GPUs, to out as a JSON document
 * (db/README.md describes it); all: every measurement instead, failed and stale ones included.
 * *count (may be NULL) receives the number of measurements written. */
int pm__db_export(pm__db *db, FILE *out, int all, int *count);

typedef struct pm__db_import_stats {
  int gpus_added; /* GPUs that were not known */
  int added;      /* measurements that were not stored */
  int updated;    /* stored, and replaced by a later measurement of the document */
  int kept;       /* stored already, as recent as the document's or more */
  int passed_over; /* pm__db_import_known: of ops the database was not opened for */
} pm__db_import_stats;

/* Merges a document that pm__db_export wrote (json, len bytes) into the database, all or
 * nothing: every field is checked first, and anything wrong (malformed JSON, a missing,
 * unknown or duplicate field, a wrong type, a value out of range) is PM_EINVAL saying where,
 * with nothing written. A measurement replaces a stored one of the same key only if it was
 * measured later. st may be NULL. */
int pm__db_import(pm__db *db, const char *json, size_t len, pm__db_import_stats *st);

/* The same, but a measurement of an op that the database was not opened for (a kernel of one's
 * own in a fleet's export, read by serving for the built-in ops) is checked as a row and passed
 * over, not refused: st->passed_over counts them. Shipped and results folders are read so. */
int pm__db_import_known(pm__db *db, const char *json, size_t len, pm__db_import_stats *st);

/* ---- What the tools list (rows.c) ----------------------------------------------------------- */

/* Each GPU the database knows, ordered by name, handed to cb with its row id (name, uuid,
 * compute capability, SMs and memory filled; the rest zero). cb returns nonzero to stop, and
 * that value is returned. */
int pm__db_gpus(pm__db *db, int (*cb)(void *arg, int64_t id, const pm__device_info *d),
                void *arg);

/* One row of the `winner` view: strings live until the callback returns (variant NULL where
 * the op has none); speedup 0 where no seed was measured. */
typedef struct pm__db_winner_row {
  const char *gpu_name, *op, *dtype, *problem, *config, *params, *seed_config, *variant;
  double median_ms, gbps, speedup, seed_median_ms;
  int64_t gpu_id, rows, cols, n;
  int radius;
} pm__db_winner_row;

typedef enum pm__db_winner_order {
  PM__DB_WINNERS_BY_NAME, /* GPU name, op, f32 first then the other types, variant, radius, size */
  PM__DB_WINNERS_BY_GPU   /* GPU row, op, variant, radius, size */
} pm__db_winner_order;

/* The winners of op (NULL: every op), in that order, each handed to cb (nonzero stops, and is
 * returned). */
int pm__db_winners(pm__db *db, const char *op, pm__db_winner_order order,
                   int (*cb)(void *arg, const pm__db_winner_row *w), void *arg);

/* For one problem (its text, as the winner view gives it) on GPU gpu_id, the best verified time
 * at each pair of values of parameters px and py that was measured, handed to cb (nonzero stops,
 * and is returned). */
int pm__db_best_times(pm__db *db, const char *op, const char *problem, int64_t gpu_id,
                      const char *px, const char *py,
                      int (*cb)(void *arg, int64_t x, int64_t y, double ms), void *arg);

/* Whether text (len bytes) is JSON (pm__json_syntax, then SQLite's limits): *valid 1 or 0; where
 * it is, the JSON type of each of paths[0..n) ("$.op") into types[i] as SQLite's json_type names
 * it ("object", "text", "integer", "real", ...; "" where absent). */
int pm__db_json_types(pm__db *db, const char *text, int len, const char *const *paths, int n,
                      char (*types)[8], int *valid);

#endif /* PM_DB_H */
