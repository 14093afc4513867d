/* test_space.c: the search spaces as data: numbering, configuration text and JSON, parsing,
 * constraints and problem sizes. No GPU. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compile.h"

static pm_ctx *ctx;
static void open_ctx(void) {
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&ctx, &o), PM_OK);
}
static void close_ctx(void) { pm_close(ctx); }
TestSuite(space, .init = open_ctx, .fini = close_ctx);

static int param_index(const pm__op *op, const char *name) {
  for (int i = 0; i < op->nparams; i++)
    if (strcmp(op->params[i].name, name) == 0) return i;
  cr_assert_fail("%s has no parameter %s", op->name, name);
  return -1;
}

/* pmtune.h's PM_OPS is the op table: each entry in its order, named as its line, serving its
 * pm_op value; pm_op_count and pm_op_name list them. */
Test(space, pm_ops_makes_the_op_table) {
  cr_assert(PM_OP_MATADD == 0 && PM_OP_REDUCE == 1 && PM_OP_FILTER == 2 && PM_OP_ADD == 3,
            "the values programs hold never change");
  int i = 0;
#define CHECK_OP(NAME, value, op)                                                                  \
  cr_assert_eq(pm__ops[i], &pm__op_##op, "%s: entry %d", #op, i);                                  \
  cr_assert_str_eq(pm__op_##op.name, #op);                                                         \
  cr_assert_eq(pm__op_##op.api, PM_OP_##NAME, "%s", #op);                                          \
  cr_assert_eq(pm__op_of(PM_OP_##NAME), &pm__op_##op, "%s", #op);                                  \
  cr_assert_str_eq(pm_op_name(i), #op);                                                            \
  i++;
  PM_OPS(CHECK_OP)
#undef CHECK_OP
  cr_assert_null(pm__ops[i]);
  cr_assert_eq(pm_op_count(), i);
  cr_assert_null(pm_op_name(i));
  cr_assert_null(pm_op_name(-1));
}

Test(space, every_op_has_a_template_and_a_valid_seed) {
  pm__limits lim = pm__limits_default();
  pm__problem pr = {.rows = 4097, .cols = 3001, .n = 1000, .radius = 1};
  int n = 0;
  for (int i = 0; pm__ops[i] != NULL; i++, n++) {
    const pm__op *op = pm__ops[i];
    cr_assert_not_null(pm__template_find(op->name), "%s", op->name);
    cr_assert_eq(pm__op_find(op->name), op);
    cr_assert_null(op->check(op, op->seed, &pr, &lim), "%s seed: %s", op->name,
                   op->check(op, op->seed, &pr, &lim));
    cr_assert(pm__is_seed(op, op->seed));
    cr_assert_leq(op->nparams, PM__MAX_PARAMS);
    for (int p = 0; p < op->nparams; p++) {
      const pm__param *a = &op->params[p];
      cr_assert(a->nvalues >= 1 && a->nvalues <= PM__MAX_VALUES, "%s.%s", op->name, a->name);
      int found = 0;
      for (int k = 0; k < a->nvalues; k++) found |= a->values[k] == op->seed[p];
      cr_assert(found, "%s seed's %s is a value of its axis", op->name, a->name);
    }
  }
#define PM__ONE(NAME, value, name) +1
  cr_assert_eq(n, 0 PM_OPS(PM__ONE), "one entry for each of PM_OPS's lines");
#undef PM__ONE
  cr_assert_null(pm__op_find("util"), "the utility kernels are not an operation");
}

Test(space, points_text_json_and_parse_round_trip) {
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    uint64_t total = pm__space_size(op);
    int distinct_first = 0;
    for (uint64_t k = 0; k < total; k += 13) {
      int v[PM__MAX_PARAMS], back[PM__MAX_PARAMS];
      char text[PM__CONFIG_TEXT], json[PM__CONFIG_TEXT * 2];
      pm__space_point(op, k, v);
      pm__config_text(op, v, text, sizeof text);
      cr_assert_eq(pm__config_parse(ctx, op, text, back), PM_OK, "%s: %s", text, pm_errmsg(ctx));
      cr_assert_eq(memcmp(v, back, sizeof(int) * (size_t)op->nparams), 0, "%s", text);
      pm__config_json(op, v, json, sizeof json);
      cr_assert_eq(json[0], '{');
      cr_assert_eq(json[strlen(json) - 1], '}');
      char needle[40];
      snprintf(needle, sizeof needle, "\"%s\":%d", op->params[0].name, v[0]);
      cr_assert_not_null(strstr(json, needle), "%s", json);
      distinct_first += v[0] != op->params[0].values[0];
    }
    cr_assert_gt(distinct_first, 0, "the numbering reaches more than one value");
  }
}

Test(space, config_parse_rejects_what_is_not_in_the_space) {
  const pm__op *op = &pm__op_matadd;
  int v[PM__MAX_PARAMS];
  const char *bad[] = {"bx=32", /* the rest missing */
                       "bx=33 by=8 vec=4 ept=1 grid=0 map=0 align=0",
                       "bx=32 by=8 vec=4 ept=1 grid=0 map=0 align=0 bx=32",
                       "bx=32 by=8 vec=4 ept=1 grid=0 map=0 align=0 zz=1",
                       "bx=32 by=8 vec=four ept=1 grid=0 map=0 align=0",
                       "bx32 by=8"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    cr_assert_eq(pm__config_parse(ctx, op, bad[i], v), PM_EINVAL, "'%s' was accepted", bad[i]);
  cr_assert_eq(pm__config_parse(ctx, op, "map=1 bx=32 by=8 vec=4 ept=1 grid=0 align=256", v), PM_OK,
               "any order: %s", pm_errmsg(ctx));
  cr_assert_eq(v[param_index(op, "align")], 256);
}

Test(space, defines_skip_host_axes_and_add_the_problem) {
  int v[PM__MAX_PARAMS];
  char defs[PM__MAX_DEFINES][24];
  memcpy(v, pm__op_filter.seed, sizeof v);
  pm__problem pr = {.rows = 10, .cols = 10, .radius = 3};
  int n = pm__config_defines(&pm__op_filter, v, &pr, defs);
  cr_assert_eq(n, pm__op_filter.nparams - 1 + 2, "align is host-side; R and ZERO come from the problem");
  cr_assert_str_eq(defs[n - 2], "R=3");
  cr_assert_str_eq(defs[n - 1], "ZERO=0");
  pr.variant = pm__variant_find(&pm__op_filter, "border", "zero");
  cr_assert_eq(pm__config_defines(&pm__op_filter, v, &pr, defs), n);
  cr_assert_str_eq(defs[n - 1], "ZERO=1");
  for (int i = 0; i < n; i++) cr_assert_null(strstr(defs[i], "align"));
  /* points differing only in the layout share a kernel */
  int w[PM__MAX_PARAMS];
  memcpy(w, v, sizeof w);
  w[param_index(&pm__op_filter, "align")] = 512;
  cr_assert_eq(pm__kernel_index(&pm__op_filter, v), pm__kernel_index(&pm__op_filter, w));
  w[param_index(&pm__op_filter, "ox")] = 4;
  cr_assert_neq(pm__kernel_index(&pm__op_filter, v), pm__kernel_index(&pm__op_filter, w));
}

Test(space, constraints_prune_the_impossible) {
  const pm__op *op = &pm__op_matadd;
  pm__limits lim = pm__limits_default();
  int v[PM__MAX_PARAMS];
  memcpy(v, op->seed, sizeof v);
  v[param_index(op, "bx")] = 1024;
  v[param_index(op, "by")] = 2;
  cr_assert_not_null(op->check(op, v, NULL, &lim), "2048 threads");
  memcpy(v, op->seed, sizeof v);
  v[param_index(op, "vec")] = 4;
  pm__problem odd = {.rows = 10, .cols = 3001};
  cr_assert_not_null(op->check(op, v, &odd, &lim),
                     "packed rows of 3001 floats are not 16-byte aligned");
  v[param_index(op, "align")] = 64;
  cr_assert_null(op->check(op, v, &odd, &lim), "padded to 64 bytes they are");
  pm__problem one_row = {.rows = 1, .cols = 3001};
  v[param_index(op, "align")] = 0;
  cr_assert_null(op->check(op, v, &one_row, &lim), "one line has no pitch to honour");

  const pm__op *r = &pm__op_reduce;
  memcpy(v, r->seed, sizeof v);
  v[param_index(r, "combine")] = 1;
  cr_assert_not_null(r->check(r, v, NULL, &lim), "atomic combine is out by default");
  lim.allow_nondeterministic = 1;
  cr_assert_null(r->check(r, v, NULL, &lim));

  const pm__op *f = &pm__op_filter;
  lim = pm__limits_default();
  memcpy(v, f->seed, sizeof v);
  v[param_index(f, "pad")] = 1;
  cr_assert_not_null(f->check(f, v, NULL, &lim), "padding needs a tile");
  v[param_index(f, "tile")] = 1;
  v[param_index(f, "bx")] = 128;
  v[param_index(f, "by")] = 8;
  v[param_index(f, "ox")] = 4;
  v[param_index(f, "oy")] = 4;
  pm__problem pr = {.rows = 100, .cols = 100, .radius = 3};
  cr_assert_not_null(f->check(f, v, &pr, &lim), "518 x 38 floats of tile exceed 48 KiB");
  lim.max_threads = 256;
  memcpy(v, f->seed, sizeof v);
  cr_assert_null(f->check(f, v, &pr, &lim));
  v[param_index(f, "bx")] = 32;
  cr_assert_not_null(f->check(f, v, &pr, &lim), "a device of 256 threads per block");
}

Test(space, add_vector_width_follows_the_callers_pointers_alone) {
  const pm__op *op = &pm__op_add;
  pm__limits lim = pm__limits_default();
  int v[PM__MAX_PARAMS];
  memcpy(v, op->seed, sizeof v);
  v[param_index(op, "vec")] = 4;
  pm__problem odd = {.n = 4097}; /* the tuner's own buffers: any n, a tail after the float4s */
  cr_assert_null(op->check(op, v, &odd, &lim), "%s", op->check(op, v, &odd, &lim));
  odd.caller_align = 16;
  cr_assert_null(op->check(op, v, &odd, &lim), "16-byte pointers allow float4 at odd n");
  odd.caller_align = 8;
  cr_assert_not_null(op->check(op, v, &odd, &lim), "8-byte pointers do not");
  v[param_index(op, "vec")] = 2;
  cr_assert_null(op->check(op, v, &odd, &lim), "but allow float2");
  odd.caller_align = 4;
  cr_assert_not_null(op->check(op, v, &odd, &lim), "4-byte pointers allow floats alone");
  pm__problem bad[] = {{.n = 0}, {.n = 0x80000000u}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    cr_assert_not_null(op->check(op, op->seed, &bad[i], &lim), "n = %u", bad[i].n);
  pm__problem max = {.n = 0x7fffffffu};
  uint64_t total = pm__space_size(op), valid = 0;
  for (uint64_t i = 0; i < total; i++) {
    pm__space_point(op, i, v);
    valid += op->check(op, v, &max, &lim) == NULL;
  }
  /* vec = 8 is for the 16-bit types alone: 8 floats would be a 32-byte access */
  cr_assert_eq(valid, total / 4 * 3, "every point of at most 16 bytes an access runs n = 2^31 - 1");
  cr_assert_eq(pm__kernel_slots(op), total, "every axis is a define: one kernel a point");
  lim.max_threads = 512;
  v[param_index(op, "block")] = 1024;
  cr_assert_not_null(op->check(op, v, NULL, &lim), "a device of 512 threads per block");
}

Test(space, problem_sizes_parse_or_say_why_not) {
  pm__problem pr = {0};
  cr_assert_eq(pm__problem_parse(ctx, &pm__op_matadd, "4097x3001", &pr), PM_OK);
  cr_assert_eq(pr.rows, 4097);
  cr_assert_eq(pr.cols, 3001);
  cr_assert_eq(pm__problem_parse(ctx, &pm__op_reduce, "2147483647", &pr), PM_OK);
  cr_assert_eq(pr.n, 2147483647u);
  cr_assert_eq(pm__problem_parse(ctx, &pm__op_reduce, "n=1048576", &pr), PM_OK);
  cr_assert_eq(pr.n, 1048576u);
  cr_assert_eq(pm__problem_parse(ctx, &pm__op_reduce, "n=", &pr), PM_EINVAL);
  cr_assert_eq(pm__problem_parse(ctx, &pm__op_reduce, "m=5", &pr), PM_EINVAL);
  const char *bad2d[] = {"", "4097", "4097x", "x3001", "0x5", "5x0", "-1x5", "5x5x5", "5 x5",
                         "99999999999x1", "100000x100000"};
  for (size_t i = 0; i < sizeof bad2d / sizeof *bad2d; i++)
    cr_assert_eq(pm__problem_parse(ctx, &pm__op_filter, bad2d[i], &pr), PM_EINVAL, "'%s'", bad2d[i]);
  pr.radius = 1;
  cr_assert_eq(pm__problem_parse(ctx, &pm__op_filter, "640x480:r3", &pr), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert(pr.rows == 640 && pr.cols == 480 && pr.radius == 3, "a size's own radius");
  cr_assert_eq(pm__problem_parse(ctx, &pm__op_filter, "640x480", &pr), PM_OK);
  cr_assert_eq(pr.radius, 3, "a size without one leaves the radius given");
  const char *badr[] = {"640x480:", "640x480:r", "640x480:r0", "640x480:r4", "640x480:2",
                        "640x480:r2x", "640x480:r-1", "640x480:r 2", "640x480:r2:r3"};
  for (size_t i = 0; i < sizeof badr / sizeof *badr; i++)
    cr_assert_eq(pm__problem_parse(ctx, &pm__op_filter, badr[i], &pr), PM_EINVAL, "'%s'", badr[i]);
  cr_assert_not_null(strstr(pm_errmsg(ctx), ":rR, R from 1 to 3"), "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__problem_parse(ctx, &pm__op_matadd, "640x480:r2", &pr), PM_EINVAL,
               "matadd has no radius");
  const char *bad1d[] = {"0", "2147483648", "-5", "12x4", "1e6", "", "1000:r2"};
  for (size_t i = 0; i < sizeof bad1d / sizeof *bad1d; i++)
    cr_assert_eq(pm__problem_parse(ctx, &pm__op_reduce, bad1d[i], &pr), PM_EINVAL, "'%s'", bad1d[i]);
  cr_assert_not_null(strstr(pm_errmsg(ctx), "from 1 to 2147483647"), "%s", pm_errmsg(ctx));
}

Test(space, variants_cover_every_valid_point_once) {
  pm__limits lim = pm__limits_default();
  pm__problem pr = {.rows = 4097, .cols = 3001, .radius = 2};
  pm__variants vs;
  cr_assert_eq(pm__variants_make(ctx, &pm__op_filter, &pr, &lim, "sm_90", &vs), PM_OK);
  uint64_t total = pm__space_size(&pm__op_filter), valid = 0;
  for (uint64_t i = 0; i < total; i++) {
    int v[PM__MAX_PARAMS];
    pm__space_point(&pm__op_filter, i, v);
    if (pm__op_filter.check(&pm__op_filter, v, &pr, &lim) != NULL) continue;
    valid++;
    pm__compile_job *j = pm__variants_job(&vs, v);
    cr_assert_not_null(j);
    char want[PM__MAX_DEFINES][24];
    int n = pm__config_defines(&pm__op_filter, v, &pr, want);
    cr_assert_eq(n, j->ndefines);
    for (int d = 0; d < n; d++) cr_assert_str_eq(want[d], j->defines[d]);
  }
  cr_assert_gt(valid, vs.n, "host-side axes share kernels");
  cr_assert_gt(vs.n, 100);
  pm__variants_free(&vs);
}

Test(space, the_fallback_is_valid_for_any_problem_and_alignment) {
  pm__limits lim = pm__limits_default();
  const unsigned sizes[][2] = {{1, 1}, {1, 100003}, {100003, 1}, {4097, 3001}, {3, 5}, {8192, 8192}};
  const unsigned aligns[] = {4, 8, 16, 0};
  for (int o = 0; pm__ops[o] != NULL; o++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
      for (size_t a = 0; a < sizeof aligns / sizeof *aligns; a++)
        for (int variant = 0; variant < 2; variant++) {
          pm__problem pr = {.rows = sizes[s][0], .cols = sizes[s][1],
                            .n = sizes[s][0] * sizes[s][1], .radius = 1 + (int)s % 3,
                            .variant = pm__ops[o]->variants[variant] ? variant : 0,
                            .caller_align = aligns[a]};
          int v[PM__MAX_PARAMS];
          pm__ops[o]->fallback(pm__ops[o], &pr, v);
          const char *why = pm__ops[o]->check(pm__ops[o], v, &pr, &lim);
          cr_assert_null(why, "%s %ux%u align %u: %s", pm__ops[o]->name, pr.rows, pr.cols,
                         pr.caller_align, why);
        }
}

/* A point the tuner leaves out launches what its twin does, and the twin is measured: valid, and
 * not left out itself. Reduce's grid cap is a case: at n = 2^20 (256 tiles of 4096 floats on
 * 132 SMs) grid=4 runs one block a tile, as grid=0 does; at 2^24 (4096 tiles) it does not. Its
 * combine is the other: a grid of one block combines nothing. */
Test(space, points_that_launch_alike_are_measured_once) {
  pm__limits lim = pm__limits_default();
  lim.sm_count = 132;
  const unsigned ns[] = {1, 1000, 1u << 20, 1u << 24, 1000003};
  uint64_t left_out = 0;
  for (int o = 0; pm__ops[o] != NULL; o++) {
    const pm__op *op = pm__ops[o];
    for (size_t s = 0; s < sizeof ns / sizeof *ns; s++) {
      pm__problem pr = {.rows = 1 + ns[s] % 4099, .cols = 1 + ns[s] % 3001, .n = ns[s],
                        .radius = op->radius_min};
      for (uint64_t i = 0; i < pm__space_size(op); i++) {
        int v[PM__MAX_PARAMS], twin[PM__MAX_PARAMS];
        pm__space_point(op, i, v);
        if (op->check(op, v, &pr, &lim) != NULL || !pm__same_launch(op, v, &pr, &lim)) continue;
        left_out++;
        cr_assert_not(pm__is_seed(op, v), "%s: the seed is always measured", op->name);
        cr_assert(op->same_launch(op, v, &pr, &lim, twin));
        cr_assert_null(op->check(op, twin, &pr, &lim), "%s: a twin that cannot run", op->name);
        cr_assert_not(pm__same_launch(op, twin, &pr, &lim), "%s: a twin left out", op->name);
      }
    }
  }
  cr_assert_gt(left_out, 0);
  const pm__op *r = pm__op_find("reduce");
  int v[PM__MAX_PARAMS];
  cr_assert_eq(pm__config_parse(ctx, r, "block=512 items=2 vec=4 step=2 combine=3 acc=0 grid=4", v),
               PM_OK);
  pm__problem small = {.n = 1u << 20}, large = {.n = 1u << 24};
  cr_assert(pm__same_launch(r, v, &small, &lim), "at 2^20 grid=4 launches 256 blocks, as grid=0");
  cr_assert_not(pm__same_launch(r, v, &large, &lim), "at 2^24 grid=4 caps 4096 tiles at 528");
  v[param_index(r, "grid")] = 0;
  cr_assert_not(pm__same_launch(r, v, &small, &lim), "grid=0 is the one measured");
  pm__problem one = {.n = 4096}; /* one tile of 512 x 2 x 4: one block, whatever the combine */
  cr_assert(pm__same_launch(r, v, &one, &lim), "one block: combine=3 launches as combine=0");
  v[param_index(r, "combine")] = 2;
  cr_assert(pm__same_launch(r, v, &one, &lim), "one block: combine=2 launches once, as combine=0");
  cr_assert_not(pm__same_launch(r, v, &small, &lim), "256 blocks: combine=2 launches twice");
  v[param_index(r, "combine")] = 0;
  cr_assert_not(pm__same_launch(r, v, &one, &lim), "combine=0 is the one measured");
  cr_assert_not(pm__same_launch(r, v, NULL, &lim), "no problem, no launch to compare");
}

Test(space, point_numbers_round_trip) {
  for (int o = 0; pm__ops[o] != NULL; o++) {
    uint64_t total = pm__space_size(pm__ops[o]);
    for (uint64_t i = 0; i < total; i += 17) {
      int v[PM__MAX_PARAMS];
      pm__space_point(pm__ops[o], i, v);
      cr_assert_eq(pm__space_index(pm__ops[o], v), i, "%s point %llu", pm__ops[o]->name,
                   (unsigned long long)i);
    }
  }
}

Test(space, every_public_op_value_has_its_entry) {
  /* pmtune.h's pm_op values are served through pm__op_of, which looks for the entry whose api
   * field is the value: each value has one, and no two entries claim the same. */
#define PM__VALUE(NAME, value, name) PM_OP_##NAME,
  static const pm_op values[] = {PM_OPS(PM__VALUE)};
#undef PM__VALUE
  for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
    const pm__op *op = pm__op_of(values[i]);
    cr_assert_not_null(op, "pm_op %d has no entry", (int)values[i]);
    cr_assert_eq(op->api, values[i]);
  }
  int n = 0;
  for (int i = 0; pm__ops[i] != NULL; i++, n++)
    for (int j = 0; j < i; j++) cr_assert_neq(pm__ops[i]->api, pm__ops[j]->api, "%s and %s", pm__ops[i]->name, pm__ops[j]->name);
  cr_assert_eq(n, (int)(sizeof values / sizeof *values), "an entry that no pm_op value serves");
  cr_assert_null(pm__op_of((pm_op)99));
}

Test(space, the_database_knows_each_op_from_its_entry) {
  const pm__db_op *const *db = pm__ops_db();
  int i = 0;
  for (; pm__ops[i] != NULL; i++) {
    cr_assert_not_null(db[i]);
    cr_assert_str_eq(db[i]->name, pm__ops[i]->name);
    cr_assert_eq(db[i]->matrix, pm__ops[i]->dims == 2);
    cr_assert_eq(db[i]->radius_max, pm__ops[i]->radius_max);
    cr_assert_gt(pm__ops[i]->ntune_sizes, 0, "%s has no default sizes", pm__ops[i]->name);
    for (int k = 0; k < pm__ops[i]->ntune_sizes; k++) {
      const pm__problem *pr = &pm__ops[i]->tune_sizes[k];
      cr_assert_not_null(db[i]->variants[pr->variant], "%s: default size %d", pm__ops[i]->name, k);
      cr_assert_str_eq(db[i]->variants[pr->variant], pm__variant_text(pm__ops[i], pr));
    }
  }
  cr_assert_null(db[i], "the database's list ends where the ops do");
}

Test(space, public_enums_are_the_variants_indexes) {
  /* the library calls take pm_order and pm_border as the problem's variant index */
  cr_assert_eq(pm__variant_find(&pm__op_matadd, "order", "row"), PM_ROW_MAJOR);
  cr_assert_eq(pm__variant_find(&pm__op_matadd, "order", "col"), PM_COL_MAJOR);
  cr_assert_eq(pm__variant_find(&pm__op_filter, "border", "clamp"), PM_BORDER_CLAMP);
  cr_assert_eq(pm__variant_find(&pm__op_filter, "border", "zero"), PM_BORDER_ZERO);
  cr_assert_eq(pm__variant_find(&pm__op_filter, "order", "col"), -1, "filter has no order");
  cr_assert_eq(pm__variant_find(&pm__op_matadd, "order", "diagonal"), -2);
  cr_assert_eq(pm__variant_index(&pm__op_matadd, "order=col"), PM_COL_MAJOR);
}

/* The grid results/ ships: every size within a factor 2 in elements of a grid size, a matrix
 * also within a factor 2 in aspect, up to 64 either way (from 512 elements, where a side of 8
 * allows aspect 16, and from 4,096 for aspects past 16; to 2^27, below the largest matrices,
 * square alone); every size in every variant, radius and type; no buffer over the limit. */
Test(space, the_grid_lies_within_a_factor_2_of_every_size) {
  static pm__problem g[4096];
  const double slack = log(2.0) + 1e-9;
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    {
      int n = pm__op_grid(op, ~0u, g, 4096);
      cr_assert(n > 0 && n < 4096, "%s: %d sizes", op->name, n);
      int nvariants = 0, nradii = op->radius_max > 0 ? op->radius_max - op->radius_min + 1 : 1;
      while (nvariants < 3 && op->variants[nvariants] != NULL) nvariants++;
      cr_assert_eq(n % (nvariants * nradii), 0, "%s: each size in every variant and radius", op->name);
      for (int k = 0; k < n; k++) {
        double elems = op->dims == 1 ? g[k].n : (double)g[k].rows * g[k].cols;
        cr_assert(elems * pm_dtype_size((pm_dtype)g[k].dtype) <= PM__GRID_MAX_BYTES, "%s", op->name);
        cr_assert(op->dtypes & 1u << g[k].dtype);
      }
      for (int t = 0; t < PM__NDTYPES; t++) {
        if (!(op->dtypes & 1u << t)) continue;
        double top = log(PM__GRID_MAX_BYTES / pm_dtype_size((pm_dtype)t));
        for (double le = log(op->dims == 1 ? 1 : 512); le <= log(1 << 27) && le <= top; le += 0.05) {
          for (double la = op->dims == 1 ? 0 : -log(64); la <= (op->dims == 1 ? 0 : log(64)) + 1e-9;
               la += 0.1) {
            if (fabs(la) > log(16) + 1e-9 && le < log(4096)) continue; /* a side under 8 */
            int near = 0;
            for (int k = 0; k < n && !near; k++) {
              if (g[k].dtype != t) continue;
              double ge = op->dims == 1 ? log(g[k].n) : log((double)g[k].rows * g[k].cols);
              double ga = op->dims == 1 ? 0 : log((double)g[k].rows / g[k].cols);
              near = fabs(ge - le) <= slack && fabs(ga - la) <= slack;
            }
            cr_assert(near, "%s %s: no grid size within a factor 2 of e^%.2f elements, aspect e^%.2f",
                      op->name, pm_dtype_name((pm_dtype)t), le, la);
          }
        }
      }
    }
  }
}

/* A vector's grid also has odd sizes, from which db/known.c decides the unround sizes programs
 * use: every n from 3 to the largest odd one lies between two odd grid sizes at most a factor 4
 * apart, in every type; and the odd ones are odd, never a power of two's neighbour twice. */
Test(space, a_vectors_grid_has_odd_sizes_a_factor_2_apart) {
  static pm__problem g[4096];
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    if (op->dims != 1) continue;
    int n = pm__op_grid(op, ~0u, g, 4096);
    for (int t = 0; t < PM__NDTYPES; t++) {
      if (!(op->dtypes & 1u << t)) continue;
      unsigned odd[64];
      int nodd = 0;
      for (int k = 0; k < n; k++)
        if (g[k].dtype == t && g[k].n % 2 == 1 && g[k].n > 1) odd[nodd++] = g[k].n;
      cr_assert_geq(nodd, 25, "%s %s: %d odd sizes", op->name, pm_dtype_name((pm_dtype)t), nodd);
      cr_assert_eq(odd[0], 3u);
      for (int j = 1; j < nodd; j++) {
        cr_assert_gt(odd[j], odd[j - 1]);
        cr_assert_leq(odd[j], 2u * odd[j - 1] + 1, "%s: %u after %u", op->name, odd[j], odd[j - 1]);
        cr_assert_neq(odd[j] & (odd[j] - 1), 0u, "%u", odd[j]);
      }
      cr_assert_geq(odd[nodd - 1] * (double)pm_dtype_size((pm_dtype)t), PM__GRID_MAX_BYTES / 2,
                    "%s %s: up to %u", op->name, pm_dtype_name((pm_dtype)t), odd[nodd - 1]);
    }
  }
}

/* Whether g[0, n) holds t (its size, type, variant and radius); fits says it should. */
static void expect_in_grid(const pm__op *op, const pm__problem *g, int n, pm__problem t,
                           const char *what, unsigned r, unsigned c) {
  int fits = (double)t.rows * t.cols * pm_dtype_size((pm_dtype)t.dtype) <= PM__GRID_MAX_BYTES;
  int found = 0;
  for (int j = 0; j < n && !found; j++)
    found = g[j].rows == t.rows && g[j].cols == t.cols && g[j].dtype == t.dtype &&
            g[j].variant == t.variant && g[j].radius == t.radius;
  cr_assert_eq(found, fits, "%s %s %ux%u: %s %ux%u %s", op->name,
               pm_dtype_name((pm_dtype)t.dtype), r, c, what, t.rows, t.cols,
               fits ? "missing" : "over the limit, yet there");
}

/* A matrix's grid has, for each round size 2^r x 2^c whose buffer fits, its unround twin
 * pm__grid_odd(r) x pm__grid_odd(c) (odd sides, twice the elements, the same aspect), from which
 * db/known.c decides the unround sizes programs use; and, in an op with an order (matadd), its
 * even twin, the contiguous side pm__grid_even (2 mod 4) and the other odd, from which it decides
 * those of an even contiguous side; a twin whose buffer would not fit is left out. */
Test(space, a_matrix_grid_has_the_unround_twins_of_each_round_size) {
  static pm__problem g[8192];
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    if (op->dims != 2) continue;
    int by_cols = pm__variant_find(op, "order", "col"), evens = by_cols >= 0;
    int n = pm__op_grid(op, ~0u, g, 8192), round = 0, twins = 0, even = 0;
    cr_assert(n > 0 && n < 4096, "%s: %d", op->name, n);
    for (int k = 0; k < n; k++) {
      unsigned r = g[k].rows, c = g[k].cols;
      if (r & (r - 1) || c & (c - 1)) {
        unsigned inner = g[k].variant == by_cols ? r : c, outer = g[k].variant == by_cols ? c : r;
        if (r % 2 == 1 && c % 2 == 1) twins++;
        else {
          cr_assert(evens && inner % 4 == 2 && outer % 2 == 1, "%s %s: %ux%u neither round, odd "
                    "nor an even twin", op->name, op->variants[g[k].variant], r, c);
          even++;
        }
        continue;
      }
      round++;
      int lr = 0, lc = 0;
      while ((1u << lr) < r) lr++;
      while ((1u << lc) < c) lc++;
      pm__problem t = g[k];
      t.rows = pm__grid_odd(lr), t.cols = pm__grid_odd(lc);
      expect_in_grid(op, g, n, t, "twin", r, c);
      if (!evens) continue;
      if (g[k].variant == by_cols) t.rows = pm__grid_even(lr);
      else t.cols = pm__grid_even(lc);
      expect_in_grid(op, g, n, t, "even twin", r, c);
    }
    cr_assert_gt(twins, round * 9 / 10, "%s: %d twins of %d round sizes", op->name, twins, round);
    cr_assert(evens ? even == twins : even == 0, "%s: %d even twins, %d twins", op->name, even, twins);
  }
}
