/* test_nvrtc.c: the compile path (template + defines + arch -> NVRTC -> cubin), with no GPU. */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "op.h"

static pm_ctx *ctx;

static void open_ctx(void) {
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&ctx, &o), PM_OK);
}
static void close_ctx(void) { pm_close(ctx); }

TestSuite(nvrtc, .init = open_ctx, .fini = close_ctx);

static void assert_elf(const pm__cubin *b) {
  cr_assert_gt(b->size, 64);
  cr_assert_eq(memcmp(b->data, "\177ELF", 4), 0, "a cubin is an ELF file");
  cr_assert_gt(b->compile_ms, 0.0);
}

Test(nvrtc, matadd_compiles_for_sm80_and_sm90) {
  const pm__template *t = pm__template_find("matadd");
  cr_assert_not_null(t);
  const char *archs[] = {"sm_80", "sm_90"};
  for (int i = 0; i < 2; i++) {
    pm__cubin b;
    int rc = pm__compile(ctx, t->file, t->source, archs[i], NULL, 0, &b);
    cr_assert_eq(rc, PM_OK, "%s: %s", archs[i], pm_errmsg(ctx));
    assert_elf(&b);
    pm__cubin_free(&b);
  }
}

Test(nvrtc, defines_reach_the_source) {
  const char *src =
      "#ifndef WIDTH\n#error WIDTH is not defined\n#endif\n"
      "static_assert(WIDTH == 4, \"WIDTH must be 4\");\n"
      "extern \"C\" __global__ void k(float *p) { p[threadIdx.x] = WIDTH; }\n";
  pm__cubin b;
  cr_assert_eq(pm__compile(ctx, "needs.cu", src, "sm_90", NULL, 0, &b), PM_ECOMPILE);
  cr_assert_not_null(strstr(pm_errmsg(ctx), "WIDTH is not defined"), "%s", pm_errmsg(ctx));
  const char *wrong[] = {"WIDTH=3"};
  cr_assert_eq(pm__compile(ctx, "needs.cu", src, "sm_90", wrong, 1, &b), PM_ECOMPILE);
  cr_assert_not_null(strstr(pm_errmsg(ctx), "WIDTH must be 4"), "%s", pm_errmsg(ctx));
  const char *right[] = {"WIDTH=4", "UNUSED"};
  cr_assert_eq(pm__compile(ctx, "needs.cu", src, "sm_90", right, 2, &b), PM_OK, "%s",
               pm_errmsg(ctx));
  assert_elf(&b);
  pm__cubin_free(&b);
}

Test(nvrtc, a_compile_error_keeps_the_whole_log) {
  const char *src =
      "extern \"C\" __global__ void k(float *p) {\n"
      "  p[0] = undefined_one;\n"
      "  p[1] = undefined_two;\n"
      "}\n";
  pm__cubin b;
  cr_assert_eq(pm__compile(ctx, "broken.cu", src, "sm_90", NULL, 0, &b), PM_ECOMPILE);
  const char *m = pm_errmsg(ctx);
  cr_assert_not_null(strstr(m, "broken.cu(2): error"), "%s", m);
  cr_assert_not_null(strstr(m, "undefined_one"), "%s", m);
  cr_assert_not_null(strstr(m, "undefined_two"), "the second error is kept too: %s", m);
  cr_assert_null(b.data);
  cr_assert_eq(b.size, 0);
}

Test(nvrtc, architectures_are_checked) {
  int sm = 0;
  cr_assert_eq(pm__arch_check(ctx, "sm_90", &sm), PM_OK);
  cr_assert_eq(sm, 90);
  cr_assert_eq(pm__arch_check(ctx, "sm_90a", &sm), PM_OK, "%s", pm_errmsg(ctx));
  const char *malformed[] = {"sm90", "90", "sm_", "sm_9", "sm_90x", "compute_90", "", "sm_9000"};
  for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
    cr_assert_eq(pm__arch_check(ctx, malformed[i], NULL), PM_EINVAL, "'%s'", malformed[i]);
    cr_assert_not_null(strstr(pm_errmsg(ctx), "malformed"), "%s", pm_errmsg(ctx));
  }
  cr_assert_eq(pm__arch_check(ctx, "sm_20", NULL), PM_EUNSUPPORTED);
  cr_assert_not_null(strstr(pm_errmsg(ctx), "sm_90"), "lists what NVRTC knows: %s",
                     pm_errmsg(ctx));
  cr_assert_eq(pm__arch_check(ctx, NULL, NULL), PM_EINVAL);
  pm__cubin b;
  cr_assert_eq(pm__compile(ctx, "x.cu", "", "sm_2", NULL, 0, &b), PM_EINVAL);
}

Test(nvrtc, malformed_defines_are_refused_before_nvrtc) {
  const pm__template *t = pm__template_find("matadd");
  const char *bad[][1] = {{"1X=2"}, {"A B"}, {"X=1 -arch=sm_50"}, {""}, {"=3"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    pm__cubin b;
    cr_assert_eq(pm__compile(ctx, t->file, t->source, "sm_90", bad[i], 1, &b), PM_EINVAL, "'%s'",
                 bad[i][0]);
  }
  const char *null_define[] = {NULL};
  pm__cubin b;
  cr_assert_eq(pm__compile(ctx, t->file, t->source, "sm_90", null_define, 1, &b), PM_EINVAL);
  cr_assert_eq(pm__compile(ctx, t->file, NULL, "sm_90", NULL, 0, &b), PM_EINVAL);
}

Test(nvrtc, embedded_templates_match_their_files) {
  int n = 0;
  for (const pm__template *t = pm__templates; t->name != NULL; t++, n++) {
    char path[512];
    snprintf(path, sizeof path, "%s/templates/%s", PM_SOURCE_DIR, t->file);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    static char buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    cr_assert_eq(len, t->length, "%s", t->file);
    cr_assert_eq(memcmp(buf, t->source, len), 0, "%s", t->file);
    cr_assert_eq(t->source[t->length], '\0');
    cr_assert_eq(strlen(t->sha256), 64);
    char expect[64];
    snprintf(expect, sizeof expect, "%s.cu%s", t->name,
             strcmp(t->name, PM__TEMPLATE_COMMON) == 0 ? "h" : "");
    cr_assert_str_eq(t->file, expect);
  }
  cr_assert_geq(n, 1);
  cr_assert_not_null(pm__template_find(PM__TEMPLATE_COMMON), "the templates' shared header");
  cr_assert_null(pm__template_find("no-such-op"));
  cr_assert_null(pm__template_find(NULL));
}

Test(nvrtc, utility_kernels_compile_without_a_gpu) {
  const pm__template *t = pm__template_find("util");
  cr_assert_not_null(t, "templates/util.cu is embedded");
  const char *arch[] = {"sm_80", "sm_90"};
  for (int i = 0; i < 2; i++) {
    pm__cubin b;
    cr_assert_eq(pm__compile(ctx, t->file, t->source, arch[i], NULL, 0, &b), PM_OK, "%s: %s",
                 arch[i], pm_errmsg(ctx));
    /* both entries the tuner loads are in the cubin's symbol table */
    cr_assert_not_null(memmem(b.data, b.size, "pm_compare", 10), "%s", arch[i]);
    cr_assert_not_null(memmem(b.data, b.size, "pm_flush", 8), "%s", arch[i]);
    pm__cubin_free(&b);
  }
}

Test(nvrtc, templates_include_the_shared_header) {
  /* Every operation's template includes it, and a source that includes it compiles without a
   * file of that name on disk: pm__compile hands it to NVRTC. */
  const char *src = "#include \"pm_common.cuh\"\n"
                    "extern \"C\" __global__ void k(float *p) { wait_prior(); vec_of<4>::t v = {}; p[0] = v.x; }\n";
  pm__cubin b;
  cr_assert_eq(pm__compile(ctx, "k.cu", src, "sm_90", NULL, 0, &b), PM_OK, "%s", pm_errmsg(ctx));
  pm__cubin_free(&b);
  for (int i = 0; pm__ops[i] != NULL; i++)
    cr_assert_not_null(strstr(pm__template_find(pm__ops[i]->name)->source,
                              "#include \"pm_common.cuh\""), "%s", pm__ops[i]->name);
}

Test(nvrtc, every_compile_names_the_element_types) {
  /* PM_F32, PM_F16, ... are defined to pm_dtype's values in every compile (core/nvrtc.c), each
   * checked here against the C enum; and the templates compare PM_DTYPE with the names alone */
  char src[2048];
  size_t len = 0;
#define CHECK_NAME(NAME, value, name, bytes, ctype)                                          \
  len += (size_t)snprintf(src + len, sizeof src - len,                                       \
                          "static_assert(PM_" #NAME " == %d, \"PM_" #NAME " is %d\");\n",    \
                          (int)PM_##NAME, (int)PM_##NAME);
  PM_DTYPES(CHECK_NAME)
#undef CHECK_NAME
  snprintf(src + len, sizeof src - len,
           "extern \"C\" __global__ void k(int *p) { p[0] = PM_F64; }\n");
  pm__cubin b;
  cr_assert_eq(pm__compile(ctx, "names.cu", src, "sm_90", NULL, 0, &b), PM_OK, "%s",
               pm_errmsg(ctx));
  pm__cubin_free(&b);
  for (const pm__template *t = pm__templates; t->name != NULL; t++)
    for (const char *p = t->source; (p = strstr(p, "PM_DTYPE")) != NULL; p++) {
      const char *q = p + 8;
      while (*q == ' ' || *q == '=' || *q == '!') q++;
      cr_expect(!(*q >= '0' && *q <= '9'), "%s compares PM_DTYPE with a number: %.24s", t->file,
                p);
    }
}

Test(nvrtc, the_launch_contract_is_read_from_the_cubins_symbols) {
  /* every operation's cubin defines pm_waits_prior (pm_common.cuh); the tuner's utility kernels
   * do not; nothing that is not a whole ELF image is taken for one that does */
  const char *const archs[] = {"sm_80", "sm_90"};
  for (int a = 0; a < 2; a++) {
    for (int i = 0; pm__ops[i] != NULL; i++) {
      const pm__template *t = pm__template_find(pm__ops[i]->name);
      pm__cubin b;
      cr_assert_eq(pm__compile(ctx, t->file, t->source, archs[a], NULL, 0, &b), PM_OK, "%s",
                   pm_errmsg(ctx));
      cr_expect(pm__cubin_has_symbol(&b, "pm_waits_prior"), "%s %s", t->name, archs[a]);
      cr_expect_not(pm__cubin_has_symbol(&b, "pm_waits"), "a prefix is not the name");
      cr_expect_not(pm__cubin_has_symbol(&b, "pm_waits_prior_"), "nor a longer one");
      cr_expect(pm__cubin_has_symbol(&b, pm__ops[i]->entries[0]), "its kernel %s",
                pm__ops[i]->entries[0]);
      /* every truncation of the image: no crash, no read past its end (run under valgrind or
       * ASan to see the latter) */
      size_t whole = b.size;
      for (size_t cut = 0; cut < whole; cut += 1 + cut / 16) {
        b.size = cut;
        pm__cubin_has_symbol(&b, "pm_waits_prior");
      }
      b.size = whole;
      ((unsigned char *)b.data)[4] = 1; /* ELFCLASS32: not ours */
      cr_expect_not(pm__cubin_has_symbol(&b, "pm_waits_prior"));
      pm__cubin_free(&b);
    }
    const pm__template *u = pm__template_find("util");
    pm__cubin b;
    cr_assert_eq(pm__compile(ctx, u->file, u->source, archs[a], NULL, 0, &b), PM_OK);
    cr_expect_not(pm__cubin_has_symbol(&b, "pm_waits_prior"), "util.cu makes no such promise");
    cr_expect(pm__cubin_has_symbol(&b, "pm_flush"));
    pm__cubin_free(&b);
  }
  cr_expect_not(pm__cubin_has_symbol(NULL, "pm_waits_prior"));
  pm__cubin none = {0};
  cr_expect_not(pm__cubin_has_symbol(&none, "pm_waits_prior"));
}
