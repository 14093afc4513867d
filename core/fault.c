/* fault.c: the fault hook that tests install to make chosen CUDA, NVRTC and SQLite calls fail. */
#include <stddef.h>

#include "fault.h"

static pm__fault_fn hook;
static void *hook_arg;

void pm__fault_set(pm__fault_fn fn, void *arg) {
  hook_arg = arg;
  hook = fn;
}

int pm__fault(pm__fault_kind kind, const char *site) {
  return hook != NULL && hook(hook_arg, kind, site);
}
