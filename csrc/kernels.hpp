// Pooling kernels, written once and compiled once per instruction set:
// kernels_isa.cpp includes this file inside a namespace under a
// `#pragma GCC target`, so every template below is instantiated with that
// ISA's vector width.  No standard header may be included from here.
//
// Types: T is the storage type, Acc the accumulator (f32 for f32/f16/bf16,
// f64 for f64, i32 for s8/u8).  16-bit values are widened on load and
// rounded once, to nearest even, on store.

struct bf16 { uint16_t bits; };

template <typename T> struct Traits;

template <> struct Traits<float> {
    typedef float Acc;
    static inline Acc load(float v) { return v; }
    static inline float store(Acc v) { return v; }
    static inline float lowest() { return -__FLT_MAX__; }
    static inline Acc max_init() { return -__builtin_inff(); }
};
template <> struct Traits<double> {
    typedef double Acc;
    static inline Acc load(double v) { return v; }
    static inline double store(Acc v) { return v; }
    static inline double lowest() { return -__DBL_MAX__; }
    static inline Acc max_init() { return -__builtin_inf(); }
};
template <> struct Traits<_Float16> {
    typedef float Acc;
    static inline Acc load(_Float16 v) { return (float)v; }
    static inline _Float16 store(Acc v) { return (_Float16)v; }   // IEEE conversion: round to nearest even
    static inline _Float16 lowest() { return (_Float16)-65504.0f; }
    static inline Acc max_init() { return -__builtin_inff(); }
};
template <> struct Traits<bf16> {
    typedef float Acc;
    static inline Acc load(bf16 v) {
        uint32_t u = (uint32_t)v.bits << 16;
        float f;
        __builtin_memcpy(&f, &u, 4);
        return f;
    }
    static inline bf16 store(Acc f) {
        uint32_t u;
        __builtin_memcpy(&u, &f, 4);
        // NaN stays NaN (made quiet); otherwise round to nearest, ties to even.
        uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
        uint32_t quiet_nan = (u >> 16) | 0x40u;
        bf16 r;
        r.bits = (uint16_t)(((u & 0x7fffffffu) > 0x7f800000u) ? quiet_nan : rounded);
        return r;
    }
    static inline bf16 lowest() { bf16 r; r.bits = 0xff7f; return r; }
    static inline Acc max_init() { return -__builtin_inff(); }
};
template <> struct Traits<int8_t> {
    typedef int32_t Acc;
    static inline Acc load(int8_t v) { return v; }
    static inline int8_t store(Acc v) { return (int8_t)v; }
    static inline int8_t lowest() { return -128; }
    static inline Acc max_init() { return -128; }
    static inline float qmin() { return -128.0f; }
    static inline float qmax() { return 127.0f; }
};
template <> struct Traits<uint8_t> {
    typedef int32_t Acc;
    static inline Acc load(uint8_t v) { return v; }
    static inline uint8_t store(Acc v) { return (uint8_t)v; }
    static inline uint8_t lowest() { return 0; }
    static inline Acc max_init() { return 0; }
    static inline float qmin() { return 0.0f; }
    static inline float qmax() { return 255.0f; }
};

// ---------------------------------------------------------------- combining

// Max that propagates NaN: once the accumulator is NaN it stays NaN.
template <typename Acc>
static inline Acc max_nan(Acc acc, Acc v) { return (v > acc || v != v) ? v : acc; }

// Max with an index: strict '>' keeps the first maximum of the scan; the first
// NaN wins and sticks; `seen` makes the first tap win even if it is -inf.
template <typename Acc>
static inline bool takes_over(Acc acc, Acc v, int64_t cur_idx) {
    return cur_idx < 0 || v > acc || (v != v && acc == acc);
}

// Finalize one average: quantized outputs are rounded half to even and saturated.
template <typename T, int K>
struct AvgOut {
    typedef typename Traits<T>::Acc Acc;
    static inline T make(Acc sum, int64_t div, int64_t nvalid, const ExecCtx *) {
        (void)nvalid;
        return Traits<T>::store(sum / (Acc)div);
    }
};
template <typename T>
struct AvgOut<T, kQAvg> {
    typedef int32_t Acc;
    static inline T make(Acc sum, int64_t div, int64_t nvalid, const ExecCtx *c) {
        // Padded taps are real zeros, i.e. x_zp in the quantized domain.
        float centred = (float)(sum - (Acc)nvalid * c->qzp_in);
        float y = centred * c->qscale / (float)div + c->qzp_out;
        y = __builtin_roundevenf(y);
        y = y < Traits<T>::qmin() ? Traits<T>::qmin() : (y > Traits<T>::qmax() ? Traits<T>::qmax() : y);
        return (T)(int32_t)y;
    }
};

// ------------------------------------------------ channel-inner (NXC) kernel
//
// Row space: (n, od, oh).  For every output point the window's taps are
// visited in row-major order and combined into a block of channels, which is
// contiguous when UnitC (the NXC fast path) and strided otherwise.

constexpr int64_t kChannelBlock = 256;

template <typename T, int K, bool WithIdx, bool UnitC>
static void channel_inner_rows(const ExecCtx *c, int64_t r0, int64_t r1, void *) {
    typedef typename Traits<T>::Acc Acc;
    const AxisPlan &AD = c->ax[0], &AH = c->ax[1], &AW = c->ax[2];
    const T *src = (const T *)c->src;
    T *dst = (T *)c->dst;
    const int64_t C = c->C;
    const int64_t scs = UnitC ? 1 : c->ss[1], dcs = UnitC ? 1 : c->ds[1];
    Acc acc[kChannelBlock];
    int64_t arg[WithIdx ? kChannelBlock : 1];

    for (int64_t r = r0; r < r1; ++r) {
        const int64_t oh = r % AH.out, od = (r / AH.out) % AD.out, n = r / (AH.out * AD.out);
        const int64_t kd0 = AD.kbeg[od], kd1 = AD.kend[od], kh0 = AH.kbeg[oh], kh1 = AH.kend[oh];
        const int64_t div_dh = AD.div[od] * AH.div[oh];
        const int64_t valid_dh = (kd1 - kd0) * (kh1 - kh0);
        const T *src_n = src + n * c->ss[0];
        for (int64_t ow = 0; ow < AW.out; ++ow) {
            const int64_t kw0 = AW.kbeg[ow], kw1 = AW.kend[ow];
            const int64_t nvalid = valid_dh * (kw1 - kw0);
            T *out = dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3] + ow * c->ds[4];
            for (int64_t c0 = 0; c0 < C; c0 += kChannelBlock) {
                const int64_t cb = (C - c0 < kChannelBlock) ? C - c0 : kChannelBlock;
                const Acc init = (K == kMax) ? Traits<T>::max_init() : (Acc)0;
                for (int64_t i = 0; i < cb; ++i) acc[i] = init;
                if constexpr (WithIdx) for (int64_t i = 0; i < cb; ++i) arg[i] = -1;
                for (int64_t kd = kd0; kd < kd1; ++kd) {
                    const int64_t id = od * AD.s - AD.pb + kd * AD.d;
                    for (int64_t kh = kh0; kh < kh1; ++kh) {
                        const int64_t ih = oh * AH.s - AH.pb + kh * AH.d;
                        for (int64_t kw = kw0; kw < kw1; ++kw) {
                            const int64_t iw = ow * AW.s - AW.pb + kw * AW.d;
                            const T *__restrict p = src_n + id * c->ss[2] + ih * c->ss[3]
                                                    + iw * c->ss[4] + c0 * scs;
                            if constexpr (K == kMax && WithIdx) {
                                const int64_t base = n * c->is[0] + id * c->is[2] + ih * c->is[3]
                                                     + iw * c->is[4] + c0 * c->is[1];
                                for (int64_t i = 0; i < cb; ++i) {
                                    const Acc v = Traits<T>::load(p[i * scs]);
                                    if (takes_over(acc[i], v, arg[i])) { acc[i] = v; arg[i] = base + i * c->is[1]; }
                                }
                            } else if constexpr (K == kMax) {
#pragma GCC ivdep
                                for (int64_t i = 0; i < cb; ++i) acc[i] = max_nan(acc[i], Traits<T>::load(p[i * scs]));
                            } else {
#pragma GCC ivdep
                                for (int64_t i = 0; i < cb; ++i) acc[i] += Traits<T>::load(p[i * scs]);
                            }
                        }
                    }
                }
                T *__restrict o = out + c0 * dcs;
                if constexpr (K == kMax) {
                    if (nvalid == 0) {
                        for (int64_t i = 0; i < cb; ++i) o[i * dcs] = Traits<T>::lowest();
                    } else {
#pragma GCC ivdep
                        for (int64_t i = 0; i < cb; ++i) o[i * dcs] = Traits<T>::store(acc[i]);
                    }
                    if constexpr (WithIdx) {
                        int64_t *xo = c->idx + n * c->xs[0] + od * c->xs[2] + oh * c->xs[3]
                                      + ow * c->xs[4] + c0 * c->xs[1];
                        for (int64_t i = 0; i < cb; ++i) xo[i * c->xs[1]] = arg[i];
                    }
                } else {
                    const int64_t div = div_dh * AW.div[ow];
#pragma GCC ivdep
                    for (int64_t i = 0; i < cb; ++i) o[i * dcs] = AvgOut<T, K>::make(acc[i], div, nvalid, c);
                }
            }
        }
    }
}

// -------------------------------------------------- width-inner (NCX) kernel
//
// Row space: (n, c, od, oh).  A row of outputs is accumulated tap by tap:
// for tap kw the outputs [olo[kw], ohi[kw]) read input w = ow*s - pb + kw*d,
// a unit-stride stream when s == 1.  Accumulators live in a per-call buffer.

template <typename T, int K, bool WithIdx>
static void width_inner_rows(const ExecCtx *c, int64_t r0, int64_t r1, void *scratch) {
    typedef typename Traits<T>::Acc Acc;
    const AxisPlan &AD = c->ax[0], &AH = c->ax[1], &AW = c->ax[2];
    const T *src = (const T *)c->src;
    T *dst = (T *)c->dst;
    const int64_t OW = AW.out, sw = AW.s;
    // scratch holds OW int64 slots for indices, then OW accumulators (<= 8 bytes each).
    int64_t *arg = (int64_t *)scratch;
    Acc *acc = (Acc *)(arg + OW);

    for (int64_t r = r0; r < r1; ++r) {
        const int64_t oh = r % AH.out, od = (r / AH.out) % AD.out;
        const int64_t ch = (r / (AH.out * AD.out)) % c->C, n = r / (AH.out * AD.out * c->C);
        const int64_t kd0 = AD.kbeg[od], kd1 = AD.kend[od], kh0 = AH.kbeg[oh], kh1 = AH.kend[oh];
        const Acc init = (K == kMax) ? Traits<T>::max_init() : (Acc)0;
        for (int64_t i = 0; i < OW; ++i) acc[i] = init;
        if constexpr (WithIdx) for (int64_t i = 0; i < OW; ++i) arg[i] = -1;
        const T *src_nc = src + n * c->ss[0] + ch * c->ss[1];
        for (int64_t kd = kd0; kd < kd1; ++kd) {
            const int64_t id = od * AD.s - AD.pb + kd * AD.d;
            for (int64_t kh = kh0; kh < kh1; ++kh) {
                const int64_t ih = oh * AH.s - AH.pb + kh * AH.d;
                const T *__restrict line = src_nc + id * c->ss[2] + ih * c->ss[3];
                for (int64_t kw = 0; kw < AW.k; ++kw) {
                    const int64_t lo = AW.olo[kw], hi = AW.ohi[kw];
                    const int64_t off = kw * AW.d - AW.pb;   // input w of output 0
                    if constexpr (K == kMax && WithIdx) {
                        const int64_t base = n * c->is[0] + ch * c->is[1] + id * c->is[2] + ih * c->is[3];
                        for (int64_t ow = lo; ow < hi; ++ow) {
                            const int64_t iw = ow * sw + off;
                            const Acc v = Traits<T>::load(line[iw]);
                            if (takes_over(acc[ow], v, arg[ow])) { acc[ow] = v; arg[ow] = base + iw * c->is[4]; }
                        }
                    } else if (sw == 1) {
                        const T *__restrict p = line + off;
#pragma GCC ivdep
                        for (int64_t ow = lo; ow < hi; ++ow) {
                            const Acc v = Traits<T>::load(p[ow]);
                            acc[ow] = (K == kMax) ? max_nan(acc[ow], v) : acc[ow] + v;
                        }
                    } else {
#pragma GCC ivdep
                        for (int64_t ow = lo; ow < hi; ++ow) {
                            const Acc v = Traits<T>::load(line[ow * sw + off]);
                            acc[ow] = (K == kMax) ? max_nan(acc[ow], v) : acc[ow] + v;
                        }
                    }
                }
            }
        }
        T *__restrict out = dst + n * c->ds[0] + ch * c->ds[1] + od * c->ds[2] + oh * c->ds[3];
        const int64_t valid_dh = (kd1 - kd0) * (kh1 - kh0);
        if constexpr (K == kMax) {
            for (int64_t ow = 0; ow < OW; ++ow) {
                const bool empty = valid_dh == 0 || AW.kbeg[ow] == AW.kend[ow];
                out[ow] = empty ? Traits<T>::lowest() : Traits<T>::store(acc[ow]);
            }
            if constexpr (WithIdx) {
                int64_t *xo = c->idx + n * c->xs[0] + ch * c->xs[1] + od * c->xs[2] + oh * c->xs[3];
                for (int64_t ow = 0; ow < OW; ++ow) xo[ow * c->xs[4]] = arg[ow];
            }
        } else {
            const int64_t div_dh = AD.div[od] * AH.div[oh];
            for (int64_t ow = 0; ow < OW; ++ow) {
                const int64_t nvalid = valid_dh * (AW.kend[ow] - AW.kbeg[ow]);
                out[ow] = AvgOut<T, K>::make(acc[ow], div_dh * AW.div[ow], nvalid, c);
            }
        }
    }
}

// ---------------------------------------------------------------- selection

template <typename T, int K, bool WithIdx>
static RowFn pick_variant(int variant) {
    switch (variant) {
    case kChannelInner: return &channel_inner_rows<T, K, WithIdx, true>;
    case kChannelInnerStrided: return &channel_inner_rows<T, K, WithIdx, false>;
    case kWidthInner: return &width_inner_rows<T, K, WithIdx>;
    }
    return 0;
}

template <typename T>
static RowFn pick_kind(int kind, int variant, bool with_idx) {
    if (kind == kMax) return with_idx ? pick_variant<T, kMax, true>(variant) : pick_variant<T, kMax, false>(variant);
    if (kind == kAvg) return pick_variant<T, kAvg, false>(variant);
    return 0;
}

template <typename T>
static RowFn pick_quantized(int kind, int variant, bool with_idx) {
    if (kind == kQAvg) return pick_variant<T, kQAvg, false>(variant);
    if (kind == kMax) return with_idx ? pick_variant<T, kMax, true>(variant) : pick_variant<T, kMax, false>(variant);
    return 0;
}

static RowFn select(int dtype, int kind, int variant, bool with_idx) {
    switch (dtype) {
    case DP_F32: return pick_kind<float>(kind, variant, with_idx);
    case DP_F64: return pick_kind<double>(kind, variant, with_idx);
    case DP_F16: return pick_kind<_Float16>(kind, variant, with_idx);
    case DP_BF16: return pick_kind<bf16>(kind, variant, with_idx);
    case DP_S8: return pick_quantized<int8_t>(kind, variant, with_idx);
    case DP_U8: return pick_quantized<uint8_t>(kind, variant, with_idx);
    }
    return 0;
}
