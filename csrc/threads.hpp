// Internal: the thread pool that runs a call's work in chunks.
#ifndef DNNPOOL_THREADS_HPP
#define DNNPOOL_THREADS_HPP

#include <cstdint>

namespace dnnpool {

// Runs fn(arg, i) for every chunk i in [0, chunks) on the calling thread and
// up to `helpers` pool threads, each taking the next unclaimed chunk (the
// caller from the front, helpers from the back); returns
// once every chunk is done.  The caller never waits for a helper that has not
// started: a helper whose core is taken (another library's spinning workers,
// another process) finds the chunks gone when it wakes, and the call costs at
// most the caller's own time for all of them.  One call uses the pool at a
// time; a concurrent call (another Python thread, a caller's own parallel
// loop) runs its chunks on its own thread.
typedef void (*ChunkFn)(void *arg, int64_t chunk);
void run_chunks(int64_t chunks, int helpers, ChunkFn fn, void *arg);

}  // namespace dnnpool
#endif
