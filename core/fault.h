/* fault.h: the fault hook (SQLite's sqlite3FaultSim is the model): every CUDA, NVRTC and SQLite
 * call that goes through a check macro, and every allocation of the library (core.h's pm__malloc
 * and its kin), asks it first, so that tests can make the Nth call of a kind fail, with no GPU,
 * no broken disk and no exhausted memory, and see that the error path holds. */
#ifndef PM_FAULT_H
#define PM_FAULT_H

typedef enum pm__fault_kind {
  PM__FAULT_CUDA,   /* a CUDA runtime call (PM__CUDA, kernel loading and launching) */
  PM__FAULT_NVRTC,  /* an NVRTC call, compiling included */
  PM__FAULT_SQLITE, /* an SQLite call (PM__SQLITE, PM__SQLITE_ST) */
  PM__FAULT_MALLOC, /* an allocation of the library (pm__malloc, pm__calloc, pm__realloc,
                       pm__strdup): it returns NULL */
  PM__FAULT_KINDS
} pm__fault_kind;

/* The hook: returns nonzero to make this call fail. site is "file:line" of the call. */
typedef int (*pm__fault_fn)(void *arg, pm__fault_kind kind, const char *site);

/* Installs fn (NULL: none, the default) for the whole process. For tests: not thread-safe
 * against calls running meanwhile. */
void pm__fault_set(pm__fault_fn fn, void *arg);

/* The hook installed (NULL: none) and its argument: read only through pm__fault. */
extern pm__fault_fn pm__fault_hook;
extern void *pm__fault_arg;

/* Whether the call at site should fail: asks the hook where there is one; 0 otherwise. Inline:
 * without a hook it costs one test of a pointer, on every path that asks (allocations too). */
static inline int pm__fault(pm__fault_kind kind, const char *site) {
  return pm__fault_hook != NULL && pm__fault_hook(pm__fault_arg, kind, site);
}

#define PM__FAULT_STR2(x) #x
#define PM__FAULT_STR(x) PM__FAULT_STR2(x)
#define PM__FAULT_SITE __FILE__ ":" PM__FAULT_STR(__LINE__)

#endif /* PM_FAULT_H */
