// Internal: the executable plan shared by the planner and the kernels.
#ifndef DNNPOOL_PLAN_HPP
#define DNNPOOL_PLAN_HPP

#include <cstdint>
#include "dnnpool.h"

namespace dnnpool {

// Kernels see every problem as 3-D (depth, height, width); lower ranks are
// right-aligned and padded with unit axes.
constexpr int kAxes = 3;

enum Kind { kAvg = 0, kMax = 1, kQAvg = 2 };

// Per-axis window tables, computed once at planning.
struct AxisPlan {
    int64_t in, out, k, s, d, pb;   // input length, output length, kernel, stride, dilation, pad begin
    int64_t *kbeg, *kend;           // [out] valid taps are k in [kbeg, kend)
    int64_t *div;                   // [out] divisor factor of this axis (policy applied)
    // [k] outputs o in [olo[k], ohi[k]) see tap k inside the input
    int64_t *olo, *ohi;
};

// One execution: plan + tensors with logical (N, C, D, H, W) strides.
struct ExecCtx {
    const AxisPlan *ax;             // [kAxes]
    int64_t N, C;
    int64_t ss[5], ds[5], xs[5];    // src / dst / indices strides (elements), order N C D H W
    int64_t is[5];                  // index-value strides (the Indices convention), order N C D H W
    const void *src;
    void *dst;
    int64_t *idx;                   // may be null
    float qscale;                   // quantized: x_scale / y_scale
    float qzp_out;                  // quantized: y zero point
    int32_t qzp_in;                 // quantized: x zero point
    int32_t full_window;            // every output's window lies inside the input (no border logic)
};

// Computes rows [r0, r1) of the row space the variant defines.
typedef void (*RowFn)(const ExecCtx *ctx, int64_t r0, int64_t r1, void *scratch);

enum Variant { kChannelInner = 0, kWidthInner = 1, kChannelInnerStrided = 2, kVariants = 3 };
enum Isa { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };

// Selected at planning; null when the combination does not exist.
RowFn select_row_fn(int isa, int dtype, int kind, int variant, bool with_idx);

}  // namespace dnnpool



namespace dnnpool {

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
