// Internal: pooling whose every window is one input element (kernel 1, no
// window in the padding) is a copy of src subsampled by the strides; this
// plans and runs it as one, over any strides.
#ifndef DNNPOOL_COPY_HPP
#define DNNPOOL_COPY_HPP

#include <cstdint>

namespace dnnpool {

// Bytes below which a run is not split, nor a copy threaded: a piece's
// memcpy would cost less than handing it to another core.
constexpr int64_t kCopyPieceMinBytes = 256 << 10;

// A strided copy of a 5-D tensor: axes of one element dropped, the rest in
// dst's memory order, merged where both tensors run on contiguously.  The
// innermost axis (`run` elements) goes by memcpy where it is dense in both,
// split into `pieces` for threads; every other axis is looped over.
struct CopyPlan {
    int outer;                      // axes looped over, outermost first
    int64_t n[5], ss[5], ds[5];     // their sizes and src / dst strides (elements)
    int64_t run, run_ss, run_ds;    // the innermost axis
    int64_t pieces;                 // splits of each run
    int64_t esize;                  // bytes per element
    int64_t rows() const;           // (outer index, piece) pairs
};

// Plans the copy of sizes[5] elements of esize bytes from src strides ss to
// dst strides ds, its runs split into about `pieces` (at least one; fewer
// where runs are short).
CopyPlan plan_copy(const int64_t sizes[5], const int64_t ss[5], const int64_t ds[5], int64_t esize, int64_t pieces);

// Copies rows [r0, r1) of the plan (CopyPlan::rows); src and dst must not overlap.
void copy_rows(const CopyPlan &cp, const void *src, void *dst, int64_t r0, int64_t r1);

}  // namespace dnnpool
#endif
