/* timer.h: the timing protocol, one copy for the tuner, `pmtune bench` and the peer benchmarks
 * (bench/peers, C++: this header includes no C11-only header and declares C linkage): random
 * inputs from one generator and seed, the L2 flushed by reading before each sample, the GPU
 * held until a sample is queued, K copies of the data per sample, the median. */
#ifndef PM_TIMER_H
#define PM_TIMER_H

#include <stdint.h>

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The seed of the inputs where none is given: the tuner's, bench's and the peers'. */
#define PM__DEFAULT_SEED 0x5eed

/* Uniform floats in [-1, 1) from a seeded xorshift64* (one stream per block of 2^20, so that
 * threads can fill it; the same seed gives the same data): never all zero. */
void pm__random_fill(float *out, size_t n, uint64_t seed);

/* How many copies of a problem moving `bytes` make a timed batch move at least twice the L2
 * cache of c's device (at most 32): amortises the events' cost and resolution over short runs. */
int pm__copies_for(pm_ctx *c, double bytes);

/* Scratch to flush the L2 cache between timed runs (twice its size, zeros, read by pm_flush),
 * events, and the gates that hold the GPU back until a sample's runs are all queued. Made for
 * c's device (which must be current when it is used); *out is NULL on failure. */
typedef struct pm__timer pm__timer;
int pm__timer_new(pm_ctx *c, pm__timer **out);
void pm__timer_free(pm__timer *t); /* NULL: nothing */

/* Keeps the GPU busy (overwriting the flush buffer) for at least ms milliseconds, so that its
 * clocks are up before anything is timed: a GPU just out of idle runs short kernels slower. */
int pm__timer_warm(pm_ctx *c, pm__timer *t, double ms);

/* Takes `samples` samples (<= 64) on pm__tune_stream(), each timed with CUDA events: it flushes L2 by
 * reading a buffer twice its size (no dirty line is left for the runs to write back), holds
 * the GPU until the host has queued the whole sample (short runs would otherwise time the
 * host's launches), then calls run(c, arg, j) for j = 0 .. copies - 1 between two events. A
 * run queues its work on pm__tune_stream() and returns PM_OK or an error, which ends the timing. ms[i]
 * gets sample i's time per run (its time / copies); the caller sorts. */
int pm__time_batches(pm_ctx *c, pm__timer *t, int samples, int copies,
                     int (*run)(pm_ctx *c, void *arg, int j), void *arg, double *ms);

/* The stream the tuner, the timer and the problem data work on in the calling thread: 0, the
 * legacy default stream (`pmtune tune`'s and the benchmarks'), unless this thread set another.
 * The background tuner of a context sets a non-blocking stream of its own, so that its work
 * neither waits for the program's streams nor holds them back, and never meets a capture. */
struct CUstream_st *pm__tune_stream(void);
void pm__tune_stream_set(struct CUstream_st *s);

/* The median, and the spread between the quartiles, of ms[0..n) (sorts it). */
double pm__median(double *ms, int n, double *q1, double *q3);

#ifdef __cplusplus
}
#endif
#endif /* PM_TIMER_H */
