/* fuzz_problem_parse.c: libFuzzer harness for the size parser, pm__problem_parse (tuner/space.c),
 * over every op: a size it takes is in range and reads back the same from its own text. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pm_ctx *c = fuzz_ctx();
  char *s = fuzz_text(data, size), again[64], text[128];
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    pm__problem pr = {0}, back = {0};
    int rc = pm__problem_parse(c, op, s, &pr);
    if (rc != PM_OK) {
      FUZZ_CHECK(rc == PM_EINVAL, "%s: status %d", op->name, rc);
      FUZZ_CHECK(pm_errmsg(c)[0] != '\0', "%s: no message", op->name);
      continue;
    }
    if (op->dims == 1) {
      FUZZ_CHECK(pr.n >= 1 && pr.n <= 0x7fffffffu, "%s: n=%u", op->name, pr.n);
      snprintf(again, sizeof again, "%u", pr.n);
    } else {
      FUZZ_CHECK(pr.rows >= 1 && pr.rows <= 0x7fffffffu && pr.cols >= 1 &&
                     pr.cols <= 0x7fffffffu && (uint64_t)pr.rows * pr.cols <= (1ull << 32),
                 "%s: %ux%u", op->name, pr.rows, pr.cols);
      snprintf(again, sizeof again, "%ux%u", pr.rows, pr.cols);
    }
    FUZZ_CHECK(pm__problem_parse(c, op, again, &back) == PM_OK, "%s: '%s' does not read back",
               op->name, again);
    FUZZ_CHECK(back.rows == pr.rows && back.cols == pr.cols && back.n == pr.n,
               "%s: '%s' reads back otherwise", op->name, again);
    pm__problem_text(op, &pr, text, sizeof text);
    FUZZ_CHECK(text[0] != '\0', "%s: no text", op->name);
  }
  free(s);
  return 0;
}
