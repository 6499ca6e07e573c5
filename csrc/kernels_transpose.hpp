// Channel planes moved to channels-last order and back: NCX tensors whose
// planes the one-lane separable passes handle badly are pooled a block of
// channels at a time by the NXC kernels (plan.cpp, channel_blocks_pay).
// The moves copy bits, so one instance per element size serves every dtype.
// Tiles of L channels by L positions turn over in registers, a vector of L
// lanes per channel or position (8-bit values widened to 32-bit lanes;
// 16-bit ones first in tiles of twice the positions, a pair per lane).

// Lanes of a tile's vectors: 32-bit for elements of up to 4 bytes.
template <typename E> using TileLane = typename std::conditional<sizeof(E) == 8, uint64_t, uint32_t>::type;

// One stage of an L x L transpose: rows a and b (S apart) swap their
// off-diagonal S x S blocks.  After the stages S = L/2, .., 1 every row i
// holds column i.
template <typename VW, int L, int S, int... J>
static inline void swap_blocks(VW &a, VW &b, std::integer_sequence<int, J...>) {
    const VW na = __builtin_shufflevector(a, b, ((J % (2 * S)) < S ? J : L + J - S)...);
    const VW nb = __builtin_shufflevector(a, b, ((J % (2 * S)) < S ? J + S : L + J)...);
    a = na;
    b = nb;
}
template <typename VW, int L, int S = L / 2>
static inline void transpose_tile(VW *r) {
    for (int i = 0; i < L; ++i)
        if (!(i & S)) swap_blocks<VW, L, S>(r[i], r[i + S], std::make_integer_sequence<int, L>());
    if constexpr (S > 1) transpose_tile<VW, L, S / 2>(r);
}

// The same transpose for 32-bit lanes (L = 4, 8 or 16: one to four groups
// of 4 lanes, 16 bytes each) in shuffles that take an immediate: unpacks of
// 32-bit and then of 64-bit pairs within each group, then whole groups moved
// (L > 4).  GCC compiles the stages above to two-source permutes that load
// index vectors (vpermt2d), a register copy before most; these are 16 + 16
// unpacks and 32 group moves for L = 16.  Measured on an AMD EPYC (Zen 4), 1
// thread, NCX through channel blocks: 0.94-0.96 of the time (f32 3-D
// MaxPool k(2,1,1) s2 over 128 channels, AvgPool k(7,4) s2 over 512, MaxPool
// k3 s1 over 128 and k2 s1 over 4 x 32 planes of 57 x 57; bf16 0.96;
// separate processes 0.96-0.99).
namespace lane_groups {
// a[4k + h], b[4k + h], a[4k + h + 1], b[4k + h + 1] in group k (h = 0, or 2 for hi).
constexpr int unpack32(int L, int j, int hi) { return (j % 2 ? L : 0) + (j / 4) * 4 + 2 * hi + (j % 4) / 2; }
// Result group q: group first + step * (q mod half) of a for the first half
// of the groups, of b for the rest (half = L / 8 groups from each).
constexpr int groups(int L, int j, int first, int step) {
    const int q = j / 4, half = L / 8;
    return (q < half ? 0 : L) + (first + step * (q % half)) * 4 + j % 4;
}
// 64-bit lanes: a's pair `hi` of each group, then b's.
template <typename VQ, int Hi, int... J>
static inline VQ unpack64(VQ a, VQ b, std::integer_sequence<int, J...>) {
    constexpr int n = sizeof...(J);
    return __builtin_shufflevector(a, b, ((J % 2 ? n : 0) + (J / 2) * 2 + Hi)...);
}
}  // namespace lane_groups

template <typename VW, int L, int... J>
static inline void transpose_in_groups(VW *r, std::integer_sequence<int, J...>) {
    using namespace lane_groups;
    static_assert(sizeof(r[0][0]) == 4 && (L == 4 || L == 8 || L == 16), "32-bit lanes in groups of 4");
    // (the 64-bit unpacks on a vector of 64-bit lanes: on 32-bit lanes GCC
    // made them permutes)
    typedef uint64_t VQ __attribute__((vector_size(sizeof(VW))));
    constexpr auto pairs = std::make_integer_sequence<int, L / 2>();
    VW t[L], u[L];
    for (int i = 0; i < L; i += 2) {
        t[i] = __builtin_shufflevector(r[i], r[i + 1], unpack32(L, J, 0)...);
        t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], unpack32(L, J, 1)...);
    }
    // u[4i + m], group k: column 4k + m of rows 4i .. 4i + 3
    for (int i = 0; i < L; i += 4)
        for (int odd = 0; odd < 2; ++odd) {
            u[i + 2 * odd] = (VW)unpack64<VQ, 0>((VQ)t[i + odd], (VQ)t[i + 2 + odd], pairs);
            u[i + 2 * odd + 1] = (VW)unpack64<VQ, 1>((VQ)t[i + odd], (VQ)t[i + 2 + odd], pairs);
        }
    // row 4k + m: group k of u[m], u[4 + m], ..
    if constexpr (L == 4) {
        for (int m = 0; m < 4; ++m) r[m] = u[m];
    } else if constexpr (L == 8) {
        for (int m = 0; m < 4; ++m) {
            r[m] = __builtin_shufflevector(u[m], u[4 + m], groups(8, J, 0, 0)...);
            r[4 + m] = __builtin_shufflevector(u[m], u[4 + m], groups(8, J, 1, 0)...);
        }
    } else {
        for (int m = 0; m < 4; ++m) {
            const VW x0 = __builtin_shufflevector(u[m], u[4 + m], groups(16, J, 0, 1)...);
            const VW x1 = __builtin_shufflevector(u[m], u[4 + m], groups(16, J, 2, 1)...);
            const VW y0 = __builtin_shufflevector(u[8 + m], u[12 + m], groups(16, J, 0, 1)...);
            const VW y1 = __builtin_shufflevector(u[8 + m], u[12 + m], groups(16, J, 2, 1)...);
            r[m] = __builtin_shufflevector(x0, y0, groups(16, J, 0, 2)...);
            r[4 + m] = __builtin_shufflevector(x0, y0, groups(16, J, 1, 2)...);
            r[8 + m] = __builtin_shufflevector(x1, y1, groups(16, J, 0, 2)...);
            r[12 + m] = __builtin_shufflevector(x1, y1, groups(16, J, 1, 2)...);
        }
    }
}

// A tile's transpose: in groups for 32-bit lanes, by halving stages for 64-bit ones.
template <typename VW, int L>
static inline void transpose_lanes(VW *r) {
    if constexpr (sizeof(r[0][0]) == 4) transpose_in_groups<VW, L>(r, std::make_integer_sequence<int, L>());
    else transpose_tile<VW, L>(r);
}

// Lanes 0, 2, 4, .. then 1, 3, 5, .. of a vector of n = sizeof...(J) lanes,
// and the inverse: two half vectors interleaved.
template <typename V, int... J>
static inline V split_pairs(V v, std::integer_sequence<int, J...>) {
    constexpr int n = sizeof...(J);
    return __builtin_shufflevector(v, v, (J < n / 2 ? 2 * J : 2 * (J - n / 2) + 1)...);
}
template <typename H, int... J>
static inline auto interleave_halves(H even, H odd, std::integer_sequence<int, J...>) {
    constexpr int half = sizeof...(J) / 2;
    return __builtin_shufflevector(even, odd, (J % 2 ? half + J / 2 : J / 2)...);
}

// Base pointers a tile addresses its L rows from: hidden from the
// optimiser, which would otherwise keep L row pointers across the tile loop
// and spill the registers the tile needs.
template <typename P>
static inline void tile_base(P *&a, P *&b) { __asm__("" : "+r"(a), "+r"(b)); }

// Lanes of a full tile: one vector of TileLane<E>.
template <typename E>
constexpr int kTileLanes = (int)(kVecBytes / sizeof(TileLane<E>));

// A tile of L channels by L positions.  planar + c * cs is channel c's run,
// last + w * channels position w's channels.
template <typename E, bool ToLast, int L = kTileLanes<E>>
static inline void move_tile(E *planar, int64_t cs, E *last, int64_t channels) {
    typedef TileLane<E> W;
    typedef E VE __attribute__((vector_size(L * sizeof(E))));
    typedef W VW __attribute__((vector_size(L * sizeof(W))));
    tile_base(planar, last);
    E *from = ToLast ? planar : last, *to = ToLast ? last : planar;
    const int64_t from_step = ToLast ? cs : channels, to_step = ToLast ? channels : cs;
    // A full tile of bytes widens and narrows by the ISA's own loads and
    // stores: GCC 12 turned __builtin_convertvector's narrowing into a lane
    // at a time (1,800 instructions a tile on AVX-512), and a 3-D k2 s3 u8
    // MaxPool over 1 x 64 x 4 x 7 x 7 NCX took 4.5x its f32 time.
    constexpr bool kIsaBytes = sizeof(E) == 1 && L == kTileLanes<E>;
    VW r[L];
    for (int i = 0; i < L; ++i) {
        if constexpr (kIsaBytes) {
            r[i] = (VW)isa_load_u8((const uint8_t *)(from + i * from_step));
        } else {
            VE v;
            __builtin_memcpy(&v, from + i * from_step, sizeof v);
            r[i] = __builtin_convertvector(v, VW);
        }
    }
    transpose_lanes<VW, L>(r);
    for (int i = 0; i < L; ++i) {
        if constexpr (kIsaBytes) {
            isa_store_8bit((uint8_t *)(to + i * to_step), (IsaI32)r[i]);   // (lanes are bytes widened: in range)
        } else {
            const VE v = __builtin_convertvector(r[i], VE);
            __builtin_memcpy(to + i * to_step, &v, sizeof v);
        }
    }
}

// 16-bit values without widening: a tile of L channels by 2L positions,
// each 32-bit lane a channel's pair of positions.  After the transpose, row j
// holds every channel's pair j, which one permute splits into position 2j's
// channels and position 2j + 1's.
template <bool ToLast>
static inline void move_pair_tile(uint16_t *planar, int64_t cs, uint16_t *last, int64_t channels) {
    constexpr int L = (int)(kVecBytes / 4);
    typedef uint32_t VW __attribute__((vector_size(L * 4)));
    typedef uint16_t VP __attribute__((vector_size(L * 4)));      // 2L values: a pair row
    typedef uint16_t VH __attribute__((vector_size(L * 2)));      // L values: one position's channels
    tile_base(planar, last);
    VW r[L];
    if (ToLast) {
        for (int i = 0; i < L; ++i) __builtin_memcpy(&r[i], planar + i * cs, sizeof r[i]);
    } else {
        for (int j = 0; j < L; ++j) {
            VH even, odd;
            __builtin_memcpy(&even, last + 2 * j * channels, sizeof even);
            __builtin_memcpy(&odd, last + (2 * j + 1) * channels, sizeof odd);
            r[j] = (VW)interleave_halves(even, odd, std::make_integer_sequence<int, 2 * L>());
        }
    }
    transpose_lanes<VW, L>(r);
    if (ToLast) {
        for (int j = 0; j < L; ++j) {
            const VP split = split_pairs((VP)r[j], std::make_integer_sequence<int, 2 * L>());
            __builtin_memcpy(last + 2 * j * channels, &split, sizeof(VH));
            __builtin_memcpy(last + (2 * j + 1) * channels, (const char *)&split + sizeof(VH), sizeof(VH));
        }
    } else {
        for (int i = 0; i < L; ++i) __builtin_memcpy(planar + i * cs, &r[i], sizeof r[i]);
    }
}

// Channel groups [c0, ..) of `count` dense positions in tiles of L lanes,
// then of L/2, .. down to 4 (narrower tiles on narrower vectors) for the
// channels left; positions past whole tiles go value by value.  Returns the
// first channel no tile group took (fewer than 4 left).  A block of 8 f32
// channels, or a last block's 4, went value by value before: with its rows
// of 14, 2 x 8 x 57 x 14 took its moves 54% of the call.
template <typename E, bool ToLast, int L, typename Values>
static inline int64_t move_tile_groups(E *planar, int64_t cs, int64_t count, int64_t channels, E *last, int64_t c0,
                                       Values &move_values) {
    for (; c0 + L <= channels; c0 += L) {
        int64_t w0 = 0;
        if constexpr (sizeof(E) == 2 && L == kTileLanes<E>)
            for (; w0 + 2 * L <= count; w0 += 2 * L)
                move_pair_tile<ToLast>(planar + c0 * cs + w0, cs, last + w0 * channels + c0, channels);
        for (; w0 + L <= count; w0 += L)
            move_tile<E, ToLast, L>(planar + c0 * cs + w0, cs, last + w0 * channels + c0, channels);
        move_values(c0, c0 + L, w0);
    }
    if constexpr (L > 4) return move_tile_groups<E, ToLast, L / 2>(planar, cs, count, channels, last, c0, move_values);
    return c0;
}

// `count` positions of `channels` planes: planar channel c's value at
// position w is planar[c * cs + w * ws], channels-last position w's channel
// c is last[w * channels + c].  ToLast moves planar -> last, else back.
template <typename E, bool ToLast>
static void move_run(E *planar, int64_t cs, int64_t ws, int64_t count, int64_t channels, E *last) {
    // Value by value: the tails past whole tiles, and strided positions.
    auto move_values = [&](int64_t c_begin, int64_t c_end, int64_t w_begin) {
        for (int64_t c = c_begin; c < c_end; ++c)
            for (int64_t w = w_begin; w < count; ++w) {
                if (ToLast) last[w * channels + c] = planar[c * cs + w * ws];
                else planar[c * cs + w * ws] = last[w * channels + c];
            }
    };
    const int64_t c0 = ws == 1 ? move_tile_groups<E, ToLast, kTileLanes<E>>(planar, cs, count, channels, last, 0,
                                                                              move_values)
                               : 0;
    move_values(c0, channels, 0);
}

// A block of `channels` planes; sizes and strides are the planar tensor's
// (depth, height, width), the channels-last block is dense.  Dense planes
// move as one run of positions, so short rows still fill whole tiles.
template <typename E, bool ToLast>
static void move_block(void *planar, int64_t cs, const int64_t *strides, const int64_t *sizes, int64_t channels,
                       void *last) {
    E *p = (E *)planar, *q = (E *)last;
    const int64_t hw = sizes[1] * sizes[2];
    if (strides[2] == 1 && (sizes[1] == 1 || strides[1] == sizes[2]) && (sizes[0] == 1 || strides[0] == hw)) {
        move_run<E, ToLast>(p, cs, 1, sizes[0] * hw, channels, q);
        return;
    }
    for (int64_t d = 0; d < sizes[0]; ++d)
        for (int64_t h = 0; h < sizes[1]; ++h)
            move_run<E, ToLast>(p + d * strides[0] + h * strides[1], cs, strides[2], sizes[2], channels,
                                q + (d * sizes[1] + h) * sizes[2] * channels);
}

template <bool ToLast>
static MoveFn pick_move(int64_t bytes) {
    switch (bytes) {
    case 1: return move_block<uint8_t, ToLast>;
    case 2: return move_block<uint16_t, ToLast>;
    case 4: return move_block<uint32_t, ToLast>;
    case 8: return move_block<uint64_t, ToLast>;
    }
    return nullptr;
}
