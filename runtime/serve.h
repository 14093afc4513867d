/* serve.h: how a library call finds its kernel, shared with `pmtune explain`, the serving
 * benchmark and the tests: the decision chain (decide.c) and serving's life on a context
 * (serve.c). What only runtime/'s own files share is in runtime.h. */
#ifndef PM_SERVE_H
#define PM_SERVE_H

#include "compile.h"

typedef enum pm__source {
  PM__FROM_EXACT,   /* the winner tuned for exactly this size */
  PM__FROM_NEAREST, /* the winner at the nearest tuned size */
  PM__FROM_TUNED,   /* tuned now, on first use (autotune) */
  PM__FROM_DEFAULT  /* nothing tuned (or no database): the op's built-in default */
} pm__source;

const char *pm__source_name(pm__source s); /* "exact", "nearest", "tuned", "default" */

/* What a call of op on pr would run, and why. */
typedef struct pm__decision {
  pm__source source;
  int v[PM__MAX_PARAMS];
  char config[256];
  unsigned tuned_rows, tuned_cols, tuned_n; /* the size its measurement is of (exact, nearest) */
  double median_ms, gbps, speedup;          /* measured there (0 where unknown) */
  double distance;                          /* nearest: |ln(size / tuned size)| */
  int between;          /* nearest, decided between two tuned sizes (pm__db_known_find_if): */
  unsigned other_rows, other_cols, other_n; /* the other of the two (tuned_* is the nearer) */
  double weight;        /* where the size lies between them: 0 at the smaller, 1 at the larger */
  int shipped;          /* exact or nearest from the results shipped for this GPU's model, not
                           from the user's database */
  double predicted_ms;  /* exact, nearest: the time predicted at this size (pm__db_winner's) */
  double default_ms;    /* the same for the built-in default, where it was measured (else 0) */
  int guarded;          /* the default served: predicted faster than the best tuned, or (from
                         * other sizes) less than 3% slower */
  char why[512];                            /* default: why nothing tuned was used */
} pm__decision;

/* The folder of the shipped results this library reads (runtime/shipped.c: $PMTUNE_RESULTS,
 * else share/pmtune/results beside the library or the program, as installed or as built), into
 * out; 0 where there is none. */
int pm__shipped_dir(char *out, size_t cap);

/* The other GPU model whose shipped results serve op in type dtype on c's GPU (none of its own
 * model's do: the nearest model of its architecture that ships them), or NULL: its own model's
 * serve it, or none. After a decision read them. */
const char *pm__shipped_sibling(pm_ctx *c, const pm__op *op, int dtype);

/* What decided, as the commands print it: "exact", "between" (two tuned sizes), "nearest",
 * "default" or "tuned". */
const char *pm__decision_kind(const pm__decision *d);

/* Serving's state on a context with a device: made by pm_open, freed by pm_close. Making it
 * touches no GPU (it allocates nothing there), so tests may hang it on a context without one. */
int pm__serve_init(pm_ctx *c, const pm_options *o);
void pm__serve_free(pm_ctx *c);

/* The decision chain: what a call of op on pr runs on the device of `known` (what the database
 * knows for it, read into memory once; NULL where there is no database): the fastest verified
 * winner stored for exactly pr's size on that device or its model, else, between two tuned sizes
 * of like aspect, the configuration measured at both that interpolates best, else the one at the
 * nearest tuned size (same op, variant and radius), each only among the configurations that pass
 * op->check for pr on dev (a vector width pr->caller_align allows) and of the template built into
 * this library, and never one predicted slower than op's default where that was measured there
 * too (pm__db_known_find_if); the same asked of `shipped` (the results shipped for the device's
 * model, NULL for none: out->shipped says they decided), the better answer serving (exact, then
 * between, then nearest; the database's on a tie, but of two nearest the nearer); else op's
 * built-in default, with out->why saying why (the lookup's error, or why there is no database).
 * Always decides, in memory (no SQL); returns out->source (never PM__FROM_TUNED: the slow path
 * says that, after tuning). c is the context the database was opened with, whose error the
 * lookups leave. Needs no GPU. */
pm__source pm__decide(pm_ctx *c, const pm__db_known *known, const pm__db_known *shipped,
                      const pm__op *op, const pm__problem *pr, pm__decision *out);

/* pm__decide without out->why (left empty): what a call asks, for which no message is formatted
 * (a size served by the default costs no more to decide than one served by a winner). */
pm__source pm__decide_quiet(pm_ctx *c, const pm__db_known *known, const pm__db_known *shipped,
                            const pm__op *op, const pm__problem *pr, pm__decision *out);

/* Makes every later decision read the database again and decide anew (pm_reload, and after a
 * background tuning): until then, and from its first decision on, c decides from what the
 * database held then. Drops the snapshots, reopens the read-only handle at the next decision and
 * moves serving to a new epoch, so that each cached size is decided again at its next call (a
 * call under way finishes with what it had). Takes the serving lock. */
void pm__serve_refresh(pm_ctx *c);

/* Decides for op on pr on c's device with c's database, as a call would but without tuning on
 * first use (pm__decide under the serving lock). c must have serving state (pm_open with a
 * device, or pm__serve_init). */
int pm__serve_decide(pm_ctx *c, const pm__op *op, const pm__problem *pr, pm__decision *out);
/* The same for a kernel of one's own (pm_kernel_open's handle): the answer of its context's
 * database and of the results folder's documents that name it, as a call of it decides. */
int pm__serve_decide_kernel(pm_kernel *k, const pm__problem *pr, pm__decision *out);

/* The alignment (4, 8 or 16 bytes) that every pointer and pitch given honours; 0 where one is
 * not even 4-byte aligned (floats need that). n values, NULL pointers count as aligned. */
unsigned pm__alignment_of(const size_t *values, int n);
/* The same for elements of `least` bytes (2 for the 16-bit types, 8 for doubles): least .. 16,
 * or 0 where one value is not a multiple of least. */
unsigned pm__alignment_least(const size_t *values, int n, unsigned least);

#endif /* PM_SERVE_H */
