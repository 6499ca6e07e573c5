// The pool behind run_chunks (threads.hpp).
//
// Why not an OpenMP parallel region: its closing barrier waits for every
// member of the team, so a call is as slow as its latest thread.  Next to
// another library's spinning workers (ONNX Runtime's spin for tens of ms
// after each run) a team thread waits a scheduler slice for a core, and a
// 2-thread call of 130 us took 6.7 ms.  Here the caller works through the
// chunks itself and waits only for chunks a helper has claimed.
#include "threads.hpp"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace dnnpool {
namespace {

// A helper keeps looking for the next job this long after its last chunk,
// so back-to-back calls (a model's layers, a benchmark loop) find it awake,
// and then sleeps, so an idle process leaves the cores to others.
constexpr auto kSpin = std::chrono::microseconds(200);
// A ticket is (job generation << 40 | front << 20 | back): the caller claims
// chunks from the front up, helpers from the back down, so on repeated calls
// of one shape each thread takes mostly the same chunks and finds their data
// in its own core's caches (2 threads, against claiming in turn: NXC k3 s1
// 192x28x28 and k2 s2 256x56x56 0.88-0.89, others unchanged).  This front
// marks a job still being set up.
constexpr int kTicketBits = 20;
constexpr uint64_t kTicketMask = (1u << kTicketBits) - 1, kGenMask = (1u << 24) - 1;
constexpr uint64_t kClosed = kTicketMask;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

struct Pool {
    std::mutex busy;            // held by the call that uses the pool
    std::vector<pthread_t> helpers;   // started helpers (under busy)

    std::mutex sleep_mutex;     // helpers sleep on `wake` between jobs
    std::condition_variable wake;
    std::atomic<int> sleepers{0};
    std::atomic<uint32_t> posted{0};   // generation of the latest job

    // The current job.  Its fields change only while no chunk of the
    // previous job is left to claim and the ticket is closed.
    std::atomic<uint64_t> ticket{0};
    std::atomic<int64_t> done{0};
    std::atomic<int> wanted{0};        // helpers 0 .. wanted-1 take part
    std::atomic<ChunkFn> fn{nullptr};
    std::atomic<void *> arg{nullptr};

    // Claims and runs chunks of job `gen` until none is left: from the front
    // (the caller) or from the back (helpers).
    void work(uint32_t gen, bool front) {
        for (;;) {
            uint64_t t = ticket.load(std::memory_order_acquire);
            const uint64_t lo = t >> kTicketBits & kTicketMask, hi = t & kTicketMask;
            if ((t >> 2 * kTicketBits) != (gen & kGenMask) || lo == kClosed || lo >= hi) return;
            const uint64_t claimed = front ? t + ((uint64_t)1 << kTicketBits) : t - 1;
            if (!ticket.compare_exchange_weak(t, claimed, std::memory_order_acq_rel)) continue;
            fn.load(std::memory_order_relaxed)(arg.load(std::memory_order_relaxed), (int64_t)(front ? lo : hi - 1));
            done.fetch_add(1, std::memory_order_release);
        }
    }

    // Waits (spinning, then asleep) for a job newer than `seen`.
    uint32_t next_job(uint32_t seen) {
        const auto until = std::chrono::steady_clock::now() + kSpin;
        for (int n = 1;; ++n) {
            const uint32_t g = posted.load();
            if (g != seen) return g;
            cpu_relax();
            if (n % 64 == 0 && std::chrono::steady_clock::now() > until) {
                std::unique_lock<std::mutex> lock(sleep_mutex);
                sleepers.fetch_add(1);
                wake.wait(lock, [&] { return posted.load() != seen; });
                sleepers.fetch_sub(1);
            }
        }
    }

    void helper(int index, uint32_t seen) {
#ifdef __linux__
        pthread_setname_np(pthread_self(), "dnnpool-helper");   // for top, py-spy, /proc
#endif
        for (;;) {
            seen = next_job(seen);
            if (index < wanted.load(std::memory_order_acquire)) work(seen, false);
        }
    }
};

// Asleep, a helper is woken onto the waker's core (the scheduler's wake
// affinity), where it either waits for the caller or preempts it while the
// other cores idle: on 2 cores, after a 30 ms gap, 8 of 12 two-thread calls
// ran on one core.  So before waking them the caller lets the helpers run
// wherever it may run itself except on its own core (everywhere it may run
// when that is its only core): helpers follow the caller's affinity.
void steer_off_caller_core(const std::vector<pthread_t> &helpers) {
#ifdef __linux__
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) return;
    const int cpu = sched_getcpu();
    if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &mask) && CPU_COUNT(&mask) > 1) CPU_CLR(cpu, &mask);
    for (pthread_t h : helpers) pthread_setaffinity_np(h, sizeof mask, &mask);
#else
    (void)helpers;
#endif
}

// The pool is never destroyed (its helpers block for the life of the
// process); a forked child, which has none of the parent's threads, starts
// a pool of its own.
std::atomic<Pool *> g_pool{nullptr};
std::once_flag g_pool_once;

void reset_in_child() { g_pool.store(new Pool()); }

Pool *pool() {
    std::call_once(g_pool_once, [] {
        g_pool.store(new Pool());
        pthread_atfork(nullptr, nullptr, reset_in_child);
    });
    return g_pool.load();
}

}  // namespace

void run_chunks(int64_t chunks, int helpers, ChunkFn fn, void *arg) {
    Pool *p = helpers > 0 && chunks > 1 && chunks < (int64_t)kClosed ? pool() : nullptr;
    if (!p || !p->busy.try_lock()) {
        for (int64_t i = 0; i < chunks; ++i) fn(arg, i);
        return;
    }
    const uint32_t before = p->posted.load(), gen = before + 1;
    while ((int)p->helpers.size() < helpers) {
        try {
            p->helpers.reserve(p->helpers.size() + 1);   // so push_back cannot throw below
            std::thread t(&Pool::helper, p, (int)p->helpers.size(), before);
            p->helpers.push_back(t.native_handle());   // stays valid: helpers never exit
            t.detach();
        } catch (const std::exception &) {
            break;   // no more threads: the ones started (and the caller) do the work
        }
    }
    const int started = (int)p->helpers.size();
    const uint64_t tag = (uint64_t)(gen & kGenMask) << 2 * kTicketBits;
    p->ticket.store(tag | kClosed << kTicketBits);
    p->fn.store(fn, std::memory_order_relaxed);
    p->arg.store(arg, std::memory_order_relaxed);
    p->wanted.store(helpers < started ? helpers : started, std::memory_order_relaxed);
    p->done.store(0, std::memory_order_relaxed);
    p->ticket.store(tag | (uint64_t)chunks, std::memory_order_release);
    p->posted.store(gen);
    if (p->sleepers.load() > 0) {
        steer_off_caller_core(p->helpers);
        std::lock_guard<std::mutex> lock(p->sleep_mutex);
        p->wake.notify_all();
    }
    p->work(gen, true);
    // Only chunks a running helper has claimed are left.
    for (int n = 0; p->done.load(std::memory_order_acquire) < chunks; ++n) {
        cpu_relax();
        if (n > 4096) std::this_thread::yield();
    }
    p->busy.unlock();
}

}  // namespace dnnpool
