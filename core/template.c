/* template.c: looks up the kernel templates that the build embedded into the library. */
#include <string.h>

#include "template.h"

const pm__template *pm__template_find(const char *name) {
  if (name == NULL) return NULL;
  for (const pm__template *t = pm__templates; t->name != NULL; t++)
    if (strcmp(t->name, name) == 0) return t;
  return NULL;
}
