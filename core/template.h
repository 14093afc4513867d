/* template.h: the kernel templates embedded at build time (templates/NAME.cu) and their lookup. */
#ifndef PM_TEMPLATE_H
#define PM_TEMPLATE_H

#include <stddef.h>

typedef struct pm__template {
  const char *name;   /* "matadd": the operation, and the kernel's entry point is "pm_" name */
  const char *file;   /* "matadd.cu": the name NVRTC reports errors under */
  const char *source; /* the file's bytes, NUL-terminated */
  size_t length;      /* bytes, not counting the NUL */
  const char *sha256; /* hex digest of the file's content */
} pm__template;

/* The generated table, ended by an entry whose name is NULL. */
extern const pm__template pm__templates[];

/* The header every template includes (templates/pm_common.cuh): its name in the table, and the
 * file name it is included by. pm__compile hands it to NVRTC; the hash of every other template
 * covers it. */
#define PM__TEMPLATE_COMMON "pm_common"
#define PM__TEMPLATE_COMMON_FILE "pm_common.cuh"

/* The template of that name, or NULL. */
const pm__template *pm__template_find(const char *name);

#endif /* PM_TEMPLATE_H */
