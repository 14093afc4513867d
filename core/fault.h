/* fault.h: the fault hook (SQLite's sqlite3FaultSim is the model): every CUDA, NVRTC and SQLite
 * call that goes through a check macro asks it first, so that tests can make the Nth call of a
 * kind fail, with no GPU and no broken disk, and see that the error path holds. */
#ifndef PM_FAULT_H
#define PM_FAULT_H

typedef enum pm__fault_kind {
  PM__FAULT_CUDA,   /* a CUDA runtime call (PM__CUDA, kernel loading and launching) */
  PM__FAULT_NVRTC,  /* an NVRTC call, compiling included */
  PM__FAULT_SQLITE, /* an SQLite call (PM__SQLITE, PM__SQLITE_ST) */
  PM__FAULT_KINDS
} pm__fault_kind;

/* The hook: returns nonzero to make this call fail. site is "file:line" of the call. */
typedef int (*pm__fault_fn)(void *arg, pm__fault_kind kind, const char *site);

/* Installs fn (NULL: none, the default) for the whole process. For tests: not thread-safe
 * against calls running meanwhile. */
void pm__fault_set(pm__fault_fn fn, void *arg);

/* Whether the call at site should fail: asks the hook where there is one; 0 otherwise. */
int pm__fault(pm__fault_kind kind, const char *site);

#define PM__FAULT_STR2(x) #x
#define PM__FAULT_STR(x) PM__FAULT_STR2(x)
#define PM__FAULT_SITE __FILE__ ":" PM__FAULT_STR(__LINE__)

#endif /* PM_FAULT_H */
