/* draw.h: the random problems of the serving studies: the "between tuned sizes" study
 * (between.c), sizes no one tuned drawn between an op's default tune sizes, and the "random
 * sizes" study (random.c), sizes of any type drawn over the whole range a call may ask. Needs no
 * GPU (tests/test_between.c). */
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

/* The ranges of pm__draw_random: a vector's n log-uniform in [2^PM__DRAW_LOG2_N_MIN,
 * 2^PM__DRAW_LOG2_N_MAX]; a matrix's elements log-uniform in [2^PM__DRAW_LOG2_ELEMS_MIN,
 * 2^PM__DRAW_LOG2_ELEMS_MAX] and its aspect (rows / cols) log-uniform in [1 / PM__DRAW_WIDE,
 * PM__DRAW_WIDE], each side at most PM__DRAW_SIDE_MAX; no buffer (the elements of one input, in
 * the type) of PM__DRAW_MAX_BYTES or more. */
#define PM__DRAW_LOG2_N_MIN 8
#define PM__DRAW_LOG2_N_MAX 28
#define PM__DRAW_LOG2_ELEMS_MIN 12
#define PM__DRAW_LOG2_ELEMS_MAX 28
#define PM__DRAW_WIDE 64.0
#define PM__DRAW_SIDE_MAX 65536u
#define PM__DRAW_MAX_BYTES (2048.0 * 1024 * 1024)

/* Draws a problem of op in element type dtype (one of op->dtypes) from the generator state *s
 * (any value but 0; the same state gives the same problem), over the whole range above: a
 * vector's n, or a matrix's elements and aspect, with rows = round(sqrt(elements * aspect)) and
 * cols = round(elements / rows) (rows kept within [elements / PM__DRAW_SIDE_MAX, PM__DRAW_SIDE_MAX]
 * first, so that neither side passes PM__DRAW_SIDE_MAX: at the extremes the aspect gives way,
 * never the elements); its variant (and radius, for an op with one) uniform among those op
 * allows. A draw whose rows x cols falls outside the elements' range (rounding), whose buffer
 * passes PM__DRAW_MAX_BYTES, or that op's default configuration (op->fallback, caller_align 0:
 * the tuner's own layouts) cannot run is drawn again. Tune sizes are not avoided. Returns 0, or
 * -1 where op does not take dtype or no such problem was found in many tries. */
int pm__draw_random(const pm__op *op, int dtype, uint64_t *s, pm__problem *out);

/* Whether pr's dimensions (rows and cols, or n) are those of one of op->tune_sizes, whatever
 * the variant and radius. */
int pm__draw_is_tuned(const pm__op *op, const pm__problem *pr);

/* The size a problem of op is measured by: rows * cols, or n. */
double pm__draw_size(const pm__op *op, const pm__problem *pr);

#endif /* PM_DRAW_H */
