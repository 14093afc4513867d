/* study.h: what the serving studies (between.c, random.c) share: timing two configurations of
 * one problem against each other (each verified, then alternating rounds of a few samples each in
 * one run, so that drift hits both alike; needs a GPU), their JSON strings, their --ops list. */
#ifndef PM_STUDY_H
#define PM_STUDY_H

#include <stdio.h>

#include "tune.h"

#define PM__STUDY_MAX_ROUNDS 64
#define PM__STUDY_BATCH 3 /* samples of each per round, back to back, as the tuner's re-timing */

/* The kernel of point v on pr, loaded into k: its cubin from the first of dbs[0, ndbs) (NULLs
 * skipped) that has it (a tuning compiled and stored it), else compiled now. */
int pm__study_load(pm_ctx *c, int driver, pm__db *const *dbs, int ndbs, const pm__op *op,
                  const int *v, const pm__problem *pr, pm__module *k);

/* Times a against b on pr, whose inputs and reference da holds (prepared by the caller; placed
 * here in a's layout, b's data in a copy of its own): each run once and verified, then after
 * 200 ms of GPU work and a batch of each not counted, `rounds` rounds of PM__STUDY_BATCH samples
 * of each, the order alternating round by round; the medians into *ms_a and *ms_b. */
int pm__study_time(pm_ctx *c, pm__timer *tm, int rounds, int driver, pm__db *const *dbs, int ndbs,
                  const pm__op *op, const pm__problem *pr, pm__data *da, const int *a,
                  const int *b, double *ms_a, double *ms_b);

/* "key":"value" with value escaped as a JSON string. */
void pm__study_json_str(FILE *f, const char *key, const char *value);

/* The ops of "a,b" (every built-in op where list is NULL) into ops[0, *n) (at most PM__MAX_OPS);
 * -1 where a name is no op's or the list names none. */
int pm__study_parse_ops(const char *list, const pm__op **ops, int *n);

/* "f32,bf16" as a mask of types (bit t for pm_dtype t); 0 where a name is unknown. */
unsigned pm__study_parse_dtypes(const char *list);

#endif /* PM_STUDY_H */
