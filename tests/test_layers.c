/* test_layers.c: the layers' includes point one way (ARCHITECTURE.md): core <- db <- tuner <-
 * runtime <- tools, include/ for all, and db/ includes no CUDA header. The build enforces the
 * same with each layer's include path; this test names the file and line that breaks it. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const layers[] = {"core", "db", "tuner", "runtime", "tools", NULL};

/* Whether file `name` exists in include/ or in one of the layers 0..upto. */
static int visible(const char *name, int upto) {
  char path[1024];
  snprintf(path, sizeof path, "%s/include/%s", PM_SOURCE_DIR, name);
  if (access(path, F_OK) == 0) return 1;
  for (int i = 0; i <= upto; i++) {
    snprintf(path, sizeof path, "%s/%s/%s", PM_SOURCE_DIR, layers[i], name);
    if (access(path, F_OK) == 0) return 1;
  }
  return 0;
}

/* The layer that holds file `name`, or -1 (a system header, a generated file). */
static int layer_of(const char *name) {
  char path[1024];
  for (int i = 0; layers[i] != NULL; i++) {
    snprintf(path, sizeof path, "%s/%s/%s", PM_SOURCE_DIR, layers[i], name);
    if (access(path, F_OK) == 0) return i;
  }
  return -1;
}

/* Checks every #include of one source file of layer `self`; returns how many it checked. */
static int check_file(int self, const char *file) {
  char path[1024], line[1024];
  snprintf(path, sizeof path, "%s/%s/%s", PM_SOURCE_DIR, layers[self], file);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  int n = 0;
  for (int no = 1; fgets(line, sizeof line, f) != NULL; no++) {
    char name[256];
    if (sscanf(line, " # include \"%255[^\"]\"", name) == 1) {
      int at = layer_of(name);
      cr_expect(visible(name, self), "%s/%s:%d includes \"%s\", of %s: a layer above %s",
                layers[self], file, no, name, at >= 0 ? layers[at] : "no layer", layers[self]);
      cr_expect(strcmp(layers[self], "db") != 0 || strcmp(name, "gpu.h") != 0,
                "db/%s:%d includes gpu.h: the database layer has no CUDA header", file, no);
      n++;
    }
    if (strcmp(layers[self], "db") == 0 && sscanf(line, " # include <%255[^>]>", name) == 1)
      cr_expect(strncmp(name, "cuda", 4) != 0 && strncmp(name, "nvrtc", 5) != 0,
                "db/%s:%d includes <%s>: the database layer has no CUDA header", file, no, name);
  }
  fclose(f);
  return n;
}

Test(layers, every_include_points_down) {
  int files = 0, includes = 0;
  for (int i = 0; layers[i] != NULL; i++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", PM_SOURCE_DIR, layers[i]);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      size_t len = strlen(e->d_name);
      if (len < 3 || (strcmp(e->d_name + len - 2, ".c") != 0 && strcmp(e->d_name + len - 2, ".h") != 0))
        continue;
      includes += check_file(i, e->d_name);
      files++;
    }
    closedir(d);
  }
  cr_assert_gt(files, 20, "only %d source files found under %s", files, PM_SOURCE_DIR);
  cr_assert_gt(includes, 20);
}

Test(layers, a_file_that_includes_upward_is_caught) {
  /* the check itself: tuner/tune.h seen from core/ must not be visible */
  cr_assert_not(visible("tune.h", 0), "core sees the tuner's header");
  cr_assert(visible("tune.h", 2));
  cr_assert(visible("pmtune.h", 0), "include/ is everyone's");
  cr_assert_not(visible("serve.h", 2), "the tuner sees the runtime's header");
}
