// Descriptor: validation, auto_pad resolution and output shape inference.
// Messages name the attribute (as the Python API spells it), the value and
// the rule, because they reach users unchanged.
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "dnnpool.h"
#include "plan.hpp"

using namespace dnnpool;

namespace {

// Attribute values beyond this are refused: it keeps every derived product
// (dilated kernel, padded length, element counts) far from int64 overflow.
constexpr int64_t kMaxAttr = (int64_t)1 << 31;
constexpr int64_t kMaxElements = (int64_t)1 << 56;
const char *const kAxisNames = "spatial axis";

int fail(char *msg, size_t size, int code, const char *fmt, ...) {
    if (msg && size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, size, fmt, ap);
        va_end(ap);
    }
    return code;
}

// "[a, b, c]" of the first n values.
const char *fmt_list(char *buf, size_t size, const int64_t *v, int n) {
    size_t used = 0;
    used += snprintf(buf + used, size - used, "[");
    for (int i = 0; i < n && used < size; ++i)
        used += snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)v[i]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

// Checks lo <= v[i] <= kMaxAttr for every spatial axis.
int check_list(const char *name, const int64_t *v, int n, int64_t lo, const char *rule,
               char *msg, size_t size) {
    char buf[160];
    for (int i = 0; i < n; ++i) {
        if (v[i] < lo)
            return fail(msg, size, DP_EVALUE, "%s: value %s is invalid: %s (%s %d is %lld)", name,
                        fmt_list(buf, sizeof buf, v, n), rule, kAxisNames, i, (long long)v[i]);
        if (v[i] > kMaxAttr)
            return fail(msg, size, DP_EVALUE, "%s: value %s is invalid: entries must be at most 2**31 (%s %d)",
                        name, fmt_list(buf, sizeof buf, v, n), kAxisNames, i);
    }
    return DP_OK;
}

const char *dtype_name(int32_t t) {
    static const char *const names[] = {"f32", "f64", "f16", "bf16", "s8", "u8"};
    return (t >= 0 && t <= DP_U8) ? names[t] : "?";
}

int check_enums(const dp_desc *d, char *msg, size_t size) {
    struct { const char *name; int32_t value, hi, code; } e[] = {
        {"kind", d->kind, DP_MAX, DP_EVALUE},
        {"dtype", d->dtype, DP_U8, DP_ETYPE},
        {"data_format", d->format, DP_NXC, DP_EVALUE},
        {"rounding_type", d->rounding, DP_CEIL, DP_EVALUE},
        {"auto_pad", d->auto_pad, DP_PAD_VALID, DP_EVALUE},
        {"include_pad_divisor", d->pad_divisor, DP_DIV_PADDED_EXTENT, DP_EVALUE},
        {"index_order", d->index_order, DP_COL_MAJOR, DP_EVALUE},
    };
    for (auto &x : e)
        if (x.value < 0 || x.value > x.hi)
            return fail(msg, size, x.code,
                        "%s: value %d is not one of the %d known codes", x.name, (int)x.value, (int)x.hi + 1);
    return DP_OK;
}

int check_types(const dp_desc *d, char *msg, size_t size) {
    const bool integer = d->dtype == DP_S8 || d->dtype == DP_U8;
    if (d->kind == DP_MAX && d->exclude_pad)
        return fail(msg, size, DP_EVALUE, "exclude_pad: value True is invalid for MaxPool: exclude_pad is an AvgPool attribute");
    if (d->kind == DP_MAX && d->quantized)
        return fail(msg, size, DP_EVALUE, "src_scale: quantization parameters are invalid for MaxPool: only AvgPool is quantized");
    if (d->kind == DP_AVG && integer && !d->quantized)
        return fail(msg, size, DP_ETYPE,
                    "dtype: value %s is invalid for AvgPool: average pooling of an integer type needs "
                    "src_scale, src_zero_point, dst_scale and dst_zero_point (quantized AvgPool)",
                    dtype_name(d->dtype));
    if (d->quantized && !integer)
        return fail(msg, size, DP_ETYPE, "dtype: value %s is invalid for quantized AvgPool: it must be s8 or u8",
                    dtype_name(d->dtype));
    if (d->quantized) {
        const int32_t lo = d->dtype == DP_S8 ? -128 : 0, hi = d->dtype == DP_S8 ? 127 : 255;
        struct { const char *name; float v; } scales[] = {{"src_scale", d->src_scale}, {"dst_scale", d->dst_scale}};
        for (auto &s : scales)
            if (!(std::isfinite(s.v) && s.v > 0.0f))
                return fail(msg, size, DP_EVALUE, "%s: value %g is invalid: a scale must be finite and positive", s.name, (double)s.v);
        if (!std::isfinite(d->src_scale / d->dst_scale))
            return fail(msg, size, DP_EVALUE,
                        "src_scale: value %g is invalid with dst_scale %g: their ratio overflows float32 (the kernels "
                        "scale sums by src_scale / dst_scale)",
                        (double)d->src_scale, (double)d->dst_scale);
        struct { const char *name; int32_t v; } zps[] = {{"src_zero_point", d->src_zero_point}, {"dst_zero_point", d->dst_zero_point}};
        for (auto &z : zps)
            if (z.v < lo || z.v > hi)
                return fail(msg, size, DP_EVALUE, "%s: value %d is invalid: it must lie in [%d, %d] for %s", z.name,
                            (int)z.v, (int)lo, (int)hi, dtype_name(d->dtype));
    }
    return DP_OK;
}

// Output length of one axis and the resolved pads.
int resolve_axis(dp_desc *d, int i, char *msg, size_t size) {
    const int64_t n = d->src_spatial[i], k = d->kernel[i], s = d->strides[i], dl = d->dilations[i];
    const int64_t ek = (k - 1) * dl + 1;
    int64_t pb = d->pads_begin[i], pe = d->pads_end[i];
    if (d->auto_pad == DP_PAD_VALID) {
        pb = pe = 0;
    } else if (d->auto_pad == DP_PAD_SAME_UPPER || d->auto_pad == DP_PAD_SAME_LOWER) {
        const int64_t rem = n % s == 0 ? s : n % s;
        const int64_t total = ek > rem ? ek - rem : 0;
        const int64_t small = total / 2, big = total - small;
        pb = d->auto_pad == DP_PAD_SAME_UPPER ? small : big;
        pe = d->auto_pad == DP_PAD_SAME_UPPER ? big : small;
    }
    const int64_t span = n + pb + pe - ek;
    if (span < 0)
        return fail(msg, size, DP_EVALUE,
                    "kernel: value %lld on %s %d is invalid: the dilated kernel (%lld) must not exceed the "
                    "padded input (%lld + %lld + %lld = %lld)",
                    (long long)k, kAxisNames, i, (long long)ek, (long long)n, (long long)pb, (long long)pe,
                    (long long)(n + pb + pe));
    int64_t out = (d->rounding == DP_CEIL ? (span + s - 1) / s : span / s) + 1;
    if (d->rounding == DP_CEIL && d->drop_end_pad_windows && out > 1 && (out - 1) * s >= n + pb) --out;
    d->dst_spatial[i] = out;
    d->resolved_pads_begin[i] = pb;
    d->resolved_pads_end[i] = pe;
    return DP_OK;
}

// An average needs a non-zero divisor for every output: refuse the windows
// whose divisor (input taps, or padded-extent taps) would be zero.
int check_divisors(const dp_desc *d, char *msg, size_t size) {
    if (d->kind != DP_AVG) return DP_OK;
    const bool input_only = d->exclude_pad != 0;
    if (!input_only && d->pad_divisor == DP_DIV_KERNEL) return DP_OK;
    for (int i = 0; i < d->ndims; ++i) {
        const int64_t pb = d->resolved_pads_begin[i], pe = d->resolved_pads_end[i];
        const int64_t n = d->src_spatial[i];
        for (int64_t o = 0; o < d->dst_spatial[i]; ++o) {
            const int64_t start = o * d->strides[i] - pb;
            int64_t kb, ke;
            if (input_only) tap_range(start, n, d->kernel[i], d->dilations[i], &kb, &ke);
            else tap_range(start + pb, n + pb + pe, d->kernel[i], d->dilations[i], &kb, &ke);
            if (kb == ke)
                return fail(msg, size, DP_EVALUE,
                            input_only
                                ? "exclude_pad: value True is invalid here: the window of output %lld on %s %d "
                                  "covers no input element (all its taps fall in the padding), so its average is undefined"
                                : "include_pad_divisor: value padded_extent is invalid here: the window of output "
                                  "%lld on %s %d covers no element of the padded input, so its average is undefined",
                            (long long)o, kAxisNames, i);
        }
    }
    return DP_OK;
}

int check_sizes(const dp_desc *d, char *msg, size_t size) {
    if (d->batch < 0 || d->channels < 0 || d->batch > kMaxAttr || d->channels > kMaxAttr)
        return fail(msg, size, DP_EVALUE, "src_shape: batch %lld and channels %lld must lie in [0, 2**31]",
                    (long long)d->batch, (long long)d->channels);
    int rc = check_list("src_shape", d->src_spatial, d->ndims, 1, "spatial dimensions must be positive", msg, size);
    if (rc) return rc;
    double elems = (double)d->batch * (double)d->channels;
    for (int i = 0; i < d->ndims; ++i) elems *= (double)d->src_spatial[i];
    if (elems > (double)kMaxElements)
        return fail(msg, size, DP_EVALUE, "src_shape: %.3g elements is invalid: at most 2**56 are supported", elems);
    return DP_OK;
}

}  // namespace

extern "C" {

size_t dp_dtype_size(int32_t dtype) {
    switch (dtype) {
    case DP_F32: return 4;
    case DP_F64: return 8;
    case DP_F16: case DP_BF16: return 2;
    case DP_S8: case DP_U8: return 1;
    }
    return 0;
}

void dp_desc_defaults(dp_desc *d, int32_t kind, int32_t ndims) {
    std::memset(d, 0, sizeof *d);
    d->kind = kind;
    d->ndims = ndims;
    d->dtype = DP_F32;
    d->format = DP_NXC;
    d->batch = d->channels = 1;
    for (int i = 0; i < DP_MAX_SPATIAL; ++i) {
        d->src_spatial[i] = d->kernel[i] = d->strides[i] = d->dilations[i] = 1;
    }
    d->src_scale = d->dst_scale = 1.0f;
}

int dp_desc_init(dp_desc *d, char *msg, size_t size) {
    if (msg && size) msg[0] = '\0';
    if (d->ndims < 1 || d->ndims > DP_MAX_SPATIAL)
        return fail(msg, size, DP_EVALUE,
                    "src_shape: rank %d is invalid: pooling takes N, C and 1 to 3 spatial dimensions (rank 3 to 5)",
                    (int)d->ndims + 2);
    int rc;
    if ((rc = check_enums(d, msg, size))) return rc;
    if ((rc = check_types(d, msg, size))) return rc;
    if ((rc = check_sizes(d, msg, size))) return rc;
    const int n = d->ndims;
    if ((rc = check_list("kernel", d->kernel, n, 1, "kernel sizes must be positive", msg, size))) return rc;
    if ((rc = check_list("strides", d->strides, n, 1, "strides must be positive", msg, size))) return rc;
    if ((rc = check_list("dilations", d->dilations, n, 1, "dilations must be positive (1 means dense)", msg, size)))
        return rc;
    if (d->auto_pad == DP_PAD_NONE) {
        if ((rc = check_list("pads_begin", d->pads_begin, n, 0, "pads must be non-negative", msg, size))) return rc;
        if ((rc = check_list("pads_end", d->pads_end, n, 0, "pads must be non-negative", msg, size))) return rc;
    }
    if (d->quantized) {
        double taps = 1;
        for (int i = 0; i < n; ++i) taps *= (double)d->kernel[i];
        if (taps > (double)(1 << 23))
            return fail(msg, size, DP_EVALUE,
                        "kernel: %.0f taps is invalid for quantized AvgPool: at most 2**23 keep the integer sum exact", taps);
    }
    for (int i = 0; i < n; ++i)
        if ((rc = resolve_axis(d, i, msg, size))) return rc;
    for (int i = n; i < DP_MAX_SPATIAL; ++i) {
        d->dst_spatial[i] = 1;
        d->resolved_pads_begin[i] = d->resolved_pads_end[i] = 0;
    }
    return check_divisors(d, msg, size);
}

int64_t dp_desc_src_size(const dp_desc *d) {
    int64_t s = d->batch * d->channels;
    for (int i = 0; i < d->ndims; ++i) s *= d->src_spatial[i];
    return s;
}

int64_t dp_desc_dst_size(const dp_desc *d) {
    int64_t s = d->batch * d->channels;
    for (int i = 0; i < d->ndims; ++i) s *= d->dst_spatial[i];
    return s;
}

}  // extern "C"
