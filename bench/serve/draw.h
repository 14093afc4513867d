/* draw.h: the random problems of the "between tuned sizes" study (between.c): sizes no one
 * tuned, drawn between an op's default tune sizes. Needs no GPU (tests/test_between.c). */
#ifndef PM_DRAW_H
#define PM_DRAW_H

#include <stdint.h>

#include "op.h"

/* The aspect (rows / cols) of a drawn matrix is a tuned size's times a factor drawn
 * log-uniformly in [1 / PM__DRAW_ASPECT, PM__DRAW_ASPECT]. */
#define PM__DRAW_ASPECT 1.5

/* Draws a problem of op from the generator state *s (any value but 0; the same state gives the
 * same problem): its size (rows x cols, or n) log-uniform between the smallest and the largest
 * of op->tune_sizes, a matrix's aspect near a tuned size's (PM__DRAW_ASPECT), its variant (and
 * radius, for an op with one) uniform among those op allows; never one of op->tune_sizes' sizes
 * (pm__draw_is_tuned), and valid for op->check with op's default configuration (caller_align
 * 0: the tuner's own layouts). Returns 0, or -1 where no such problem was found in many tries
 * (an op whose tune sizes leave no room between them). */
int pm__draw_between(const pm__op *op, uint64_t *s, pm__problem *out);

/* Whether pr's dimensions (rows and cols, or n) are those of one of op->tune_sizes, whatever
 * the variant and radius. */
int pm__draw_is_tuned(const pm__op *op, const pm__problem *pr);

/* The size a problem of op is measured by: rows * cols, or n. */
double pm__draw_size(const pm__op *op, const pm__problem *pr);

#endif /* PM_DRAW_H */
