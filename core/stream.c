/* stream.c: what the hot path asks of a caller's stream (is it being captured, what is its id),
 * through the driver's own entry points where the runtime hands them out: the runtime's
 * cudaStreamIsCapturing and cudaStreamGetId cost about 0.15 us each on an H100, most of it the
 * runtime's bookkeeping around the driver call. The entry points come from
 * cudaGetDriverEntryPointByVersion, so nothing links libcuda; where they cannot be had, or a
 * driver call fails (a thread with no current context), the runtime's calls answer. */
#include <pthread.h>

#include "gpu.h"

typedef int (*is_capturing_fn)(struct CUstream_st *stream, int *status); /* cuStreamIsCapturing */
typedef int (*get_id_fn)(struct CUstream_st *stream, unsigned long long *id); /* cuStreamGetId */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static is_capturing_fn is_capturing;
static get_id_fn get_id;

static void resolve(void) {
  void *f = NULL, *g = NULL;
  enum cudaDriverEntryPointQueryResult q1 = cudaDriverEntryPointSymbolNotFound, q2 = q1;
  if (cudaGetDriverEntryPointByVersion("cuStreamIsCapturing", &f, 12000, cudaEnableDefault, &q1) !=
          cudaSuccess ||
      cudaGetDriverEntryPointByVersion("cuStreamGetId", &g, 12000, cudaEnableDefault, &q2) !=
          cudaSuccess ||
      q1 != cudaDriverEntryPointSuccess || q2 != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return;
  }
  is_capturing = (is_capturing_fn)f;
  get_id = (get_id_fn)g;
}

int pm__stream_state(struct CUstream_st *stream, int *capturing, unsigned long long *id) {
  int st = 0;
  pthread_once(&once, resolve);
  if (is_capturing != NULL && is_capturing(stream, &st) == 0) {
    *capturing = st != 0; /* CU_STREAM_CAPTURE_STATUS_NONE is 0 */
    if (*capturing) return 0;
    if (get_id(stream, id) == 0) return 0;
  }
  enum cudaStreamCaptureStatus rs = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &rs) != cudaSuccess) return cudaGetLastError(), -1;
  if ((*capturing = rs != cudaStreamCaptureStatusNone)) return 0;
  if (cudaStreamGetId(stream, id) != cudaSuccess) return cudaGetLastError(), -1;
  return 0;
}

void pm__capture_relax(int *saved) {
  enum cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
  if (cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess) cudaGetLastError();
  *saved = (int)m;
}

void pm__capture_restore(int saved) {
  enum cudaStreamCaptureMode m = (enum cudaStreamCaptureMode)saved;
  if (cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess) cudaGetLastError();
}
