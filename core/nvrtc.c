/* nvrtc.c: template + defines + target architecture -> NVRTC -> cubin. Needs no GPU. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>

#include "core.h"

/* Check macro for NVRTC calls: on failure, record the error on c, set rc and jump to `fail`.
 * The fault hook may fail the call instead of making it (NVRTC_ERROR_OUT_OF_MEMORY). */
#define PM__NVRTC(c, call)                                                         \
  do {                                                                             \
    nvrtcResult r_ = pm__fault(PM__FAULT_NVRTC, PM__FAULT_SITE) ? NVRTC_ERROR_OUT_OF_MEMORY \
                                                                : (call);         \
    if (r_ != NVRTC_SUCCESS) {                                                     \
      rc = pm__seterr((c), PM_ECOMPILE, "%s:%d: %s: %s", __FILE__, __LINE__, #call, \
                      nvrtcGetErrorString(r_));                                    \
      goto fail;                                                                   \
    }                                                                              \
  } while (0)

#define MAX_DEFINES 64

/* The element types' names, given to every compile as defines: -DPM_F32=0, -DPM_F16=1, ... (made
 * from pmtune.h's PM_DTYPES), so that a source compares PM_DTYPE with a name (#if PM_DTYPE ==
 * PM_F16), not a number. A type's value never changes and a new type only adds a name: what a
 * source compiles to still depends on the source and its own defines alone, so a cubin's key
 * (pm__cubin_key: the source's hash, its defines, the architecture, NVRTC's version) need not
 * hold them. */
#define TYPE_NAME(NAME, value, name, bytes, ctype) "-DPM_" #NAME "=" #value,
static const char *const type_names[] = {PM_DTYPES(TYPE_NAME)};
#undef TYPE_NAME
#define NTYPE_NAMES (sizeof type_names / sizeof *type_names)

const char *pm__nvrtc_version(void) {
  static char buf[32];
  int major = 0, minor = 0;
  if (buf[0] == '\0') {
    nvrtcVersion(&major, &minor);
    snprintf(buf, sizeof buf, "%d.%d", major, minor);
  }
  return buf;
}

int pm__arch_check(pm_ctx *c, const char *arch, int *sm) {
  if (arch == NULL) return pm__seterr(c, PM_EINVAL, "no target architecture given");
  const char *p = arch;
  int v = 0, digits = 0;
  if (strncmp(p, "sm_", 3) == 0)
    for (p += 3; isdigit((unsigned char)*p) && digits < 4; p++, digits++) v = v * 10 + (*p - '0');
  if (digits < 2 || digits > 3 || (*p != '\0' && !((*p == 'a' || *p == 'f') && p[1] == '\0')))
    return pm__seterr(c, PM_EINVAL,
                      "malformed architecture '%s': expected sm_XY (such as sm_80 or sm_90)", arch);

  int n = 0, *archs = NULL, found = 0;
  if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0 &&
      (archs = pm__malloc(sizeof *archs * (size_t)n)) == NULL) /* not "cannot compile for" */
    return pm__seterr(c, PM_ENOMEM, "compile for %s: out of memory", arch);
  if (archs != NULL && nvrtcGetSupportedArchs(archs) == NVRTC_SUCCESS)
    for (int i = 0; i < n; i++) found |= archs[i] == v;
  if (!found) {
    char list[512] = "";
    size_t len = 0;
    for (int i = 0; archs != NULL && i < n && len + 8 < sizeof list; i++)
      len += (size_t)snprintf(list + len, sizeof list - len, "%ssm_%d", i ? " " : "", archs[i]);
    free(archs);
    return pm__seterr(c, PM_EUNSUPPORTED, "NVRTC %s cannot compile for %s; it knows: %s",
                      pm__nvrtc_version(), arch, list);
  }
  free(archs);
  if (sm) *sm = v;
  return PM_OK;
}

/* A define is NAME or NAME=VALUE, NAME an identifier, VALUE without spaces. */
static int valid_define(const char *d) {
  if (d == NULL || !(isalpha((unsigned char)*d) || *d == '_')) return 0;
  for (d++; *d != '\0' && *d != '='; d++)
    if (!(isalnum((unsigned char)*d) || *d == '_')) return 0;
  for (; *d != '\0'; d++)
    if (isspace((unsigned char)*d)) return 0;
  return 1;
}

int pm__compile(pm_ctx *c, const char *name, const char *source, const char *arch,
                const char *const *defines, size_t ndefines, pm__cubin *out) {
  int rc = PM_OK;
  nvrtcProgram prog = NULL;
  char *opts[3 + NTYPE_NAMES + MAX_DEFINES] = {0};
  char *log = NULL;
  size_t nopts = 0, size = 0;

  memset(out, 0, sizeof *out);
  if (name == NULL || source == NULL)
    return pm__seterr(c, PM_EINVAL, "compile: no source given");
  if (ndefines > MAX_DEFINES)
    return pm__seterr(c, PM_EINVAL, "compile: %zu defines, at most %d", ndefines, MAX_DEFINES);
  if ((rc = pm__arch_check(c, arch, NULL)) != PM_OK) return rc;
  for (size_t i = 0; i < ndefines; i++)
    if (!valid_define(defines[i]))
      return pm__seterr(c, PM_EINVAL, "compile: malformed define '%s': expected NAME or NAME=VALUE",
                        defines[i] ? defines[i] : "(null)");

  double t0 = pm__now_ms();
  size_t arglen = strlen(arch) + 8;
  if ((opts[nopts] = pm__malloc(arglen)) == NULL) goto nomem;
  snprintf(opts[nopts++], arglen, "-arch=%s", arch);
  if ((opts[nopts++] = pm__strdup("-std=c++17")) == NULL) goto nomem;
  /* the templates use no textures, surfaces or device runtime: without NVRTC's declarations of
   * them a compile takes a third less time (150 ms instead of 230 for the filter's seed) */
  if ((opts[nopts++] = pm__strdup("-minimal")) == NULL) goto nomem;
  for (size_t i = 0; i < NTYPE_NAMES; i++)
    if ((opts[nopts++] = pm__strdup(type_names[i])) == NULL) goto nomem;
  for (size_t i = 0; i < ndefines; i++) {
    size_t len = strlen(defines[i]) + 3;
    if ((opts[nopts] = pm__malloc(len)) == NULL) goto nomem;
    snprintf(opts[nopts++], len, "-D%s", defines[i]);
  }

  const pm__template *common = pm__template_find(PM__TEMPLATE_COMMON);
  const char *hdr = common ? common->source : "", *hdr_name = PM__TEMPLATE_COMMON_FILE;
  PM__NVRTC(c, nvrtcCreateProgram(&prog, source, name, 1, &hdr, &hdr_name));
  nvrtcResult r = pm__fault(PM__FAULT_NVRTC, PM__FAULT_SITE)
                      ? NVRTC_ERROR_COMPILATION /* an empty log: "(empty log)" */
                      : nvrtcCompileProgram(prog, (int)nopts, (const char *const *)opts);
  if (r != NVRTC_SUCCESS) {
    size_t loglen = 0;
    nvrtcGetProgramLogSize(prog, &loglen);
    if ((log = pm__malloc(loglen + 1)) == NULL) goto nomem;
    log[0] = '\0';
    nvrtcGetProgramLog(prog, log);
    char optline[1024] = "";
    for (size_t i = 0, len = 0; i < nopts && len + 2 < sizeof optline; i++)
      len += (size_t)snprintf(optline + len, sizeof optline - len, " %s", opts[i]);
    rc = pm__seterr(c, PM_ECOMPILE, "nvrtc: %s failed to compile (%s; options:%s):\n%s", name,
                    nvrtcGetErrorString(r), optline, log[0] ? log : "(empty log)\n");
    goto fail;
  }
  PM__NVRTC(c, nvrtcGetCUBINSize(prog, &size));
  if ((out->data = pm__malloc(size)) == NULL) goto nomem;
  PM__NVRTC(c, nvrtcGetCUBIN(prog, out->data));
  out->size = size;
  out->compile_ms = pm__now_ms() - t0;
  goto done;

nomem:
  rc = pm__seterr(c, PM_ENOMEM, "compile: out of memory");
fail:
  free(out->data);
  memset(out, 0, sizeof *out);
done:
  if (prog != NULL) nvrtcDestroyProgram(&prog);
  for (size_t i = 0; i < nopts; i++) free(opts[i]);
  free(log);
  return rc;
}

void pm__cubin_free(pm__cubin *b) {
  if (b == NULL) return;
  free(b->data);
  memset(b, 0, sizeof *b);
}
