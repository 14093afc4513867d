/* twins.c: prints the unround twins of the matrix grid (pm__op_grid's sizes whose sides are both
 * odd), one line per op, type and variant: "OP TYPE VARIANT --size RxC[:rR] ...", for twins.sh.
 * Built here against the build's static library:
 *   cc -std=c11 -D_GNU_SOURCE -Ituner -Icore -Idb -Iinclude twins.c build/libpmtune.a (and its
 *   libraries: cudart_static, nvrtc, nettle, sqlite3, z) > twins.txt */
#include <stdio.h>
#include <string.h>

#include "op.h"

int main(void) {
  static pm__problem g[8192];
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    if (op->dims != 2) continue;
    int n = pm__op_grid(op, ~0u, g, 8192);
    for (int t = 0; t < 4; t++)
      for (int v = 0; v < 3 && op->variants[v] != NULL; v++) {
        int any = 0;
        for (int k = 0; k < n; k++) {
          const pm__problem *p = &g[k];
          if (p->dtype != t || p->variant != v || p->rows % 2 == 0 || p->cols % 2 == 0) continue;
          if (!any) printf("%s %s %s", op->name, pm_dtype_name((pm_dtype)t), op->variant_names[v]);
          any = 1;
          if (op->radius_max > 0) printf(" --size %ux%u:r%d", p->rows, p->cols, p->radius);
          else printf(" --size %ux%u", p->rows, p->cols);
        }
        if (any) printf("\n");
      }
  }
  return 0;
}
