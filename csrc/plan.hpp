// Internal: the executable plan shared by the planner and the kernels.
#ifndef DNNPOOL_PLAN_HPP
#define DNNPOOL_PLAN_HPP

#include <cstddef>
#include <cstdint>
#include "dnnpool.h"

namespace dnnpool {

// Kernels see every problem as 3-D (depth, height, width); lower ranks are
// right-aligned and padded with unit axes.
constexpr int kAxes = 3;
// A cache line: scratch rows that the kernels stream start on one.
constexpr int64_t kLineBytes = 64;

enum Kind { kAvg = 0, kMax = 1, kQAvg = 2 };

// Per-axis window tables, computed once at planning.
struct AxisPlan {
    int64_t in, out, k, s, d, pb;   // input length, output length, kernel, stride, dilation, pad begin
    int64_t *kbeg, *kend;           // [out] valid taps are k in [kbeg, kend)
    int64_t *div;                   // [out] divisor factor of this axis (policy applied)
    // [k] outputs o in [olo[k], ohi[k]) see tap k inside the input
    int64_t *olo, *ohi;
};

// Scratch of the separable kernel (byte offsets into one per-thread block).
// Rows hold `lanes` values per position: 1 for NCX (one channel per plane),
// C for NXC (channels are the contiguous lanes).
struct SepLayout {
    int64_t lanes;          // values per position
    int64_t wp;             // positions of a padded input row: (OW-1)*s + (k-1)*d + 1
    int64_t chunk;          // output rows computed together (same n, c, od)
    int64_t align;          // values, stride-1 rows: output rows per shared block (taps_shared), else 1
    int64_t rows;           // input rows kept per depth tap for one chunk
    int64_t planes;         // depth taps kept (1 when the vertical pass doubles)
    int32_t h_dbl, v_dbl;   // horizontal / vertical pass by doubling (s = d = 1 only)
    int64_t h_fact;         // horizontal pass in two fused passes of this factor (0: not)
    int64_t xlen;           // positions allocated for xp (phases need a multiple of the stride)
    int64_t phase_len;      // positions per stride phase: ceil(wp / s)
    size_t xp, xpi;         // padded input row (values, indices)
    size_t ph, phi;         // the row split into stride phases
    size_t toff;            // tap offsets of one pass: max(kw, kd * kh) entries
    size_t voff;            // (d, h) tap offsets of each row of a chunk: chunk * kd * kh entries
    size_t hb, hbi;         // horizontally pooled rows [planes][rows][OW*lanes]
    size_t vr, vri;         // vertical result: [chunk][OW*lanes] when doubling, else one row
    int32_t flat;           // one lane, no depth taps: a chunk's rows are stacked in fbuf
    int32_t vstream;        // values, H slid by window blocks streaming down whole planes (no depth taps)
    int32_t strips;         // values with C lanes: (d, h) taps strip by strip into rows stacked in hb
    int32_t plane;          // values, "same" stride-1 windows over short rows: chunks as flat planes (plane_fits)
    size_t fbuf[4], fbufi[4];   // flat: padded rows, phases, two pass results
    size_t wdiv, wcnt;      // per output column: divisor factor (as Acc / float), valid tap count
    int32_t w_doubled;      // one lane, maxima or float sums, stride 1: the W pass doubles in registers (kernels_doubling.hpp)
    int32_t w_phases;       // strided W pass, positions of fewer lanes than a vector: split into phases first
    size_t total;
};
// Windows the doubled W pass takes: enough taps for the shuffles to beat
// loading them, a top level (a power of two) of at most a vector, and
// shifts within a pair of vectors (maxima: up to 2 VL - 1 taps; sums: their
// digits' shifts, up to VL), on 64-byte vectors (a shift known at run time is
// one two-source permute).
constexpr bool doubling_fits(int64_t vec_bytes, int64_t acc_bytes, int64_t kw, bool is_max) {
    return vec_bytes == 64 && kw >= 4 && (is_max ? kw < 2 * (vec_bytes / acc_bytes) : kw <= vec_bytes / acc_bytes);
}
// Bytes the doubled W pass may read past a scratch row's end (the scratch
// ends this far on).
constexpr size_t kDoublingSlackBytes = 6 * 64;

// One execution: plan + tensors with logical (N, C, D, H, W) strides.
struct ExecCtx {
    const AxisPlan *ax;             // [kAxes]
    const AxisPlan *whole;          // [kAxes] the axes size-based choices read: ax's, or the whole row's for a row segment
    int64_t N, C;
    int64_t ss[5], ds[5], xs[5];    // src / dst / indices strides (elements), order N C D H W
    int64_t is[5];                  // index-value strides (the Indices convention), order N C D H W
    const void *src;
    void *dst;
    int64_t *idx;                   // may be null
    float qscale;                   // quantized: x_scale / y_scale
    float qzp_out;                  // quantized: y zero point
    int32_t qzp_in;                 // quantized: x zero point
    SepLayout sep;                  // separable kernel only
    int64_t taps_max;               // channel-block kernel: depth*height taps of a window (scratch rows)
    int64_t prefetch_floor;         // src bytes from which kernels prefetch (the plan's, or its one-thread floor)
    int64_t uncached_floor;         // dst bytes from which ordered_row writes past the caches (the plan's)
    int64_t pair_ordered_floor;     // src bytes from which pair_rows combines rows in address order (the plan's)
};

// The src size (bytes) from which kernels prefetch ahead of their loads:
// tensors that stream from DRAM, not from the last-level cache.  `kept_up`:
// windows whose reads the hardware prefetchers keep up with from that cache
// (prefetch_floor_bytes).  DNNPOOL_PREFETCH_FLOOR (bytes) overrides it; read
// when a plan is made.  `alone`: the one-lane separable passes run by one
// thread, which prefetch from a quarter of the L3 (windows not kept up), no
// less than kPrefetchAloneMinBytes and no more than kPrefetchMinBytes.
constexpr int64_t kPrefetchMinBytes = 16 << 20, kPrefetchAloneMinBytes = 8 << 20;
int64_t prefetch_floor_bytes(bool kept_up, bool alone = false);

// The dst size (bytes) from which the channel-block kernel's rows read in
// address order (ordered_row) are written past the caches (UncachedRow), on
// the CPUs where that pays: an output this large would not stay in the
// private caches for a later reader anyway.  DNNPOOL_UNCACHED_FLOOR (bytes)
// overrides it; read when a plan is made.
constexpr int64_t kUncachedMinBytes = 4 << 20;
int64_t uncached_floor_bytes();

// The src size (bytes) from which the one-lane pair_rows combines each
// window's rows in address order first (SepPass::rows_in_order; its extra
// pass costs from cache), on the CPUs where that pays; elsewhere never.
// DNNPOOL_PAIR_ORDERED_FLOOR (bytes) overrides it; read when a plan is made.
constexpr int64_t kPairOrderedMinBytes = 32 << 20;
int64_t pair_ordered_floor_bytes();

// Computes rows [r0, r1) of the row space the variant defines.
typedef void (*RowFn)(const ExecCtx *ctx, int64_t r0, int64_t r1, void *scratch);

// Row spaces: channel-block (n, od, oh) over NXC with unit channel stride;
// separable planes (n, c, od, oh) with one lane (any strides) or (n, od, oh)
// with C lanes (unit channel stride); global planes (n, c) of dense planes.
enum Variant {
    kChannelBlock = 0, kSepPlane = 1, kSepLanes = 2, kGlobalPlane = 3, kVariants = 4
};
// (in the order of what a CPU has, but kAvx512Emulated: a test's choice;
// kAvx512Bf16 is kAvx512 with AVX512_BF16's conversions for bf16)
enum Isa { kBaseline = 0, kAvx2 = 1, kAvx512 = 2, kAvx512Emulated = 3, kAvx512Bf16 = 4 };

// Selected at planning; null when the combination does not exist.
// byte_lanes: 8-bit maxima pooled in byte lanes (plan.cpp's byte_lane_maxima).
RowFn select_row_fn(int isa, int dtype, int kind, int variant, bool with_idx, bool byte_lanes);

// Moves a block of `channels` planes (planar: channel stride cs, (depth,
// height, width) strides and sizes) to a dense channels-last block or back
// (kernels_transpose.hpp); by element size.
typedef void (*MoveFn)(void *planar, int64_t cs, const int64_t *strides, const int64_t *sizes, int64_t channels,
                       void *last);
MoveFn select_move_fn(int isa, int64_t bytes, bool to_last);

// Passes of a window reduction of k taps by doubling (sparse-table style):
// max overlaps two power-of-two windows, sums add one piece per set bit.
static inline int64_t doubling_passes(int64_t k, bool is_max) {
    int64_t lg = 0, bits = 0;
    for (int64_t v = k; v > 1; v >>= 1) ++lg;
    for (int64_t v = k; v; v >>= 1) bits += v & 1;
    return is_max ? lg + 1 : lg + bits;
}

// Window blocks (van Herk / Gil-Werman: suffix, prefix and merge passes)
// cost O(1) per output but run along positions; they pay once a position's
// unit (values per position) is long enough to hide the per-position loop
// overhead (short units, e.g. NXC channels, stay with doubling).
// From k9 on they save enough per position to pay on units half as long
// (rows of 128: 0.79-0.97 of shared taps' time at k9-k13, 1.09 at k7 avg).
constexpr int64_t kBlockPasses = 3;
constexpr int64_t kBlockMinUnit = 256;
static inline bool blocks_win(int64_t k, bool is_max, int64_t unit) {
    const int64_t min_unit = k >= 9 ? kBlockMinUnit / 2 : kBlockMinUnit;
    return unit >= min_unit && kBlockPasses < doubling_passes(k, is_max);
}
// Passes of a stride-1 undilated window reduction with `unit` values per position.
static inline int64_t slide_passes(int64_t k, bool is_max, int64_t unit) {
    return blocks_win(k, is_max, unit) ? kBlockPasses : doubling_passes(k, is_max);
}

// Whether an axis's windows share no positions with their neighbours (one
// window, or a stride past the dilated extent).
static inline bool windows_disjoint(const AxisPlan &A) { return A.out == 1 || A.s >= (A.k - 1) * A.d + 1; }

// The small strided windows along W (k2/k3 s1, k2/k3 s2, k3 s3, k4 s4, k1
// s2-s4, and windows with gaps between them: k2 s3, k2/k3 s4) whose
// one-lane rows the separable passes finish in registers
// (SepPass::fused_window, direct_window), as 16 * s + k; 0 for others.
static inline int small_strided_code(const AxisPlan &AW) {
    if (AW.s > 4 || AW.k > 4) return 0;   // (bounded first: k18 s1 would read as 0x22)
    const int code = (int)(16 * AW.s + AW.k);
    return code == 0x12 || code == 0x13 || code == 0x21 || code == 0x22 || code == 0x23 || code == 0x31 ||
                   code == 0x32 || code == 0x33 || code == 0x41 || code == 0x42 || code == 0x43 || code == 0x44
               ? code
               : 0;
}

// Rows of maxima the channel kernel decimates (decimated_row): two or more
// points a vector (C channels, `lanes` accumulators), stride-2 windows of 2
// or 3 undilated columns whose first window holds a column.  The kernel
// also needs dense rows and a last window holding a column; the planner
// keeps these rows from the separable passes.
static inline bool decimated_rows(bool is_max, const AxisPlan &AW, int64_t C, int64_t lanes) {
    return is_max && 2 * C <= lanes && AW.s == 2 && AW.d == 1 && (AW.k == 2 || AW.k == 3) && AW.pb < AW.k;
}

// The W pass of values along a stride-1 undilated axis, by cost in loads (a
// pass's store and stream counted as kPassLoads): tap by tap, fused with the
// finish (k loads; fewer with C lanes, taps_loads); factored into two fused
// passes, windows of `a` taps, then ceil(k / a) (maxima, the last one
// overlapping) or k / a of those plus the k mod a leftover taps (sums):
// O(a + k / a) loads and two passes more; or sliding passes of `unit` values
// per position.
constexpr int64_t kPassLoads = 3;
static inline int64_t factored_loads(int64_t k, int64_t a, bool is_max) {
    const int64_t b = is_max ? (k + a - 1) / a : k / a;
    return a + b + (is_max ? 0 : k - a * b);
}
// Values over one lane whose stride-1 undilated windows keep the plane's
// size ("same" padding), 2-D or 1-D, with rows of at most kPlaneMaxRow
// positions and windows of at most kPlaneMaxTaps along each axis, pool a
// chunk of rows as one flat run of positions (kernels_sep.hpp chunk_plane)
// instead of widening each short row.  Measured against the widened rows,
// f32, 1 thread: k3 on planes of 7-64 0.37-0.69, k5 0.61-0.63, k7 0.72;
// rows of 72-112 0.93-1.29, k9-k13 0.65-1.35.  Quantized averages (u8 k3
// s1 p1 exclude-pad 192x28x28): 706 -> 29 us, the widened rows having
// finished each output one by one.  C lanes (NXC) pool their rows' (w, c)
// values the same way where choose_variant says so.
constexpr int64_t kPlaneMaxRow = 64, kPlaneMaxTaps = 7;
static inline bool plane_fits(const AxisPlan &AD, const AxisPlan &AH, const AxisPlan &AW) {
    auto same = [](const AxisPlan &A) { return A.s == 1 && A.d == 1 && A.out == A.in && A.k <= kPlaneMaxTaps; };
    return AD.in == 1 && AD.out == 1 && AD.k == 1 && same(AH) && same(AW) && AW.in <= kPlaneMaxRow;
}
// Rows a flat plane reads as one run of values, in both tensors (strides in
// elements, logical N C D H W order): positions `lanes` values apart (1: NCX
// rows; C: NXC rows of (w, c) values, one value per channel), rows right
// after one another (or a single row).  The planner (NXC rule) and
// SepPass::plane_window ask the same.
static inline bool flat_plane_rows(const int64_t ss[5], const int64_t ds[5], const AxisPlan &AH, const AxisPlan &AW,
                                   int64_t lanes) {
    return ss[4] == lanes && ds[4] == lanes && (AH.in == 1 || (ss[3] == AW.in * lanes && ds[3] == AW.out * lanes));
}

// Output rows of a block whose stride-1 windows share their rows' loads and
// partial results (taps_shared); with C lanes (unit > 1) the W pass's taps
// share output columns the same way from k = kShareRows on: (k + G - 1) / G
// loads and (k + 3G - 6) / G combines per output, costed as their mean
// (rounded up).
constexpr int64_t kShareRows = 4;
static inline int64_t taps_loads(int64_t k, int64_t unit) {
    constexpr int64_t G = kShareRows;
    const int64_t twice_mean_g = (k + G - 1) + (k + 3 * G - 6);   // 2G times the mean
    return unit > 1 && k >= G ? (twice_mean_g + 2 * G - 1) / (2 * G) : k;
}
enum { kWTaps = 0, kWSlide = 1 };   // w_values_plan: otherwise the factor a > 1
static inline int64_t w_values_plan(int64_t k, bool is_max, int64_t unit, int64_t *cost = nullptr) {
    int64_t best = taps_loads(k, unit), plan = kWTaps;
    const int64_t slide = slide_passes(k, is_max, unit) * (kPassLoads + 2);
    if (slide < best) { best = slide; plan = kWSlide; }
    for (int64_t a = 2; a * 2 <= k; ++a) {
        const int64_t c = 2 * kPassLoads + factored_loads(k, a, is_max);
        if (c < best) { best = c; plan = a; }
    }
    if (cost) *cost = best;
    return plan;
}

// Values along D/H rows: a window of k rows slides by window blocks over
// rows long enough for them from kMinSlidRows on, or by doubling once a
// pass costs under kSharedTapsPerPass taps; otherwise rows go tap by tap, a
// few output rows sharing their loads (taps_shared).  Measured: shared taps
// took 0.64-0.87 of doubling's time up to k21; at k7 blocks took 0.71 of
// shared taps' time over NCX rows of 256 and 1.1 over NXC rows of 8192 values
// (C lanes: from k9 on, where shared taps took 1.14-1.25 of the blocks').
constexpr int64_t kMinSlidRows = 7, kMinSlidRowsLanes = 9;
constexpr int64_t kSharedTapsPerPass = 5;
static inline bool rows_slide(int64_t k, bool is_max, int64_t unit, bool lanes) {
    return (k >= (lanes ? kMinSlidRowsLanes : kMinSlidRows) && blocks_win(k, is_max, unit)) ||
           k > kSharedTapsPerPass * doubling_passes(k, is_max);
}

// Rows of more input columns than kIdxColumnsMax keep the taps (bounded scratch).
constexpr int64_t kIdxColumnsMax = 2048;
// Output rows that pool their columns together (stride-1 rows, full windows).
constexpr int kIdxShareRows = 4;
// MaxPool indices over NXC (the channel block): a window's input columns
// pooled down their rows once per output row, then combined across the
// window with their keys (kernels_columns.hpp) when that takes fewer
// combines, a column combine counting twice (it also orders keys): rows per
// column times the columns an output adds (the stride) plus twice the
// window's columns, against every tap.
static inline bool idx_columns_pay(int64_t rows, int64_t kw, int64_t sw, int64_t columns) {
    return columns <= kIdxColumnsMax && rows * sw + 2 * kw < rows * kw;
}
// Its scratch per input column: the pooled values and keys of each shared
// row and their window blocks' suffixes, for a channel block of 4 vectors of
// at most 64 bytes.
constexpr int64_t kIdxColumnBytes = (2 * kIdxShareRows + 2) * 4 * 64;


// Taps k in [0, K) of a window whose tap 0 sits at `start` (dilation d) that
// land inside [0, n): always a contiguous range [*kb, *ke), possibly empty.
static inline void tap_range(int64_t start, int64_t n, int64_t K, int64_t d, int64_t *kb, int64_t *ke) {
    int64_t b = start >= 0 ? 0 : (-start + d - 1) / d;
    int64_t e = (n - 1 - start) < 0 ? 0 : (n - 1 - start) / d + 1;
    if (e > K) e = K;
    if (b > K) b = K;
    if (e < b) e = b;
    *kb = b;
    *ke = e;
}

}  // namespace dnnpool
#endif
