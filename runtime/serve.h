/* serve.h: how a library call finds its kernel, shared with `pmtune explain` and the tests. */
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
  char why[512];                            /* default: why nothing tuned was used */
} pm__decision;

/* Serving's state on a context with a device: made by pm_open, freed by pm_close. */
int pm__serve_init(pm_ctx *c, const pm_options *o);
void pm__serve_free(pm_ctx *c);

/* Decides for op on pr on c's device, as a call would (without tuning on first use). */
int pm__serve_decide(pm_ctx *c, const pm__op *op, const pm__problem *pr, pm__decision *out);

/* The alignment (4, 8 or 16 bytes) that every pointer and pitch given honours; 0 where one is
 * not even 4-byte aligned (floats need that). n values, NULL pointers count as aligned. */
unsigned pm__alignment_of(const size_t *values, int n);

#endif /* PM_SERVE_H */
