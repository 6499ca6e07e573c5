/*
 * dnnpool C interface: pooling descriptor, plan and execution.
 *
 * The split follows oneDNN: a descriptor (plain struct) holds the attributes and
 * the semantic policies; dp_desc_init() validates it and infers the output
 * shape; a plan is built once from a valid descriptor (per-axis window tables,
 * kernel choice) and executed any number of times, concurrently if wished.
 * Nothing here touches Python; every function may be called without the GIL.
 *
 * Layout of a tensor is described by element strides given in data_format
 * order (NCX: N, C, X...; NXC: N, X..., C), exactly numpy's strides divided by
 * the item size, so views of any layout can be passed without copying.
 */
#ifndef DNNPOOL_H
#define DNNPOOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a struct layout or a function signature below changes. */
#define DP_ABI_VERSION 1
#define DP_MAX_SPATIAL 3
#define DP_ERRMSG_SIZE 512

typedef enum { DP_AVG = 0, DP_MAX = 1 } dp_kind;

typedef enum {
    DP_F32 = 0, DP_F64 = 1, DP_F16 = 2, DP_BF16 = 3, DP_S8 = 4, DP_U8 = 5
} dp_dtype;

typedef enum { DP_NCX = 0, DP_NXC = 1 } dp_format;
typedef enum { DP_FLOOR = 0, DP_CEIL = 1 } dp_rounding;

typedef enum {
    DP_PAD_NONE = 0, DP_PAD_SAME_UPPER = 1, DP_PAD_SAME_LOWER = 2, DP_PAD_VALID = 3
} dp_auto_pad;

/* Divisor of an average when padding is counted (exclude_pad = 0). */
typedef enum {
    DP_DIV_KERNEL = 0,        /* oneDNN Graph: prod(kernel), always */
    DP_DIV_PADDED_EXTENT = 1  /* ONNX: taps inside [-pad_begin, n + pad_end) */
} dp_pad_divisor;

/* Spatial part of MaxPool indices (ONNX storage_order). */
typedef enum { DP_ROW_MAJOR = 0, DP_COL_MAJOR = 1 } dp_index_order;

/* Error codes: 0 is success. */
typedef enum {
    DP_OK = 0,
    DP_EVALUE = 1,   /* a bad value, shape or combination (Python: ValueError) */
    DP_ETYPE = 2,    /* an unsupported data type (Python: TypeError) */
    DP_ENOMEM = 3    /* allocation failed (Python: MemoryError) */
} dp_status;

typedef struct dp_desc {
    /* ---- inputs, filled by the caller ---- */
    int32_t kind;              /* dp_kind */
    int32_t dtype;             /* dp_dtype of src and dst */
    int32_t format;            /* dp_format */
    int32_t ndims;             /* spatial rank, 1..3 */
    int64_t batch;             /* N */
    int64_t channels;          /* C */
    int64_t src_spatial[DP_MAX_SPATIAL];
    int64_t kernel[DP_MAX_SPATIAL];
    int64_t strides[DP_MAX_SPATIAL];
    int64_t dilations[DP_MAX_SPATIAL];    /* 1 = dense */
    int64_t pads_begin[DP_MAX_SPATIAL];   /* ignored unless auto_pad is NONE */
    int64_t pads_end[DP_MAX_SPATIAL];
    int32_t exclude_pad;       /* AvgPool: divisor counts only input taps */
    int32_t rounding;          /* dp_rounding */
    int32_t auto_pad;          /* dp_auto_pad */
    int32_t pad_divisor;       /* dp_pad_divisor, used when !exclude_pad */
    int32_t drop_end_pad_windows; /* ONNX ceil rule: drop the last window if it starts at or past n + pad_begin */
    int32_t index_order;       /* dp_index_order */
    /* Quantized AvgPool (s8/u8): y = sat(rne(mean(x_scale*(x - x_zp)) / y_scale + y_zp)) */
    int32_t quantized;
    float src_scale, dst_scale;
    int32_t src_zero_point, dst_zero_point;
    /* ---- outputs of dp_desc_init ---- */
    int64_t dst_spatial[DP_MAX_SPATIAL];
    int64_t resolved_pads_begin[DP_MAX_SPATIAL];
    int64_t resolved_pads_end[DP_MAX_SPATIAL];
} dp_desc;

/* Fills every input field with the oneDNN Graph defaults for a kind and rank:
 * strides and dilations 1, no padding, floor, NXC, f32, kernel-size divisor. */
void dp_desc_defaults(dp_desc *d, int32_t kind, int32_t ndims);

/* Validates d, resolves auto_pad and computes the output shape.  On failure
 * returns DP_EVALUE or DP_ETYPE and writes a message naming the attribute, the
 * value and the rule into errmsg (which may be NULL). */
int dp_desc_init(dp_desc *d, char *errmsg, size_t errmsg_size);

/* Number of elements of src / dst described by an initialised descriptor. */
int64_t dp_desc_src_size(const dp_desc *d);
int64_t dp_desc_dst_size(const dp_desc *d);
size_t dp_dtype_size(int32_t dtype);

typedef struct dp_plan dp_plan;

/* Builds a plan from an initialised descriptor (it re-validates it).  The plan
 * is immutable: one plan may be executed from many threads at once. */
int dp_plan_create(const dp_desc *d, dp_plan **out, char *errmsg, size_t errmsg_size);
void dp_plan_destroy(dp_plan *p);
const dp_desc *dp_plan_desc(const dp_plan *p);
/* Short name of the kernel the plan chose for contiguous tensors, for reports. */
const char *dp_plan_kernel_name(const dp_plan *p);

/* Executes the plan.
 *  src, dst:          base pointers of the tensors (dtype of the descriptor); dst
 *                     (and indices) must not overlap src
 *  src_strides, dst_strides: element strides in data_format order (ndims + 2 each);
 *                     NULL means dense row-major
 *  indices:           NULL, or int64 output of dst's shape (MaxPool only)
 *  idx_strides:       element strides of indices, NULL for dense
 *  nthreads:          0 = the default (dp_get_max_threads), else at most this; the
 *                     caller and up to nthreads - 1 pool threads take chunks of the work,
 *                     and one call at a time uses the pool (concurrent calls run alone)
 * Returns DP_OK or DP_EVALUE (indices asked of AvgPool). */
int dp_execute(const dp_plan *p, const void *src, const int64_t *src_strides,
               void *dst, const int64_t *dst_strides,
               int64_t *indices, const int64_t *idx_strides, int nthreads);

/* Instruction set the kernels dispatch to on this CPU: "avx512", "avx2" or "baseline". */
const char *dp_isa(void);
/* Default thread count: the one set with dp_set_num_threads, or OpenMP's
 * (omp_get_max_threads: OMP_NUM_THREADS, threadpoolctl limits) after a set of 0. */
int dp_get_max_threads(void);
void dp_set_num_threads(int n);

#ifdef __cplusplus
}
#endif
#endif /* DNNPOOL_H */
