/* fuzz_config_parse.c: libFuzzer harness for the configuration parser, pm__config_parse
 * (tuner/space.c), over every op: a configuration it takes has every parameter once, each a value
 * of its table, and its own text reads back to the same point. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pm_ctx *c = fuzz_ctx();
  char *s = fuzz_text(data, size), text[PM__CONFIG_TEXT], json[2 * PM__CONFIG_TEXT];
  char defines[PM__MAX_DEFINES][24];
  pm__limits lim = pm__limits_default();
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    int v[PM__MAX_PARAMS] = {0}, back[PM__MAX_PARAMS] = {0};
    int rc = pm__config_parse(c, op, s, v);
    if (rc != PM_OK) {
      FUZZ_CHECK(rc == PM_EINVAL, "%s: status %d", op->name, rc);
      FUZZ_CHECK(pm_errmsg(c)[0] != '\0', "%s: no message", op->name);
      FUZZ_CHECK(pm__config_parse(NULL, op, s, v) == rc, "%s: another answer without a context",
                 op->name);
      continue;
    }
    for (int k = 0; k < op->nparams; k++) {
      int found = 0;
      for (int j = 0; j < op->params[k].nvalues; j++) found |= op->params[k].values[j] == v[k];
      FUZZ_CHECK(found, "%s: %s=%d is not in its table", op->name, op->params[k].name, v[k]);
    }
    pm__config_text(op, v, text, sizeof text);
    FUZZ_CHECK(pm__config_parse(c, op, text, back) == PM_OK, "%s: '%s' does not read back: %s",
               op->name, text, pm_errmsg(c));
    FUZZ_CHECK(memcmp(v, back, sizeof v) == 0, "%s: '%s' reads back otherwise", op->name, text);
    uint64_t index = pm__space_index(op, v);
    FUZZ_CHECK(index < pm__space_size(op), "%s: index %llu", op->name, (unsigned long long)index);
    pm__space_point(op, index, back);
    FUZZ_CHECK(memcmp(v, back, sizeof v) == 0, "%s: point %llu is another", op->name,
               (unsigned long long)index);
    pm__config_json(op, v, json, sizeof json);
    FUZZ_CHECK(json[0] == '{' && json[strlen(json) - 1] == '}', "%s: JSON %s", op->name, json);
    pm__problem pr = {.rows = 4096, .cols = 4096, .n = 1 << 20, .radius = op->radius_max};
    int n = pm__config_defines(op, v, &pr, defines);
    FUZZ_CHECK(n >= 0 && n <= PM__MAX_DEFINES, "%s: %d defines", op->name, n);
    (void)op->check(op, v, &pr, &lim); /* a reason or NULL: it must only not fail */
  }
  free(s);
  return 0;
}
