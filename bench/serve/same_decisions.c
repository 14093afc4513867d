/* same_decisions.c: whether two folders of shipped results decide alike, with no GPU: a fake
 * device named as the documents' GPU model, random problems of every op and type drawn as the
 * random-sizes study draws them (draw.h), and the configuration each folder's documents serve
 * (pm__serve_decide, an empty database beside them) compared. For a change to the shipped
 * documents that should serve the same (results/compact.py): prints each difference and a count.
 * Usage: pmtune_same_decisions DIR_A DIR_B [--count N] [--seed S] [--gpu NAME] [--sms N] [--print]
 * (defaults: 200 problems an op and type, seed 1, "NVIDIA H100 80GB HBM3", 132). --print prints
 * every decision of DIR_A too (two builds' decisions compared: diff their outputs). Exit 0 where
 * every decision is the same, 1 where one differs, 2 on bad arguments or an error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "draw.h"
#include "runtime.h"
#include "serve.h"

/* A context on a fake device named gpu, with an empty database in the folder tmp (the results
 * it decides from are those PMTUNE_RESULTS names at its first decision). */
static pm_ctx *open_ctx(const char *tmp, const char *gpu, int sms) {
  pm_ctx *c = NULL;
  pm_options o = {0};
  char db[512];
  snprintf(db, sizeof db, "%s/empty.db", tmp);
  if (pm__ctx_create(&c, PM_DEVICE_NONE, db) != PM_OK) return NULL;
  memset(&c->dev, 0, sizeof c->dev);
  snprintf(c->dev.uuid, sizeof c->dev.uuid, "GPU-00000000-0000-0000-0000-000000000000");
  snprintf(c->dev.name, sizeof c->dev.name, "%s", gpu);
  c->dev.cc_major = 9, c->dev.cc_minor = 0, c->dev.sm_count = sms;
  snprintf(c->dev.arch, sizeof c->dev.arch, "sm_90");
  c->dev.mem_bytes = (size_t)80 << 30, c->dev.max_threads_per_block = 1024;
  if (pm__serve_init(c, &o) != PM_OK) {
    pm__ctx_free(c);
    return NULL;
  }
  return c;
}

int main(int argc, char **argv) {
  const char *gpu = "NVIDIA H100 80GB HBM3";
  int count = 200, sms = 132, print = 0;
  unsigned long long seed = 1;
  if (argc < 3) goto usage;
  for (int i = 3; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--print") == 0) {
      print = 1;
      continue;
    }
    if (v == NULL) goto usage;
    if (strcmp(a, "--count") == 0) count = atoi(v);
    else if (strcmp(a, "--seed") == 0) seed = strtoull(v, NULL, 0);
    else if (strcmp(a, "--gpu") == 0) gpu = v;
    else if (strcmp(a, "--sms") == 0) sms = atoi(v);
    else goto usage;
    i++;
  }
  if (count < 1 || seed == 0 || sms < 1) goto usage;
  char tmp[] = "/tmp/pmtune-same-XXXXXX";
  if (mkdtemp(tmp) == NULL) {
    perror("same_decisions: mkdtemp");
    return 2;
  }
  pm_ctx *a = open_ctx(tmp, gpu, sms), *b = open_ctx(tmp, gpu, sms);
  if (a == NULL || b == NULL) {
    fprintf(stderr, "same_decisions: cannot open a context\n");
    return 2;
  }
  int total = 0, differ = 0, failed = 0;
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    for (int t = 0; t < PM__NDTYPES; t++) {
      if (!(op->dtypes & 1u << t)) continue;
      uint64_t s = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)(i * PM__NDTYPES + t) + 1;
      for (int k = 0; k < count; k++) {
        pm__problem pr;
        pm__decision da, db;
        char text[96];
        if (pm__draw_random(op, t, &s, &pr) != 0) break;
        pr.caller_align = 16;
        pm__problem_text(op, &pr, text, sizeof text);
        total++;
        /* each folder's documents are read into its context once, on its first decision */
        if (total == 1) setenv("PMTUNE_RESULTS", argv[1], 1);
        int ra = pm__serve_decide(a, op, &pr, &da);
        if (total == 1) setenv("PMTUNE_RESULTS", argv[2], 1);
        int rb = pm__serve_decide(b, op, &pr, &db);
        if (ra != PM_OK || rb != PM_OK) {
          failed++;
          printf("failed %s %s: %s\n", op->name, text, pm_errmsg(ra != PM_OK ? a : b));
        } else if (strcmp(da.config, db.config) != 0 || da.source != db.source) {
          differ++;
          printf("differs %s %s: %s (%s) against %s (%s)\n", op->name, text, da.config,
                 pm__decision_kind(&da), db.config, pm__decision_kind(&db));
        }
        if (print && ra == PM_OK) printf("%s %s: %s (%s)\n", op->name, text, da.config,
                                         pm__decision_kind(&da));
      }
    }
  }
  printf("%d problems (%d an op and type, seed %llu, %s): %d decided differently, %d failed\n",
         total, count, seed, gpu, differ, failed);
  pm__serve_free(a), pm__ctx_free(a), pm__serve_free(b), pm__ctx_free(b);
  char db[512];
  snprintf(db, sizeof db, "%s/empty.db", tmp);
  unlink(db), rmdir(tmp);
  return differ || failed ? 1 : 0;
usage:
  fprintf(stderr, "usage: pmtune_same_decisions DIR_A DIR_B [--count N] [--seed S] [--gpu NAME] "
                  "[--sms N] [--print]\n");
  return 2;
}
