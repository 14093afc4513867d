/* decide.c: the decision chain, the one place that says what a call of an op on a problem runs on
 * a device: the winner tuned for exactly that size, else (between two tuned sizes) the
 * configuration measured at both that interpolates best, else the winner at the nearest tuned size
 * (each only among configurations the caller's buffers allow, and never one predicted slower
 * than the op's default where that was measured too), from the user's database or the results
 * shipped for the GPU's model, whichever answers better; else the op's built-in default.
 * A call's slow path and `pmtune explain` both decide here; tuning on first use is a step the
 * slow path takes between two runs of the chain (serve.c). Needs no GPU. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "serve.h"

const char *pm__source_name(pm__source s) {
  static const char *const names[] = {"exact", "nearest", "tuned", "default"};
  return (unsigned)s < 4 ? names[s] : "?";
}

const char *pm__decision_kind(const pm__decision *d) {
  return d->source == PM__FROM_NEAREST && d->between ? "between" : pm__source_name(d->source);
}

/* What accept needs to judge a stored configuration; v receives the last one it parsed. */
typedef struct accept_arg {
  const pm__device_info *dev;
  const pm__op *op;
  const pm__problem *pr;
  int v[PM__MAX_PARAMS];
} accept_arg;

/* Takes a stored configuration that parses and runs on this problem, on this device, with the
 * caller's buffers (a vector width their alignment allows). */
static int accept(void *arg, const char *config) {
  accept_arg *a = arg;
  pm__limits lim = pm__limits_of(a->dev);
  return pm__config_parse(NULL, a->op, config, a->v) == PM_OK &&
         a->op->check(a->op, a->v, a->pr, &lim) == NULL;
}

/* Whether a stored configuration takes the same code path on the problem asked as on the tuned
 * size `at` (op->regime; an op without one has one path). */
static int alike(void *arg, const char *config, const pm__db_problem *at) {
  accept_arg *a = arg;
  pm__limits lim = pm__limits_of(a->dev);
  pm__problem there = *a->pr;
  int v[PM__MAX_PARAMS] = {0};
  if (pm__config_parse(NULL, a->op, config, v) != PM_OK) return 0;
  there.rows = (unsigned)at->rows, there.cols = (unsigned)at->cols, there.n = (unsigned)at->n;
  return a->op->regime(a->op, v, a->pr, &lim) == a->op->regime(a->op, v, &there, &lim);
}

static pm__source from_winner(const pm__db_winner *w, const accept_arg *a, pm__source source,
                              pm__decision *out) {
  out->source = source;
  memcpy(out->v, a->v, sizeof out->v);
  pm__copy_text(out->config, sizeof out->config, w->config);
  out->tuned_rows = (unsigned)w->rows, out->tuned_cols = (unsigned)w->cols;
  out->tuned_n = (unsigned)w->n;
  out->median_ms = w->median_ms, out->gbps = w->gbps, out->speedup = w->speedup;
  out->distance = w->distance;
  out->between = w->between, out->weight = w->weight;
  out->other_rows = (unsigned)w->other_rows, out->other_cols = (unsigned)w->other_cols;
  out->other_n = (unsigned)w->other_n;
  out->predicted_ms = w->predicted_ms, out->default_ms = w->default_ms;
  out->guarded = w->guarded;
  return source;
}

/* How good a decision from what is known is: exact 0, between two tuned sizes 1, nearest 2. */
static int rank_of(const pm__decision *d) {
  return d->source == PM__FROM_EXACT ? 0 : d->between ? 1 : 2;
}

/* How far the sizes d was decided from lie from pr: the distance in (ln elements, ln aspect) to
 * its tuned size plus, between two, to the other; of two answers between tuned sizes the one
 * whose sizes lie nearer predicts better (a fleet's or the shipped grid's dense sizes before a
 * default tuning's few). */
static double far_from(const pm__op *op, const pm__problem *pr, unsigned rows, unsigned cols,
                       unsigned n) {
  if (op->dims == 1) return fabs(log(((double)n + 1) / ((double)pr->n + 1)));
  double b = op->dims == 3 ? (double)n : 1, pb = op->dims == 3 ? (double)pr->n : 1; /* batches */
  double de = log(((double)rows * cols * b + 1) / ((double)pr->rows * pr->cols * pb + 1));
  double da = log(((double)rows + 1) / (cols + 1) * ((double)pr->cols + 1) / (pr->rows + 1));
  return sqrt(de * de + da * da);
}

static double spread(const pm__op *op, const pm__problem *pr, const pm__decision *d) {
  return far_from(op, pr, d->tuned_rows, d->tuned_cols, d->tuned_n) +
         (d->between ? far_from(op, pr, d->other_rows, d->other_cols, d->other_n) : 0);
}

/* What `known` says of pr (exact, between or nearest); PM_ENOTFOUND where nothing fits, with
 * out->why saying why where `why` is set (the nearest lookup run again for its message: only
 * explain asks). */
static int from_known(pm_ctx *c, const pm__db_known *known, const pm__op *op,
                      const pm__problem *pr, int why, pm__decision *out) {
  pm__db_problem dbp;
  pm__db_winner w;
  accept_arg a = {&known->dev, op, pr, {0}};
  int exact, v[PM__MAX_PARAMS] = {0};
  char dflt[PM__CONFIG_TEXT];
  op->fallback(op, pr, v); /* what serves where nothing is known: never predicted worse */
  pm__config_text(op, v, dflt, sizeof dflt);
  pm__op_db_problem(op, pr, &dbp);
  if (pm__db_known_find_if(known, &dbp, accept, op->regime != NULL ? alike : NULL, &a, dflt, &w,
                           &exact) == PM_OK) {
    accept(&a, w.config); /* a->v: the configuration found (the default, where it served) */
    from_winner(&w, &a, exact ? PM__FROM_EXACT : PM__FROM_NEAREST, out);
    return PM_OK;
  }
  if (why && pm__db_known_nearest_if(known, &dbp, accept, &a, &w) != PM_OK)
    snprintf(out->why, sizeof out->why, "%s", pm_errmsg(c));
  return PM_ENOTFOUND;
}

static pm__source from_default(const pm__op *op, const pm__problem *pr, pm__decision *out) {
  out->source = PM__FROM_DEFAULT;
  op->fallback(op, pr, out->v);
  pm__config_text(op, out->v, out->config, sizeof out->config);
  return PM__FROM_DEFAULT;
}

/* Why there is no database: the context's first fallback notice (which says why it could not be
 * opened), copied under the context's lock. */
static void why_no_db(pm_ctx *c, char *why, size_t cap) {
  pthread_mutex_lock(&c->lock);
  snprintf(why, cap, "%s", c->notice != NULL ? c->notice : "no database");
  pthread_mutex_unlock(&c->lock);
}

/* The chain; out->why is written only where `why` is set (it says why the user's database had
 * nothing: the shipped results are a fallback the default's reason does not mention). The user's
 * database and the shipped results are asked alike, and the better answer serves: exact before
 * between two tuned sizes before nearest; on a tie the user's database, but for two nearest
 * answers the one whose tuned size lies nearer, and for two between answers the one whose two
 * sizes lie nearer (spread). */
static pm__source decide(pm_ctx *c, const pm__db_known *known, const pm__db_known *shipped,
                         const pm__op *op, const pm__problem *pr, int why, pm__decision *out) {
  pm__decision d;
  int mine = PM_ENOTFOUND;
  memset(out, 0, sizeof *out);
  if (known == NULL) {
    if (why) why_no_db(c, out->why, sizeof out->why);
  } else {
    mine = from_known(c, known, op, pr, why, out);
  }
  if (shipped != NULL && (mine != PM_OK || rank_of(out) > 0)) {
    memset(&d, 0, sizeof d);
    if (from_known(c, shipped, op, pr, 0, &d) == PM_OK &&
        (mine != PM_OK || rank_of(&d) < rank_of(out) ||
         (rank_of(&d) == 2 && rank_of(out) == 2 && d.distance < out->distance - 1e-9) ||
         (rank_of(&d) == 1 && rank_of(out) == 1 &&
          spread(op, pr, &d) < spread(op, pr, out) - 1e-9))) {
      *out = d;
      out->shipped = 1;
      return out->source;
    }
  }
  if (mine == PM_OK) return out->source;
  return from_default(op, pr, out);
}

pm__source pm__decide(pm_ctx *c, const pm__db_known *known, const pm__db_known *shipped,
                      const pm__op *op, const pm__problem *pr, pm__decision *out) {
  return decide(c, known, shipped, op, pr, 1, out);
}

pm__source pm__decide_quiet(pm_ctx *c, const pm__db_known *known, const pm__db_known *shipped,
                            const pm__op *op, const pm__problem *pr, pm__decision *out) {
  return decide(c, known, shipped, op, pr, 0, out);
}
