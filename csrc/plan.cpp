// Planning (window tables, kernel choice) and the execution driver.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <unistd.h>

#include "copy.hpp"
#include "dnnpool.h"
#include "isa.hpp"
#include "threads.hpp"

using namespace dnnpool;

namespace {
struct ChannelBlocks;
struct RowSegments;

// What choosing and describing a kernel reads: the problem and its axis
// tables (a channel block's NXC problem is one of these too).
struct Problem {
    dp_desc desc;
    int kind;                       // dnnpool::Kind
    int isa;                        // dnnpool::Isa
    AxisPlan ax[kAxes];             // depth, height, width (right-aligned)
    int64_t taps;                   // kernel volume: work per output element
};
}

struct dp_plan : Problem {
    int64_t *tables;                // one allocation behind every AxisPlan array
    ExecCtx ctx;                    // plan_ctx: what a call's context takes from the plan
    int64_t alone_floor;            // ctx.prefetch_floor of one-lane separable passes on one thread
    ChannelBlocks *blocks;          // NCX pooled by channel blocks (channel_blocks_pay), or null
    bool copies;                    // single_tap_windows: calls without indices are copies
    RowSegments *segments;          // channel-block rows split along W (plan_row_segments), or null
};

namespace {

std::atomic<int> g_num_threads{0};   // 0: follow OpenMP (OMP_NUM_THREADS, threadpoolctl)

// Below this many tap-visits a problem runs on the calling thread: waking
// the pool's helpers costs more than it saves.
constexpr int64_t kMinParallelWork = 1 << 15;
// Chunks per thread of a parallel call: enough that a thread which starts
// late (its core busy) leaves its share to the others.
constexpr int64_t kChunksPerThread = 4;

int detect_isa() {
    int isa = kBaseline;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c") &&
        __builtin_cpu_supports("bmi2"))
        isa = kAvx2;
    if (isa == kAvx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        isa = kAvx512;
    if (isa == kAvx512 && __builtin_cpu_supports("avx512bf16")) isa = kAvx512Bf16;
#endif
    // DNNPOOL_ISA caps the choice, or asks for the AVX-512 kernels emulated on
    // AVX2 (for testing every variant on one machine).
    const char *cap = std::getenv("DNNPOOL_ISA");
    if (cap && !std::strcmp(cap, "avx512-emulated")) return isa >= kAvx2 ? kAvx512Emulated : isa;
    if (cap) {
        int want = !std::strcmp(cap, "baseline") ? kBaseline
                   : !std::strcmp(cap, "avx2")   ? kAvx2
                   : !std::strcmp(cap, "avx512") ? kAvx512
                                                 : kAvx512Bf16;
        if (want < isa) isa = want;
    }
    return isa;
}

// Whether this is an Intel core, where the memory system rewards other
// choices than an AMD Zen 4's.  Non-temporal stores pay for outputs past the
// private caches there (kUncachedMinBytes): on an AMD Zen 4 they took
// 1.1-1.6x the time of ordinary stores (the 1-D k4 s4 average over 256
// channels at batch 8 and 32, f32 and f16, VGG's k2 s2 maxima over 128
// channels at batch 8 and 32; 1 and 2 threads), where an Intel Xeon took
// 0.77-0.92 (see UncachedRow).  And pair_rows' order (pair_ordered_floor_bytes),
// and the planes channel blocks move (block_plane_limit_bytes).
bool cpu_is_intel() {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_is("intel");
#else
    return false;
#endif
}

// A byte count from the environment variable `name`: false when it is
// unset or not a whole number >= 0.
bool env_bytes(const char *name, int64_t *bytes) {
    const char *env = std::getenv(name);
    if (!env) return false;
    char *end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end == env || *end != '\0' || v < 0) return false;
    *bytes = (int64_t)v;
    return true;
}

// A size threshold in bytes: the environment variable `name` when it holds
// one, else `intel` on Intel cores and `other` elsewhere (cpu_is_intel).
int64_t vendor_bytes(const char *name, int64_t intel, int64_t other) {
    int64_t bytes;
    if (env_bytes(name, &bytes)) return bytes;
    static const bool is_intel = cpu_is_intel();
    return is_intel ? intel : other;
}

// The last-level cache's size in bytes, 0 when the C library does not say.
int64_t last_level_cache_bytes() {
#ifdef _SC_LEVEL3_CACHE_SIZE
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0) return l3;
#endif
    return 0;
}

int cpu_isa() {
    static const int isa = detect_isa();
    return isa;
}

// Logical (N, C, D, H, W) strides from strides in data_format order.
void to_logical(const dp_desc &d, const int64_t *fmt, int64_t out[5]) {
    const int r = d.ndims;
    out[0] = fmt[0];
    out[1] = d.format == DP_NCX ? fmt[1] : fmt[r + 1];
    const int64_t *sp = d.format == DP_NCX ? fmt + 2 : fmt + 1;
    for (int a = 0; a < kAxes; ++a) {
        const int i = a - (kAxes - r);   // spatial index in the descriptor, or < 0 for a unit axis
        out[2 + a] = i >= 0 ? sp[i] : 0;
    }
}

// Dense row-major strides, in data_format order, of a tensor with these dims.
void dense_strides(const dp_desc &d, const int64_t *spatial, int64_t out[DP_MAX_SPATIAL + 2]) {
    const int r = d.ndims;
    int64_t dims[DP_MAX_SPATIAL + 2];
    dims[0] = d.batch;
    if (d.format == DP_NCX) {
        dims[1] = d.channels;
        for (int i = 0; i < r; ++i) dims[2 + i] = spatial[i];
    } else {
        for (int i = 0; i < r; ++i) dims[1 + i] = spatial[i];
        dims[r + 1] = d.channels;
    }
    int64_t s = 1;
    for (int i = r + 1; i >= 0; --i) {
        out[i] = s;
        s *= dims[i];
    }
}

// Values of the MaxPool indices: flat positions in src's dense logical shape;
// column-major order transposes only the spatial block.
void index_strides(const dp_desc &d, int64_t out[5]) {
    int64_t dense[DP_MAX_SPATIAL + 2];
    dense_strides(d, d.src_spatial, dense);
    to_logical(d, dense, out);
    if (d.index_order == DP_COL_MAJOR) {
        int64_t s = d.format == DP_NCX ? 1 : d.channels;
        for (int i = 0; i < d.ndims; ++i) {
            out[2 + (kAxes - d.ndims) + i] = s;
            s *= d.src_spatial[i];
        }
    }
}

void build_axis(const dp_desc &d, int a, AxisPlan *ax, int64_t **cursor) {
    const int i = a - (kAxes - d.ndims);
    const bool real = i >= 0;
    ax->in = real ? d.src_spatial[i] : 1;
    ax->out = real ? d.dst_spatial[i] : 1;
    ax->k = real ? d.kernel[i] : 1;
    ax->s = real ? d.strides[i] : 1;
    ax->d = real ? d.dilations[i] : 1;
    ax->pb = real ? d.resolved_pads_begin[i] : 0;
    const int64_t pe = real ? d.resolved_pads_end[i] : 0;
    ax->kbeg = *cursor; *cursor += ax->out;
    ax->kend = *cursor; *cursor += ax->out;
    ax->div = *cursor; *cursor += ax->out;
    ax->olo = *cursor; *cursor += ax->k;
    ax->ohi = *cursor; *cursor += ax->k;
    for (int64_t o = 0; o < ax->out; ++o) {
        const int64_t start = o * ax->s - ax->pb;
        tap_range(start, ax->in, ax->k, ax->d, &ax->kbeg[o], &ax->kend[o]);
        int64_t div;
        if (d.kind == DP_MAX) {
            div = 1;
        } else if (d.exclude_pad) {
            div = ax->kend[o] - ax->kbeg[o];
        } else if (d.pad_divisor == DP_DIV_PADDED_EXTENT) {
            int64_t b, e;
            tap_range(start + ax->pb, ax->in + ax->pb + pe, ax->k, ax->d, &b, &e);
            div = e - b;
        } else {
            div = ax->k;
        }
        ax->div[o] = div;
    }
    // Outputs that see tap k inside the input: 0 <= o*s - pb + k*d < in.
    for (int64_t k = 0; k < ax->k; ++k) {
        const int64_t off = k * ax->d - ax->pb;
        int64_t lo = off >= 0 ? 0 : (-off + ax->s - 1) / ax->s;
        int64_t hi = (ax->in - 1 - off) < 0 ? 0 : (ax->in - 1 - off) / ax->s + 1;
        if (hi > ax->out) hi = ax->out;
        if (lo > hi) lo = hi;
        ax->olo[k] = lo;
        ax->ohi[k] = hi;
    }
}

// The window of every output covers its whole plane (one output per plane)
// and the plane is dense in src: a plain reduction per (n, c).
bool global_plane(const Problem &p, const int64_t ss[5]) {
    int64_t expect = 1;
    for (int a = kAxes - 1; a >= 0; --a) {
        const AxisPlan &ax = p.ax[a];
        if (ax.out != 1 || ax.d != 1 || ax.kend[0] - ax.kbeg[0] != ax.in) return false;
        if (ax.in > 1 && ss[2 + a] != expect) return false;
        expect *= ax.in;
    }
    return true;
}

// Channel-block rows (n, od, oh) too few to share among threads (batch-1
// 1-D rows, short 2-D outputs) split along W into segments of output
// points, each (row, segment) a task of its own.  A segment is the row's
// problem over outputs [ow0, ow1): its W axis starts at the first input
// column they read (no padding before it), its window tables are the row's
// from ow0 on.  The segments depend on the problem alone, never on the
// thread count, so every count computes the same segments to the same bits
// (the kernels' row paths depend on the outputs they see).
struct RowSegments {
    int64_t count;
    int64_t *ow0;          // [count] first output point
    int64_t *iw0;          // [count] first input column
    AxisPlan *ax;          // [count][kAxes] the segments' axes
    int64_t *tables;       // one allocation behind ow0, iw0 and the axes' olo / ohi tables
};
// Rows under kSegTasks split into kSegTasks tasks or more, in segments of
// kSegMinPoints points or more and of kSegMinWork tap-visits times the rows
// or more (more rows already give the threads work to share).  Measured
// (Intel Xeon, 40 random NXC problems of 1-4 rows, f32, 1 and 2 threads;
// 1-D unless named): a batch-1 row took 0.23-0.67 of its whole time at 2
// threads (k3 s1 over 1000 x 64, 12 us: 0.57) and the same at 1; rows of 4
// split into 8 tasks, and pairs of rows of 5-10 us split into 4, lost
// 5-25% at 2 threads (more tasks, no better balance).
constexpr int64_t kSegTasks = 4, kSegMinPoints = 16, kSegMinWork = 2 * kMinParallelWork;
int64_t row_segment_count(const dp_plan &p) {
    const dp_desc &d = p.desc;
    const int64_t rows = d.batch * p.ax[0].out * p.ax[1].out, OW = p.ax[2].out;
    const int64_t work = dp_desc_dst_size(&d) * p.taps;
    if (rows >= kSegTasks) return 1;
    const int64_t count = std::min({(kSegTasks + rows - 1) / rows, OW / kSegMinPoints, work / (kSegMinWork * rows)});
    // every segment after the first starts inside the input (the second
    // starts first)
    if (count < 2 || OW / count * p.ax[2].s < p.ax[2].pb) return 1;
    return count;
}

// Null when the rows stay whole (or memory runs out: they then stay whole too).
RowSegments *plan_row_segments(const dp_plan &p) {
    const int64_t count = row_segment_count(p);
    if (count < 2) return nullptr;
    const AxisPlan &AW = p.ax[2];
    RowSegments *g = new (std::nothrow) RowSegments();
    if (!g) return nullptr;
    g->count = count;
    g->ax = (AxisPlan *)std::malloc(sizeof(AxisPlan) * (size_t)(count * kAxes));
    g->tables = (int64_t *)std::malloc(sizeof(int64_t) * (size_t)(count * (2 + 2 * AW.k)));
    if (!g->ax || !g->tables) {
        std::free(g->ax);
        std::free(g->tables);
        delete g;
        return nullptr;
    }
    g->ow0 = g->tables;
    g->iw0 = g->ow0 + count;
    int64_t *cursor = g->iw0 + count;
    for (int64_t i = 0; i < count; ++i) {
        const int64_t ow0 = AW.out * i / count, ow1 = AW.out * (i + 1) / count;
        const int64_t iw0 = i ? ow0 * AW.s - AW.pb : 0;
        AxisPlan *ax = g->ax + i * kAxes;
        ax[0] = p.ax[0];
        ax[1] = p.ax[1];
        AxisPlan &w = ax[2];
        w = AW;
        w.in = AW.in - iw0;
        w.out = ow1 - ow0;
        w.pb = i ? 0 : AW.pb;
        w.kbeg = AW.kbeg + ow0;
        w.kend = AW.kend + ow0;
        w.div = AW.div + ow0;
        w.olo = cursor; cursor += AW.k;
        w.ohi = cursor; cursor += AW.k;
        for (int64_t k = 0; k < AW.k; ++k) {
            const int64_t hi = std::min(std::max(AW.ohi[k] - ow0, (int64_t)0), w.out);
            w.olo[k] = std::min(std::max(AW.olo[k] - ow0, (int64_t)0), hi);
            w.ohi[k] = hi;
        }
        g->ow0[i] = ow0;
        g->iw0[i] = iw0;
    }
    return g;
}

void destroy_row_segments(RowSegments *g) {
    if (!g) return;
    std::free(g->ax);
    std::free(g->tables);
    delete g;
}

// Every window one tap inside src (kernel 1, no begin padding, no window
// past the input's end), so every output is the input element its window
// starts at (src subsampled by the strides; the identity at stride 1), to
// the bit, whatever the kind and its divisor policy.  Quantized averages
// requantize, so those pool.
bool single_tap_windows(const Problem &p) {
    if (p.kind == kQAvg) return false;
    for (const AxisPlan &ax : p.ax)
        if (ax.k != 1 || ax.pb != 0 || (ax.out - 1) * ax.s >= ax.in) return false;
    return true;
}

// With indices, a sliding pass (doubling or window blocks, `unit` values per
// position) replaces a tap-by-tap pass of a stride-1, undilated axis when it
// takes fewer passes (one more for its bookkeeping).
bool doubles(const AxisPlan &ax, bool is_max, int64_t unit) {
    return ax.s == 1 && ax.d == 1 && slide_passes(ax.k, is_max, unit) + 1 < ax.k;
}
// Values: the rows of a stride-1, undilated axis slide (rows_slide in
// plan.hpp) instead of going tap by tap.
bool values_rows_slide(const AxisPlan &ax, bool is_max, int64_t unit, int64_t lanes) {
    return ax.s == 1 && ax.d == 1 && rows_slide(ax.k, is_max, unit, lanes > 1);
}

// Per-thread working set the separable kernel aims for (about half of L2).
constexpr int64_t kSepBudget = 256 << 10;

int64_t acc_size(int dtype) { return dtype == DP_F64 ? 8 : 4; }
bool float_values(int dtype) { return dtype != DP_S8 && dtype != DP_U8; }
// Bytes of a kernel vector of each ISA (kVecBytes of its isa_*.cpp).
int64_t isa_vec_bytes(int isa) { return isa == kBaseline ? 16 : isa == kAvx2 ? 32 : 64; }
// Accumulator lanes of a kernel vector for the problem's ISA and type.
int64_t block_lanes(const Problem &p) { return isa_vec_bytes(p.isa) / acc_size(p.desc.dtype); }
// Whether the channel-block kernel pools 8-bit maxima (without indices) in
// byte lanes (kernels.hpp's u8_lanes, s8_lanes): rows of a byte vector of
// channels or more.  Narrower rows keep int32 lanes, a quarter as wide, so
// that more of a vector's lanes hold channels; among them are all the rows
// decimated_row takes (two or more points an int32 vector), whose permute
// would need AVX512-VBMI on bytes.  The planner's own choices (block_lanes)
// stay those of int32 lanes.
bool byte_lane_maxima(const Problem &p, int variant, bool with_idx) {
    return variant == kChannelBlock && p.kind == kMax && !with_idx &&
           (p.desc.dtype == DP_U8 || p.desc.dtype == DP_S8) && p.desc.channels >= isa_vec_bytes(p.isa);
}
// Windows of at least this many taps over few channels go to the separable
// passes when W is strided (see choose_variant).
constexpr int64_t kFewLanesSepTaps = 7;
// 3-D windows of at least this many taps over a vector of channels and a
// short tail go to the separable passes (see choose_variant).
constexpr int64_t kTailSepTaps = 27;
// Rows of at most this many outputs are short (see choose_variant).
constexpr int64_t kShortRowPoints = 8;
// Flat planes of C lanes: rows of at most this many vectors of values (see choose_variant).
constexpr int64_t kPlaneLanesMaxVectors = 32, kPlaneLanesMaxQVectors = 16;
// With indices, windows of more taps go to the separable passes (see choose_variant).
constexpr int64_t kIdxBlockMaxTaps = 512;

size_t align64(size_t v) { return (v + 63) & ~(size_t)63; }

// Scratch layout of the separable kernel for `lanes` values per position.
SepLayout sep_layout(const Problem &p, int64_t lanes, bool with_idx) {
    const AxisPlan &AD = p.ax[0], &AH = p.ax[1], &AW = p.ax[2];
    const bool is_max = p.kind == kMax;
    SepLayout g{};
    g.lanes = lanes;
    g.wp = (AW.out - 1) * AW.s + (AW.k - 1) * AW.d + 1;
    g.phase_len = (g.wp + AW.s - 1) / AW.s;
    g.xlen = g.phase_len * AW.s;
    if (!with_idx && AW.s == 1 && AW.d == 1) {
        const int64_t w = w_values_plan(AW.k, is_max, lanes);
        g.h_dbl = w == kWSlide;
        g.h_fact = w > 1 ? w : 0;
    } else {
        g.h_dbl = doubles(AW, is_max, lanes);
    }
    g.v_dbl = AD.k == 1 && (with_idx ? doubles(AH, is_max, AW.out * lanes)
                                     : values_rows_slide(AH, is_max, AW.out * lanes, lanes));
    const int64_t vsz = acc_size(p.desc.dtype) + (with_idx ? 8 : 0);
    const int64_t row = AW.out * lanes * vsz;
    const int64_t fit = kSepBudget / (row > 0 ? row : 1);   // rows that fit the budget
    // Rows of xlen positions of `l` values each that four flat buffers hold
    // in the budget (fbuf); output rows per chunk, from 1 to the axis's.
    auto four_buffer_rows = [&](int64_t l) { return kSepBudget / (4 * g.xlen * l * vsz); };
    auto chunk_of = [&](int64_t rows) { return rows < 1 ? 1 : rows > AH.out ? AH.out : rows; };
    g.flat = lanes == 1 && AD.k == 1;
    // Values slid by window blocks along rows long enough for them (no depth
    // taps): the blocks stream down whole planes, holding one block of rows.
    g.vstream = !with_idx && AD.k == 1 && g.v_dbl && blocks_win(AH.k, is_max, g.xlen * lanes);
    if (g.vstream) {
        g.planes = 1;
        g.chunk = AH.out;
        g.rows = AH.k + 2;   // a block's suffix rows, the running prefix, the identity
    } else if (g.flat) {
        // Four buffers of the chunk's padded rows, xlen positions each.
        g.planes = 1;
        g.chunk = chunk_of((four_buffer_rows(1) - (AH.k - 1) * AH.d - 1) / AH.s + 1);
        if (g.v_dbl && g.chunk < AH.k / 2) g.v_dbl = 0;   // padding rows would dominate
        g.rows = (g.chunk - 1) * AH.s + (AH.k - 1) * AH.d + 1;
    } else {
        if (g.v_dbl) {
            g.chunk = (fit - (AH.k - 1)) / 2;
            if (g.chunk < AH.k / 2) g.v_dbl = 0;   // padding rows would dominate: go tap by tap
        }
        if (g.v_dbl) {
            g.planes = 1;
        } else {
            g.planes = AD.k;
            g.chunk = ((fit - 1) / AD.k - (AH.k - 1) * AH.d - 1) / AH.s + 1;
        }
        g.chunk = chunk_of(g.chunk);
        if (g.v_dbl) {
            g.rows = g.chunk + AH.k - 1;
        } else {
            g.rows = (g.chunk - 1) * AH.s + (AH.k - 1) * AH.d + 1;
            if (g.rows > AH.in) g.rows = AH.in;
        }
    }
    const int64_t as = acc_size(p.desc.dtype), ix = with_idx ? 8 : 0;
    g.strips = lanes > 1 && !with_idx && !g.v_dbl;
    if (g.strips) g.chunk = chunk_of(kSepBudget / (g.xlen * lanes * as));   // as many stacked padded rows as fit
    // C lanes over "same" planes (plane_fits): chunk_plane's four flat
    // buffers of the chunk's rows of (w, c) values hold the budget.
    const bool lanes_plane = lanes > 1 && !with_idx && !g.vstream && plane_fits(AD, AH, AW);
    if (lanes_plane) g.chunk = chunk_of(four_buffer_rows(lanes));
    // Values stacked tap by tap (stack_taps) over stride-1 rows: chunks of
    // whole blocks of shared windows, so a block is computed once.  A chunk
    // below one block (rows too long for the budget) grows to one: sep_rows
    // ends a chunk at a block boundary, and a smaller one would never get
    // past its first block's start.  The buffers below follow g.chunk.
    g.align = 1;
    if (!with_idx && !g.v_dbl && AD.k == 1 && AH.s == 1 && AH.d == 1 && AH.k >= 2) {
        g.align = AH.k < kShareRows ? AH.k : kShareRows;
        if (g.chunk < AH.out) g.chunk = g.chunk < g.align ? g.align : g.chunk - g.chunk % g.align;
        if (g.chunk > AH.out) g.chunk = AH.out;
    }
    g.plane = lanes_plane || (g.flat && !g.vstream && !with_idx && plane_fits(AD, AH, AW));
    const int64_t xp_n = g.xlen * lanes + 64;   // + slack for vector stores past a row's end
    // hb: the stacked rows of chunk_strips, or the W-pooled input rows of chunk_rows.
    const int64_t hb_n = g.strips ? g.chunk * g.xlen * lanes + 64
                         : !g.flat && !g.vstream && (with_idx || g.v_dbl) ? g.planes * g.rows * AW.out * lanes : 0;
    // + slack for a vector read past OW
    const int64_t vr_n = (g.v_dbl && !g.vstream ? g.chunk : 1) * AW.out * lanes + 64;
    size_t at = 0;
    g.xp = at; at = align64(at + xp_n * as);
    g.xpi = at; at = align64(at + xp_n * ix);
    // A strided W pass over positions of fewer lanes than a vector splits the
    // rows into stride phases, so every tap is one unit-stride stream (C lanes
    // of a vector or more pool each output's taps straight from the row).
    g.w_phases = AW.s > 1 && lanes * acc_size(p.desc.dtype) < isa_vec_bytes(p.isa);
    const int64_t ph_n = g.w_phases || g.h_fact ? xp_n : 0;
    g.ph = at; at = align64(at + ph_n * as);
    g.phi = at; at = align64(at + ph_n * ix);
    const int64_t nt = AW.k > AD.k * AH.k ? AW.k : AD.k * AH.k;
    g.toff = at; at = align64(at + nt * 8);
    g.voff = at; at = align64(at + (g.vstream ? 0 : g.chunk) * AD.k * AH.k * 8);
    g.hb = at; at = align64(at + hb_n * as);
    g.hbi = at; at = align64(at + hb_n * ix);
    g.vr = at; at = align64(at + vr_n * as);
    g.vri = at; at = align64(at + vr_n * ix);
    // Stacked rows: the flat path, and values with one lane (chunk_stacked);
    // streamed window blocks (rows of xlen * lanes values).
    const bool stacked = g.flat || (lanes == 1 && !with_idx);
    const int64_t f_rows = g.vstream || g.rows > g.chunk ? g.rows : g.chunk;
    // Streamed blocks: rows in fbuf[0], each starting on a line (chunk_vstream:
    // up to a line of values more per row); the others hold one row each,
    // with up to a line more before it (its first valid value on a line).
    const int64_t line = kLineBytes / as;
    const int64_t f_n = g.vstream   ? f_rows * (g.xlen * lanes + line) + 64
                        : stacked   ? f_rows * g.xlen + 64
                        : g.plane ? g.chunk * g.xlen * lanes + 64
                                    : 0;
    for (int b = 0; b < 4; ++b) {
        const int64_t n_b = g.vstream && b > 0 ? g.xlen * lanes + line + 64 : f_n;
        g.fbuf[b] = at; at = align64(at + n_b * as);
        g.fbufi[b] = at; at = align64(at + n_b * ix);
    }
    g.wdiv = at; at = align64(at + AW.out * 8 + 64);   // + slack for a vector past OW
    g.wcnt = at; at = align64(at + AW.out * 8);
    g.w_doubled = lanes == 1 && !with_idx && p.kind != kQAvg && AW.s == 1 && AW.d == 1 &&
                  doubling_fits(isa_vec_bytes(p.isa), acc_size(p.desc.dtype), AW.k, p.kind == kMax);
    g.total = at + (g.w_doubled ? kDoublingSlackBytes : 0);
    return g;
}

int choose_variant(const Problem &p, const int64_t ss[5], const int64_t ds[5], bool with_idx) {
    if (global_plane(p, ss)) return kGlobalPlane;
    const bool unit_c = ss[1] == 1 && ds[1] == 1;
    if (!unit_c || p.desc.channels == 1) return kSepPlane;
    if (p.ax[1].out == 1 && p.ax[2].out == 1) return kChannelBlock;   // one window per plane
    if (with_idx) {
        // The channel block keeps maxima and their indices in registers, a
        // vector of channels at a time; the separable passes carry int64
        // indices through scratch.  Measured (stride-1 NXC f32, AVX2, 16 and
        // 128 channels): the channel block took 0.15-0.71 of their time from
        // k5 to k19 (0.19-0.23 at 3-D k5 and k7), 0.94 at k25, 1.13 at k31;
        // with fewer channels than a vector it goes lane by lane, 5-60 times
        // the separable time.
        return p.desc.channels >= block_lanes(p) && p.taps <= kIdxBlockMaxTaps ? kChannelBlock : kSepLanes;
    }
    // Channels as lanes: tap by tap in registers unless the separable passes
    // (widen, W, H/D, finalize) cost well under the window's taps.
    const bool is_max = p.kind == kMax;
    const AxisPlan &AD = p.ax[0], &AH = p.ax[1], &AW = p.ax[2];
    const int64_t C = p.desc.channels, OWC = AW.out * C;
    // Half a vector of channels or fewer under strided W windows of 7 taps
    // or more: a point wastes most of its vector's lanes, while the passes
    // split the rows into stride phases (w_phases) and pool whole vectors.
    // Measured (AVX-512, 1 thread, 50 random NXC problems of 2-15 channels,
    // 7-40 taps, W strides 2-4, f32, bf16, u8): 0.31-1.09 of the channel
    // block's time up to 8 channels of 32-bit accumulators; 0.7-1.6 at 10-12.
    // Not where the channel kernel decimates rows of maxima (k2/k3 s2: the
    // passes took 1.4x its time over 3 channels), for windows of one (d, h)
    // row (1.14x, k1x7 s3 over 7 channels) or rows of one output (1.35x,
    // k3x7 s2x3 over a row of 7).
    const int64_t lanes = block_lanes(p);
    // "Same" stride-1 windows over planes of short rows (plane_fits): the
    // passes pool a chunk's rows as one flat run of (w, c) values
    // (chunk_plane), in whole vectors whatever the channels and with no
    // setup per row or point.  Measured (AVX-512, 1 thread, k3 and k5 over
    // 3-64 channels, planes of 7 x 7 to 56 x 56, f32, bf16, u8 maxima):
    // 0.08-0.96 of the channel block's time over rows of up to 32 vectors
    // of values, and over rows of any length under a vector of channels;
    // 1.02-1.8 over longer rows of more channels.  Quantized averages,
    // whose channel block sums integers: 0.65-0.75 up to 16 vectors,
    // 1.4-3.6 past.
    const bool is_q = p.kind == kQAvg;
    const int64_t plane_vectors = is_q ? kPlaneLanesMaxQVectors : kPlaneLanesMaxVectors;
    if (flat_plane_rows(ss, ds, AH, AW, C) && (AW.in * C <= plane_vectors * lanes || (C < lanes && !is_q)) &&
        plane_fits(AD, AH, AW) && sep_layout(p, C, false).plane)   // (plane_fits first: this runs per call, the layout costs more)
        return kSepLanes;
    if (AW.s > 1 && 2 * C <= lanes && p.taps >= kFewLanesSepTaps && !decimated_rows(is_max, AW, C, lanes) &&
        AD.k * AH.k > 1 && AW.out > 1)
        return kSepLanes;
    // A vector of channels and a tail of a quarter vector or less, under
    // 3-D windows strided along H and W: the channel block pays a whole
    // vector at every tap for the tail's few lanes, and its points of
    // padded rows go one by one; the passes pool the rows' (w, c) values
    // flat.  Measured (1 thread; k3 s2 p1 and k3 s3 3-D maxima and
    // averages): f32 and bf16 over 17-20 channels on AVX-512, f32 over 9-10
    // on AVX2, 0.55-0.99 of the channel block's time; the same windows over
    // tails of half a vector, or over two vectors or more, 0.68-1.46 (f32
    // and bf16 over 24-128 channels on AVX-512, f32 over 17-65 on AVX2),
    // and 8-bit maxima (byte vectors) over 65-72 channels 1.07-1.22.
    if (float_values(p.desc.dtype) && AD.k > 1 && AH.s > 1 && AW.s > 1 && p.taps >= kTailSepTaps && C > lanes &&
        C <= lanes + lanes / 4)
        return kSepLanes;
    // Short stride-1 rows of a vector of channels or fewer: the channel
    // block pays a row's setup (window rows, border points) for a few
    // points, and with fewer values than a vector on the row (w, c) it goes
    // point by point on mostly idle lanes; the passes pool whole rows of
    // (w, c) values.  Measured (AVX-512 and AVX2, 1 thread, NXC rows of
    // 3-8 outputs, 2-24 channels, 2-D k2-k5 and 3-D k3, f32, bf16, u8
    // maxima): 0.3-0.9 of the channel block's time (0.24 for 3 channels
    // of 3-D averages), ties at 2 channels of 3-D maxima; from 32 channels
    // and over longer rows (26 outputs and on) the channel block as fast
    // or faster.  Quantized averages keep the channel block (not measured).
    if (AW.s == 1 && AW.out > 1 && AW.out <= kShortRowPoints && C <= lanes && AD.k * AH.k > 1 && p.kind != kQAvg)
        return kSepLanes;
    int64_t wcost = AW.k;
    if (AW.s == 1 && AW.d == 1) w_values_plan(AW.k, is_max, C, &wcost);
    const int64_t vcost = AD.k == 1 && values_rows_slide(AH, is_max, OWC, C) ? slide_passes(AH.k, is_max, OWC)
                                                                          : AD.k * AH.k;
    return 2 * (2 + wcost + vcost) < p.taps ? kSepLanes : kChannelBlock;
}

const char *variant_name(int v) {
    switch (v) {
    case kChannelBlock: return "channel_block";
    case kSepPlane: return "separable";
    case kSepLanes: return "separable_lanes";
    case kGlobalPlane: return "global_plane";
    }
    return "?";
}

// Rows of the variant's row space (plan.hpp's Variant).
int64_t variant_rows(int variant, int64_t batch, int64_t channels, int64_t plane) {
    return variant == kSepPlane ? batch * channels * plane : variant == kGlobalPlane ? batch * channels : batch * plane;
}

// Scratch bytes one thread needs for the variant's kernel; sets the context's
// separable layout or window-row count.
size_t kernel_scratch(const Problem &p, int variant, bool indices, ExecCtx *c) {
    const dp_desc &d = p.desc;
    if (variant == kSepPlane || variant == kSepLanes) {
        c->sep = sep_layout(p, variant == kSepLanes ? d.channels : 1, indices);
        return c->sep.total;
    }
    if (variant != kChannelBlock) return 0;
    // row offsets and index values of a window's (d, h) rows; a streamed
    // window's tap offsets and partial results; stride 1: a row's pooled
    // (d, h) rows (64-byte aligned, a vector of slack)
    const AxisPlan &AW = p.ax[2];
    c->taps_max = p.ax[0].k * p.ax[1].k;
    // flat_row's pooled rows (stride 1: a vector of slack and one to move
    // them on by), decimated_row's (maxima, stride 2, two or more points to
    // a vector): 64-byte aligned, slack
    const bool decimated = p.kind == kMax && !indices && AW.s == 2 &&
                           2 * d.channels * acc_size(d.dtype) <= isa_vec_bytes(p.isa);
    const size_t pooled = AW.s == 1  ? (size_t)((AW.out + (AW.k - 1) * AW.d) * d.channels) + 32
                          : decimated ? (size_t)((2 * AW.out + AW.k + AW.in) * d.channels) + 48
                                      : 0;
    // (+ 16: a streamed window's vector of slack, kStreamSlack)
    size_t bytes = sizeof(int64_t) * (2 * (size_t)c->taps_max + (size_t)(c->taps_max * AW.k) + (size_t)d.channels + 16 + pooled);
    if (indices && idx_columns_pay(c->taps_max, AW.k, AW.s, AW.in))   // idx_columns' pooled columns
        bytes += (size_t)(AW.in * kIdxColumnBytes) + 128;
    return bytes;
}

// NCX pooled by the NXC kernels, as oneDNN's planar pooling does: per (n,
// block of channels) the block's planes move to channels-last scratch
// (kernels_transpose.hpp), a channel kernel pools them there, and the result moves
// back.  Chosen by channel_blocks_pay.
struct ChannelBlocks {
    Problem sub_plan[2];     // the NXC problem of a full block and of the last, partial one
    ExecCtx sub[2];
    RowFn fn[2];
    MoveFn to_last, to_planar;
    int variant[2];
    int64_t block, blocks;   // channels per block, blocks per image
    int64_t bytes;           // element size
    size_t kernel_bytes, in_bytes;   // scratch: the kernel's, the block's input, its output
    size_t scratch_bytes;
};

// Channels per block: a vector's lanes, doubled up to four vectors (the
// channel kernels' register block) while the block's input stays within a
// quarter of L2 and an image still has kMinBlockTasks blocks for the threads.
constexpr int64_t kBlockBudget = 512 << 10;
constexpr int64_t kMinBlockTasks = 8;
int64_t block_plane_bytes(const Problem &p) {
    return p.ax[0].in * p.ax[1].in * p.ax[2].in * (int64_t)dp_dtype_size(p.desc.dtype);
}
int64_t channel_block_size(const Problem &p) {
    const int64_t lanes = block_lanes(p), plane = block_plane_bytes(p), C = p.desc.channels;
    int64_t block = lanes;
    while (block < 4 * lanes && 2 * block * plane <= kBlockBudget &&
           p.desc.batch * ((C + 2 * block - 1) / (2 * block)) >= kMinBlockTasks)
        block *= 2;
    return block < C ? block : C;
}

// DNNPOOL_CHANNEL_BLOCKS=0 / 1: never / always (where possible) pool NCX by
// channel blocks, for tests and measurements; unset, channel_blocks_pay decides.
int channel_blocks_override() {
    static const int v = [] {
        const char *e = std::getenv("DNNPOOL_CHANNEL_BLOCKS");
        return e && *e == '0' ? 0 : e && *e == '1' ? 1 : -1;
    }();
    return v;
}

// Planes so large that even one vector's channels would overflow L2 stay planar.
constexpr int64_t kBlockMaxBytes = 2 << 20;
constexpr int64_t kBlockMaxRow = 20, kBlockMinChannels = 4;
constexpr int64_t kBlockMaxPlaneRow = 13, kBlockMinPlaneChannels = 32;   // against the "same" plane path
constexpr int64_t kBlockMaxDepthRow = 56, kBlockMinDepthChannels = 16;    // stride-1 windows with depth taps
constexpr int64_t kBlockMaxWideRow = 42, kBlockMinWideChannels = 32;      // many channels of 16 bits or more
constexpr int64_t kBlockMaxDepthTapsRow = 36;                             // strided windows with depth taps
constexpr int64_t kBlockMaxTaps2dRow = 64, kBlockMinTaps2dChannels = 16;  // 2-D windows of 3x the taps strides skip
constexpr int64_t kBlockMinUnfusedChannels = 16;                          // strided rows without a fused W pass
constexpr int64_t kBlockMaxGapPaddedRow = 256;                            // padded rows of windows with gaps
constexpr int64_t kBlockPlaneLimitIntel = 4096;                           // 2-D planes, Intel cores
// 2-D planes of this many bytes or more, over rows longer than kBlockMaxRow,
// stay planar (DNNPOOL_BLOCK_PLANE_LIMIT sets it when a plan is made) but
// for windows strided along W only.  The rules below were fitted on an AMD
// Zen 4.  On an Intel Xeon (2 MB L2; 1 thread, 702 random 2-D NCX problems,
// rows of 14-112, 16-512 channels, batch 1-8, f32/bf16/f16, blocks
// alternated with the one-lane passes in one process), of the 427 over rows
// past 20 those rules send to blocks, planes under a page took 0.79 of the
// one-lane passes' time (geometric mean, 173 of 212 faster); larger ones
// 1.11 under stride 1 along W (MaxPool k2 s1 over 32 planes of 57 x 57:
// 1.3-1.6) and 1.04 under strides past 1 along both axes, but 0.84 under
// stride 1 along H and more along W (the one-lane passes take every row
// and thin each out).  A block's move reads a page or more of each of its
// planes at once, more streams than that core's L2 prefetcher follows.
// Rows of up to 20 stay with blocks (112 x 20 over 512 channels: 0.86), and
// 3-D volumes are not limited (100 random 3-D problems gained nothing from
// any limit).
int64_t block_plane_limit_bytes() {
    return vendor_bytes("DNNPOOL_BLOCK_PLANE_LIMIT", kBlockPlaneLimitIntel, INT64_MAX);
}
bool channel_blocks_pay(const dp_plan &p, int variant, bool indices) {
    if (variant != kSepPlane || indices || p.desc.channels < 2) return false;
    const int forced = channel_blocks_override();
    if (forced >= 0) return forced == 1;
    // Measured (AVX-512, 1 thread, 150 random NCX problems of 2-512
    // channels, 1-D to 3-D, every dtype): rows of up to 20 took 0.06-0.8 of
    // the one-lane passes' time from 4 channels on (3-D with depth taps
    // 0.09-0.65); rows of 28-35 0.45-1.28; rows of 56 or more, or 2-3
    // channels, mostly 1.1-6.  Against the "same" plane path: rows of 7-13
    // 0.22-0.77 from 32 channels on; rows of 14-20 0.73-1.6, 1.25 at 16
    // channels.
    // Stride-1 windows with depth taps, whose one-lane passes keep several
    // planes per chunk: rows of 24-56 took 0.26-0.90 from 16 channels on (40
    // problems; one 1.32 at 24), 1.2-3.8 at 8.
    // Rows of 21-42 from 32 channels on (50 2-D problems of rows 21-56, 8-512
    // channels): 0.37-0.76 of the one-lane passes' time at 16 and 32 bits,
    // strided windows or not; 0.99-1.12 at 8 bits, 1.0-2.8 below 32 channels,
    // and rows of 56 were mixed (0.6-1.5).  The "same" plane path still wins
    // there (1.5-1.8; the check below).
    // Strided windows with depth taps over rows of 21-36, whole vectors of
    // channels from 16 on (30 3-D problems at 16 channels, f32 and f16; 6 in
    // bf16): 0.18-0.77 where the windows hold at least twice the taps the
    // strides skip (prod k >= 2 prod s), 0.96-1.47 below that or over rows of
    // 40; a last block of 4-12 channels made it 1.0-2.8 (20-28 channels),
    // 8-bit values 0.6-2.0.
    // 2-D windows over rows of 21-64 from 16 channels on, once a block's
    // last 4-15 channels moved in narrower tiles (round 53; 102 problems,
    // 16-256 channels, f32/bf16/f16, 1 thread): where the windows hold at
    // least 3x the taps the strides skip (prod k >= 3 prod s), 0.46-1.31 of
    // the time, 61 of 70 faster, 0.78 geometric mean; below that, k2 s2
    // averages over 256 channels at 56 took 1.7-1.9x and ResNet-style k3 s2
    // maxima 0.9-1.1.  Rows of 65-128 were even (geometric mean 1.00);
    // below 16 channels 0.74-3.2 (geometric mean 1.43).
    const AxisPlan &AD = p.ax[0], &AH = p.ax[1], &AW = p.ax[2];
    const int64_t C = p.desc.channels, W = AW.in;
    // 16 bits or more: every rule below but depth_slide asks it
    const bool wide_values = dp_dtype_size(p.desc.dtype) >= 2;
    const bool depth_slide = AD.k > 1 && AD.s == 1 && AH.s == 1 && AW.s == 1 && C >= kBlockMinDepthChannels &&
                             W <= kBlockMaxDepthRow;
    const bool depth_taps = AD.k > 1 && C >= kBlockMinDepthChannels && C % block_lanes(p) == 0 &&
                            wide_values && W <= kBlockMaxDepthTapsRow &&
                            AD.k * AH.k * AW.k >= 2 * AD.s * AH.s * AW.s;
    const bool wide = W <= kBlockMaxWideRow && C >= kBlockMinWideChannels && wide_values;
    const bool taps_2d = p.desc.ndims == 2 && W <= kBlockMaxTaps2dRow && C >= kBlockMinTaps2dChannels &&
                         wide_values && AH.k * AW.k >= 3 * AH.s * AW.s;
    // Strided rows the one-lane passes cannot finish in registers (fewer
    // outputs than a vector, or a window past small_strided_code: their
    // generic W pass) from 16 channels on, 16 bits or more: 0.41-0.86 of the
    // one-lane passes' time, "same" plane path included (AMD Zen 4, 1
    // thread, 2-D and 3-D rows of 25-112, k2-k7 s2-s4, 16-64 channels, f32
    // and bf16; 2 threads 0.47-0.98; 18 channels 0.95-1.0); 8-12 channels
    // 0.6-1.2, 8-bit values 2.3-4.7.  3-D windows of fewer taps than their
    // strides skip move planes they never read: 1.55 (k3x2x3 s3 over 5
    // planes).
    // Windows with gaps between them (k < s) finish in registers too, but
    // the blocks kept rows of up to kBlockMaxTaps2dRow, and padded rows up to
    // kBlockMaxGapPaddedRow (stacked first one-lane).  Measured (Intel Xeon,
    // 1 thread, 46 random NCX problems of k2 s3, k2 s4, k3 s4 windows, 16-256
    // channels, f32 and bf16), one-lane time over the blocks': rows of 56-64
    // 1.08-1.93; padded rows of 112-256 0.94-1.80; unpadded rows of 112-4096
    // and padded ones of 1000-4096 0.36-0.96 (geometric mean about 0.6).
    const bool w_padded = AW.pb > 0 || (AW.out - 1) * AW.s + AW.k > AW.in;
    const bool fused_w = small_strided_code(AW) &&
                         (AW.k >= AW.s || W > (w_padded ? kBlockMaxGapPaddedRow : kBlockMaxTaps2dRow));
    const bool unfused_rows = AW.s > 1 && AW.d == 1 && C >= kBlockMinUnfusedChannels && wide_values &&
                              (AW.out < block_lanes(p) || !fused_w) &&
                              (p.desc.ndims < 3 || AD.k * AH.k * AW.k >= AD.s * AH.s * AW.s);
    if (!unfused_rows) {
        if (!depth_slide && !depth_taps && !wide && !taps_2d && (W > kBlockMaxRow || C < kBlockMinChannels))
            return false;
        if ((C < kBlockMinPlaneChannels || W > kBlockMaxPlaneRow) && sep_layout(p, 1, false).plane) return false;
    }
    const bool thinned_rows = AH.s == 1 && AW.s > 1;
    if (p.desc.ndims == 2 && W > kBlockMaxRow && !thinned_rows && block_plane_bytes(p) >= block_plane_limit_bytes())
        return false;
    // a block of one vector's channels fits the budget L2 can hold
    return block_lanes(p) * block_plane_bytes(p) <= kBlockMaxBytes;
}

// Sets up the blocks' NXC problems; false when a kernel is missing.
bool plan_channel_blocks(const dp_plan &p, ChannelBlocks *b) {
    const AxisPlan *A = p.ax;
    const int64_t C = p.desc.channels;
    b->block = channel_block_size(p);
    b->blocks = (C + b->block - 1) / b->block;
    b->bytes = (int64_t)dp_dtype_size(p.desc.dtype);
    b->kernel_bytes = 0;
    b->to_last = select_move_fn(p.isa, b->bytes, true);
    b->to_planar = select_move_fn(p.isa, b->bytes, false);
    if (!b->to_last || !b->to_planar) return false;
    for (int last = 0; last < 2; ++last) {
        const int64_t cl = last && C % b->block ? C % b->block : b->block;
        Problem &sp = b->sub_plan[last];
        sp = p;
        sp.desc.batch = 1;
        sp.desc.channels = cl;
        sp.desc.format = DP_NXC;
        ExecCtx &s = b->sub[last];
        s = p.ctx;
        s.N = 1;
        s.C = cl;
        const int64_t ss[5] = {0, 1, A[1].in * A[2].in * cl, A[2].in * cl, cl};
        const int64_t ds[5] = {0, 1, A[1].out * A[2].out * cl, A[2].out * cl, cl};
        std::memcpy(s.ss, ss, sizeof ss);
        std::memcpy(s.ds, ds, sizeof ds);
        s.idx = nullptr;
        b->variant[last] = choose_variant(sp, s.ss, s.ds, false);
        b->fn[last] = select_row_fn(p.isa, p.desc.dtype, p.kind, b->variant[last], false,
                                    byte_lane_maxima(sp, b->variant[last], false));
        if (!b->fn[last]) return false;
        const size_t k = align64(kernel_scratch(sp, b->variant[last], false, &s));
        if (k > b->kernel_bytes) b->kernel_bytes = k;
    }
    // + a line of slack past each buffer for vector loads past a row's end
    b->in_bytes = align64((size_t)(b->block * A[0].in * A[1].in * A[2].in * b->bytes) + 64);
    const size_t out_bytes = align64((size_t)(b->block * A[0].out * A[1].out * A[2].out * b->bytes) + 64);
    b->scratch_bytes = b->kernel_bytes + b->in_bytes + out_bytes;
    return true;
}

// Tasks [t0, t1) of (n, block) pairs.
void run_channel_blocks(const ChannelBlocks &b, const ExecCtx &c, int64_t t0, int64_t t1, char *scratch) {
    const AxisPlan *A = c.ax;
    const int64_t in_sizes[3] = {A[0].in, A[1].in, A[2].in}, out_sizes[3] = {A[0].out, A[1].out, A[2].out};
    char *in = scratch + b.kernel_bytes, *out = in + b.in_bytes;
    for (int64_t t = t0; t < t1; ++t) {
        const int64_t n = t / b.blocks, c0 = (t % b.blocks) * b.block;
        const int last = c0 + b.block > c.C;
        ExecCtx s = b.sub[last];
        s.src = in;
        s.dst = out;
        b.to_last((char *)c.src + (n * c.ss[0] + c0 * c.ss[1]) * b.bytes, c.ss[1], c.ss + 2, in_sizes, s.C, in);
        b.fn[last](&s, 0, variant_rows(b.variant[last], 1, s.C, A[0].out * A[1].out), scratch);
        b.to_planar((char *)c.dst + (n * c.ds[0] + c0 * c.ds[1]) * b.bytes, c.ds[1], c.ds + 2, out_sizes, s.C, out);
    }
}

// Whether the hardware prefetchers keep up with the windows' reads from the
// last-level cache (prefetch_floor_bytes): windows over one (d, h) row, and
// NXC windows that share columns.
bool reads_kept_up(const dp_plan &p) {
    const bool one_row = p.ax[0].k == 1 && p.ax[1].k == 1;
    return one_row || (p.desc.format == DP_NXC && !windows_disjoint(p.ax[2]));
}

// A call's context as far as the plan fixes it: dense strides, the
// quantization constants, this machine's floors (read once, when the plan is
// made); dp_execute adds the caller's buffers and strides.
ExecCtx plan_ctx(const dp_plan &p) {
    const dp_desc &d = p.desc;
    ExecCtx c{};
    int64_t dense[DP_MAX_SPATIAL + 2];
    dense_strides(d, d.src_spatial, dense);
    to_logical(d, dense, c.ss);
    dense_strides(d, d.dst_spatial, dense);
    to_logical(d, dense, c.ds);
    to_logical(d, dense, c.xs);
    index_strides(d, c.is);
    c.ax = c.whole = p.ax;
    c.N = d.batch;
    c.C = d.channels;
    c.qscale = d.src_scale / d.dst_scale;
    c.qzp_out = (float)d.dst_zero_point;
    c.qzp_in = d.src_zero_point;
    c.prefetch_floor = prefetch_floor_bytes(reads_kept_up(p));
    c.uncached_floor = uncached_floor_bytes();
    c.pair_ordered_floor = pair_ordered_floor_bytes();
    return c;
}

// The variant's name and, for the separable ones, how their passes run.
void describe_variant(const Problem &p, int v, char *buf, size_t size) {
    if (v != kSepPlane && v != kSepLanes) {
        // +bytes: 8-bit maxima in byte lanes (byte_lane_maxima)
        std::snprintf(buf, size, "%s%s", variant_name(v), byte_lane_maxima(p, v, false) ? "+bytes" : "");
        return;
    }
    const SepLayout g = sep_layout(p, v == kSepLanes ? p.desc.channels : 1, false);
    // +wslide / +hslide: that axis's pass slides (doubling or van Herk blocks) instead of visiting every tap
    // +wdouble: the W pass doubles in registers (kernels_doubling.hpp) where the fused W pass runs
    // +plane: chunks of rows as flat planes (the other passes do not run)
    const char *w = g.w_doubled ? "+wdouble" : g.h_dbl || g.h_fact ? "+wslide" : "";
    if (g.plane) std::snprintf(buf, size, "%s+plane", variant_name(v));
    else std::snprintf(buf, size, "%s%s%s", variant_name(v), w, g.v_dbl ? "+hslide" : "");
}

// Per-thread scratch, kept between calls (grown on demand, freed at thread exit).
char *thread_scratch(size_t bytes) {
    struct Buf {
        char *p = nullptr;
        size_t n = 0;
        ~Buf() { std::free(p); }
    };
    static thread_local Buf b;
    if (bytes > b.n) {
        std::free(b.p);
        b.n = 0;
        b.p = (char *)std::aligned_alloc(64, align64(bytes));
        if (b.p) b.n = align64(bytes);
    }
    return b.p;
}

// Runs work(r0, r1, scratch) over rows [0, rows), on the calling thread or
// in chunks over nt threads: chunk i is rows [rows * i / chunks, rows * (i +
// 1) / chunks), and every output is computed by the same code whichever
// thread takes its chunk, so results do not depend on the thread count.
template <typename Work>
int run_rows(int64_t rows, int64_t nt, size_t scratch_bytes, const Work &work) {
    if (nt > rows) nt = rows;
    if (rows <= 0) return DP_OK;
    if (nt <= 1) {
        char *scratch = thread_scratch(scratch_bytes);
        if (!scratch && scratch_bytes) return DP_ENOMEM;
        work(0, rows, scratch);
        return DP_OK;
    }
    struct Job {
        const Work *work;
        int64_t rows, chunks;
        size_t scratch_bytes;
        std::atomic<int> failed;
    } job{&work, rows, nt * kChunksPerThread < rows ? nt * kChunksPerThread : rows, scratch_bytes, {0}};
    run_chunks(job.chunks, (int)nt - 1, [](void *arg, int64_t i) {
        Job &j = *(Job *)arg;
        const int64_t r0 = j.rows * i / j.chunks, r1 = j.rows * (i + 1) / j.chunks;
        char *scratch = thread_scratch(j.scratch_bytes);
        if (!scratch && j.scratch_bytes) j.failed.store(1);
        else if (r0 < r1) (*j.work)(r0, r1, scratch);
    }, &job);
    return job.failed.load() ? DP_ENOMEM : DP_OK;
}

// Single-tap windows (single_tap_windows) copied from src subsampled by the
// strides, by memcpy where the tensors run on densely in both, threaded
// only when that pays.
int run_copy(const dp_plan &p, const ExecCtx &c, int64_t nt) {
    const int64_t esize = (int64_t)dp_dtype_size(p.desc.dtype);
    const int64_t sizes[5] = {p.desc.batch, p.desc.channels, p.ax[0].out, p.ax[1].out, p.ax[2].out};
    const int64_t ss[5] = {c.ss[0], c.ss[1], c.ss[2] * p.ax[0].s, c.ss[3] * p.ax[1].s, c.ss[4] * p.ax[2].s};
    if (dp_desc_dst_size(&p.desc) * esize < 2 * kCopyPieceMinBytes) nt = 1;
    const CopyPlan cp = plan_copy(sizes, ss, c.ds, esize, nt > 1 ? nt * kChunksPerThread : 1);
    return run_rows(cp.rows(), nt, 0, [&](int64_t r0, int64_t r1, char *) { copy_rows(cp, c.src, c.dst, r0, r1); });
}

const char *isa_name(int isa) {
    return isa == kAvx512Emulated ? "avx512-emulated"
           : isa == kAvx512Bf16   ? "avx512-bf16"
           : isa == kAvx512       ? "avx512"
           : isa == kAvx2         ? "avx2"
                                  : "baseline";
}

}  // namespace

// kPrefetchMinBytes (measured on 32 and 48 MB L3s: the kernels' comments),
// and a quarter of a larger last-level cache for windows whose reads the
// hardware prefetchers keep up with from it:
// - windows over one (d, h) row read src as one sequential stream.  On a
//   300 MB L3, software prefetches took 1-D k4 s4 over 16-48 MB of src (NCX
//   and NXC, f32 and bf16) 1.02-1.23x their time without, and paid only past
//   it (1-D NCX at 128 MB: 0.87-0.93);
// - NXC windows that share columns with their neighbours (k3 s2) read each
//   column's lines on two points' turns, and slide over a row without
//   prefetches.  On that L3, no prefetches took 3-D k3 s2 p1 windows over 128
//   channels (25-51 MB, f32 and bf16, 1 and 2 threads) 0.74-1.01 of the
//   time, k3 s2 p1 over 256 channels (26 MB) 0.76-0.95; at 103 MB, ResNet-50's
//   k3 s2 p1 at batch 32 took 0.84-1.08.
// Windows over several rows interleave their rows' streams point by point,
// and prefetching paid from that L3 too (VGG k2 s2 NXC at batch 4, 26 MB:
// 0.88-0.98; at batch 8, 51 MB: 0.84).
// `alone` (NCX planes through the one-lane separable passes, one thread):
// from kPrefetchAloneMinBytes.  One core's share of a 32 MB L3 (AMD Zen 4, a
// VM among others) held less than the src; against the 16 MB floor, 1
// thread, the 3-D k3 s2 p1 over 64 channels (12.8 MB) took 0.59 of the time
// with the prefetches, over 48 (9.6 MB) 0.68, over 40 (8 MB) 0.90-1.00;
// ResNet-50's k3 s2 p1 at batch 4 (12.8 MB) 0.69-0.73, VGG's k2 s2 at
// batch 2 0.62-0.76, k15 s1 windows over 32 channels of 256 x 256 (8.4 MB)
// 0.91-0.92.  Below it they cost (6.4 MB: 1.05; 1.6 MB: 1.17).  Two
// threads, each with half the src, gained nothing at 12.8 MB (3-D:
// 0.94-0.97) and lost on 2-D (1.17-1.22); NXC windows lost at 1 thread too
// (VGG's k2 s2 at batch 2: 1.15).
// That floor is a quarter of the L3, kept between kPrefetchAloneMinBytes and
// kPrefetchMinBytes: a large L3 serves one core a larger src.  On an Intel
// Xeon with a 480 MB L3, 1 thread, the 16 MB floor against 8 MB took 0.94
// of the time on the 3-D k3 s2 p1 over 64 channels and ResNet-50's k3 s2 p1
// at batch 4 (12.8 MB), 0.96 over 48 channels, 0.99 on VGG's k2 s2 at batch
// 2, k15 windows at 8.4 MB 0.95-1.01; prefetching paid there only from 32-51
// MB (25.7 MB: no prefetches 0.96-0.99 of the time; 51 MB: 1.02-1.03;
// ResNet-50's at batch 32, 102 MB: 1.45-1.51).
int64_t dnnpool::prefetch_floor_bytes(bool kept_up, bool alone) {
    int64_t floor;
    if (env_bytes("DNNPOOL_PREFETCH_FLOOR", &floor)) return floor;
    const int64_t quarter = last_level_cache_bytes() / 4;
    if (kept_up) return quarter > kPrefetchMinBytes ? quarter : kPrefetchMinBytes;
    if (!alone) return kPrefetchMinBytes;
    return std::min(std::max(quarter, kPrefetchAloneMinBytes), kPrefetchMinBytes);
}

int64_t dnnpool::uncached_floor_bytes() {
    return vendor_bytes("DNNPOOL_UNCACHED_FLOOR", kUncachedMinBytes, INT64_MAX);
}

// Rows in address order pay where the hardware prefetchers follow one row
// at a time but not a window's rows interleaved per load (AMD Zen 4: the
// comment of rows_in_order).  An Intel Xeon (480 MB L3), its rows prefetched
// 16 KB on either way, took the per-load pairing faster: ResNet-50's k3 s2
// p1 at batch 32 (103 MB), 1 / 2 threads, maxima f32 0.91-0.96 / 0.89-0.92
// of the time, bf16 0.84-0.92 / 0.94-0.96, exclude-pad averages f32
// 0.87-0.94 at 1; VGG's k2 s2 over 128 channels at batch 8 (51 MB)
// 1.00-1.01; in order under the floor, VGG's at batch 1 (6.4 MB),
// 0.97-1.06.
int64_t dnnpool::pair_ordered_floor_bytes() {
    return vendor_bytes("DNNPOOL_PAIR_ORDERED_FLOOR", INT64_MAX, kPairOrderedMinBytes);
}

RowFn dnnpool::select_row_fn(int isa, int dtype, int kind, int variant, bool with_idx, bool byte_lanes) {
#ifdef DNNPOOL_HAVE_X86_VARIANTS
    if (isa == kAvx512Emulated) return avx512_emulated::select(dtype, kind, variant, with_idx, byte_lanes);
    if (isa == kAvx512Bf16 && dtype == DP_BF16 && !byte_lanes)
        return avx512_bf16::select(dtype, kind, variant, with_idx, byte_lanes);
    if (isa == kAvx512 || isa == kAvx512Bf16) return avx512::select(dtype, kind, variant, with_idx, byte_lanes);
    if (isa == kAvx2) return avx2::select(dtype, kind, variant, with_idx, byte_lanes);
#endif
    return baseline::select(dtype, kind, variant, with_idx, byte_lanes);
}

MoveFn dnnpool::select_move_fn(int isa, int64_t bytes, bool to_last) {
#ifdef DNNPOOL_HAVE_X86_VARIANTS
    if (isa == kAvx512Emulated) return avx512_emulated::select_move(bytes, to_last);
    if (isa == kAvx512 || isa == kAvx512Bf16) return avx512::select_move(bytes, to_last);
    if (isa == kAvx2) return avx2::select_move(bytes, to_last);
#endif
    return baseline::select_move(bytes, to_last);
}

extern "C" {

const char *dp_isa(void) { return isa_name(cpu_isa()); }

int dp_get_max_threads(void) {
    const int n = g_num_threads.load();
    return n > 0 ? n : omp_get_max_threads();
}

void dp_set_num_threads(int n) { g_num_threads.store(n > 0 ? n : 0); }

static int out_of_memory(char *msg, size_t size) {
    if (msg && size) std::strncpy(msg, "out of memory while planning the pooling", size - 1);
    return DP_ENOMEM;
}

int dp_plan_create(const dp_desc *d, dp_plan **out, char *msg, size_t size) {
    *out = nullptr;
    dp_desc checked = *d;
    int rc = dp_desc_init(&checked, msg, size);
    if (rc) return rc;
    dp_plan *p = new (std::nothrow) dp_plan();
    if (!p) return out_of_memory(msg, size);
    p->desc = checked;
    p->kind = checked.kind == DP_MAX ? kMax : (checked.quantized ? kQAvg : kAvg);
    p->isa = cpu_isa();
    int64_t words = 0;
    for (int a = 0; a < kAxes; ++a) {
        const int i = a - (kAxes - checked.ndims);
        words += 3 * (i >= 0 ? checked.dst_spatial[i] : 1) + 2 * (i >= 0 ? checked.kernel[i] : 1);
    }
    p->tables = (int64_t *)std::malloc(sizeof(int64_t) * (size_t)words);
    if (!p->tables) {
        delete p;
        return out_of_memory(msg, size);
    }
    int64_t *cursor = p->tables;
    p->taps = 1;
    for (int a = 0; a < kAxes; ++a) {
        build_axis(checked, a, &p->ax[a], &cursor);
        p->taps *= p->ax[a].k;
    }
    p->ctx = plan_ctx(*p);
    p->alone_floor = prefetch_floor_bytes(reads_kept_up(*p), true);
    p->blocks = nullptr;
    p->copies = single_tap_windows(*p);
    p->segments = p->copies ? nullptr : plan_row_segments(*p);
    // Planned for the one-lane separable variant, the only one blocks replace
    // (dp_execute: dense NCX, or strided channels).
    if (!p->copies && channel_blocks_pay(*p, kSepPlane, false)) {
        p->blocks = new (std::nothrow) ChannelBlocks();
        if (!p->blocks) {
            dp_plan_destroy(p);
            return out_of_memory(msg, size);
        }
        if (!plan_channel_blocks(*p, p->blocks)) {
            delete p->blocks;
            p->blocks = nullptr;
        }
    }
    *out = p;
    return DP_OK;
}

void dp_plan_destroy(dp_plan *p) {
    if (!p) return;
    delete p->blocks;
    destroy_row_segments(p->segments);
    std::free(p->tables);
    delete p;
}

const dp_desc *dp_plan_desc(const dp_plan *p) { return &p->desc; }

const char *dp_plan_kernel_name(const dp_plan *p) {
    static thread_local char buf[96];
    if (p->copies) {
        std::snprintf(buf, sizeof buf, "%s:copy", isa_name(p->isa));
        return buf;
    }
    const int v = choose_variant(*p, p->ctx.ss, p->ctx.ds, false);
    if (v == kSepPlane && p->blocks) {
        // channel_blocks/: NCX pooled as channels-last blocks by the kernel named after it
        const int n = std::snprintf(buf, sizeof buf, "%s:channel_blocks/", isa_name(p->isa));
        describe_variant(p->blocks->sub_plan[0], p->blocks->variant[0], buf + n, sizeof buf - n);
    } else {
        const int n = std::snprintf(buf, sizeof buf, "%s:", isa_name(p->isa));
        describe_variant(*p, v, buf + n, sizeof buf - n);
        if (v == kChannelBlock && p->segments) {   // (calls without indices)
            const size_t used = std::strlen(buf);
            std::snprintf(buf + used, sizeof buf - used, "+segments%lld", (long long)p->segments->count);
        }
    }
    return buf;
}

int dp_execute(const dp_plan *p, const void *src, const int64_t *src_strides, void *dst,
               const int64_t *dst_strides, int64_t *indices, const int64_t *idx_strides, int nthreads) {
    const dp_desc &d = p->desc;
    if (indices && p->kind != kMax) return DP_EVALUE;
    ExecCtx c = p->ctx;
    if (src_strides) to_logical(d, src_strides, c.ss);
    if (dst_strides) to_logical(d, dst_strides, c.ds);
    if (idx_strides) to_logical(d, idx_strides, c.xs);
    c.src = src;
    c.dst = dst;
    c.idx = indices;

    if (dp_desc_dst_size(&d) == 0) return DP_OK;   // nothing to write, whatever the path
    int64_t nt = nthreads > 0 ? nthreads : dp_get_max_threads();
    if (p->copies && !indices) return run_copy(*p, c, nt);
    const int variant = choose_variant(*p, c.ss, c.ds, indices != nullptr);
    RowFn fn = select_row_fn(p->isa, d.dtype, p->kind, variant, indices != nullptr,
                             byte_lane_maxima(*p, variant, indices != nullptr));
    if (!fn) return DP_ETYPE;
    const int64_t plane = p->ax[0].out * p->ax[1].out;
    if (dp_desc_dst_size(&d) * p->taps < kMinParallelWork) nt = 1;
    if (variant == kSepPlane && !indices && p->blocks) {   // (the blocks' contexts carry their own floors)
        const ChannelBlocks &blocks = *p->blocks;
        return run_rows(d.batch * blocks.blocks, nt, blocks.scratch_bytes, [&](int64_t t0, int64_t t1, char *scratch) {
            run_channel_blocks(blocks, c, t0, t1, scratch);
        });
    }
    if (nt == 1 && variant == kSepPlane) c.prefetch_floor = p->alone_floor;
    const size_t scratch_bytes = kernel_scratch(*p, variant, indices != nullptr, &c);
    if (variant == kChannelBlock && !indices && p->segments) {
        // Tasks (segment, row), segment-major: a chunk's rows of one segment
        // go in one call (a call's setup walks its points' window tables:
        // a call per row and segment took a 1-D k3 s1 over 4 x 4096 x 7 at 1
        // thread 1.39x the time of whole rows)
        const RowSegments &g = *p->segments;
        const int64_t esize = (int64_t)dp_dtype_size(d.dtype);
        const int64_t rows = variant_rows(variant, d.batch, d.channels, plane);
        return run_rows(rows * g.count, nt, scratch_bytes, [&](int64_t t0, int64_t t1, char *scratch) {
            while (t0 < t1) {
                const int64_t i = t0 / rows, r0 = t0 % rows, r1 = std::min(rows, r0 + (t1 - t0));
                ExecCtx s = c;
                s.ax = g.ax + i * kAxes;
                s.src = (const char *)c.src + g.iw0[i] * c.ss[4] * esize;
                s.dst = (char *)c.dst + g.ow0[i] * c.ds[4] * esize;
                fn(&s, r0, r1, scratch);
                t0 += r1 - r0;
            }
        });
    }
    return run_rows(variant_rows(variant, d.batch, d.channels, plane), nt, scratch_bytes,
                     [&](int64_t r0, int64_t r1, char *scratch) { fn(&c, r0, r1, scratch); });
}

}  // extern "C"
