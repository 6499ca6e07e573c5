"""The embedded shape set of ``dnnpool bench`` and the benchmark variants built from it.

A :class:`Case` is one pooling problem in logical channels-first order (N, C, spatial...);
a :class:`Variant` is a case run in one layout, dtype and thread count. Cases marked
``target`` are the ones of the performance issue's target table.
"""
import dataclasses
import math
import zlib

import numpy as np

FLOAT_DTYPES = ("f32", "bf16", "f16")
LAYOUTS = ("NCX", "NXC")
# Quantized average pooling (QLinearAveragePool): equal scales, so every engine that averages
# raw u8 values (oneDNN, PyTorch's quantized kernel) computes the same thing with padding excluded.
QUANT_PARAMS = {"src_scale": 0.05, "src_zero_point": 128, "dst_scale": 0.05,
                "dst_zero_point": 128}


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    kind: str                      # "MaxPool" | "AvgPool"
    src: tuple                     # logical (N, C, spatial...)
    kernel: tuple
    strides: tuple
    pads: tuple = None             # begin = end; None -> zeros
    exclude_pad: bool = False      # AvgPool only
    dilations: tuple = None        # 1 = dense; None -> dense
    dtypes: tuple = FLOAT_DTYPES
    quantized: bool = False        # u8 QLinearAveragePool semantics (QUANT_PARAMS)
    indices: bool = False          # MaxPool also returns the int64 indices of its maxima
    target: bool = False           # one of the target rows
    description: str = ""

    @property
    def ndims(self):
        return len(self.src) - 2

    @property
    def pads_begin(self):
        return self.pads or (0,) * self.ndims

    pads_end = pads_begin

    @property
    def dilation(self):
        return self.dilations or (1,) * self.ndims

    @property
    def dst_spatial(self):
        """Output spatial size, floor rounding (every case of the set uses floor)."""
        return tuple((n + 2 * p - ((k - 1) * d + 1)) // s + 1 for n, k, s, p, d in
                     zip(self.src[2:], self.kernel, self.strides, self.pads_begin, self.dilation))

    @property
    def attributes(self):
        """Compact attribute summary, e.g. "k3x3 s2x2 p1x1 d2x2 exclude_pad"."""
        def axes(values):
            return "x".join(map(str, values))
        parts = [f"k{axes(self.kernel)}", f"s{axes(self.strides)}", f"p{axes(self.pads_begin)}"]
        if self.dilations:
            parts.append(f"d{axes(self.dilations)}")
        if self.exclude_pad:
            parts.append("exclude_pad")
        if self.quantized:
            parts.append("quantized")
        if self.indices:
            parts.append("indices")
        return " ".join(parts)

    @property
    def avg_algorithm(self):
        return "avg_exclude_padding" if self.exclude_pad else "avg_include_padding"


def _c(name, kind, src, kernel, strides, pads=None, **more):
    return Case(name, kind, tuple(src), tuple(kernel), tuple(strides),
                tuple(pads) if pads else None, **more)


CASES = (
    _c("resnet50-maxpool", "MaxPool", (1, 64, 112, 112), (3, 3), (2, 2), (1, 1), target=True,
       dtypes=FLOAT_DTYPES + ("u8",), description="ResNet-50 stem max pool k3 s2 p1"),
    _c("resnet50-maxpool-n32", "MaxPool", (32, 64, 112, 112), (3, 3), (2, 2), (1, 1),
       target=True, description="the same at batch 32: 128 MB f32, DRAM-bound"),
    _c("inception-avgpool-excl", "AvgPool", (1, 192, 28, 28), (3, 3), (1, 1), (1, 1),
       exclude_pad=True, target=True, description="Inception branch avg pool k3 s1 p1, exclude pad"),
    _c("global-avgpool-n32", "AvgPool", (32, 2048, 7, 7), (7, 7), (1, 1), target=True,
       description="ResNet-50 head global average pool, batch 32"),
    _c("vgg-maxpool", "MaxPool", (1, 128, 112, 112), (2, 2), (2, 2), target=True,
       description="VGG max pool k2 s2"),
    _c("maxpool3d", "MaxPool", (1, 64, 16, 56, 56), (3, 3, 3), (2, 2, 2), (1, 1, 1), target=True,
       description="3-D max pool k3 s2 p1 (video nets)"),
    _c("avgpool1d-k4s4", "AvgPool", (8, 256, 4096), (4,), (4,), target=True,
       description="1-D average pool k4 s4, memory-bound"),
    _c("k15-avgpool-excl", "AvgPool", (1, 32, 256, 256), (15, 15), (1, 1), (7, 7),
       exclude_pad=True, target=True, description="large window k15 s1 p7, exclude pad"),
    _c("k15-maxpool", "MaxPool", (1, 32, 256, 256), (15, 15), (1, 1), (7, 7), target=True,
       description="large window max pool k15 s1 p7"),
    _c("qlinear-avgpool-u8", "AvgPool", (1, 192, 28, 28), (3, 3), (1, 1), (1, 1),
       exclude_pad=True, dtypes=("u8",), quantized=True, target=True,
       description="QLinearAveragePool u8 k3 s1 p1 (Inception shape)"),
    # Beyond the target table.
    _c("global-avgpool-n1", "AvgPool", (1, 1280, 7, 7), (7, 7), (1, 1),
       description="MobileNetV2 head global average pool, batch 1 (latency)"),
    _c("densenet-avgpool", "AvgPool", (1, 256, 56, 56), (2, 2), (2, 2),
       description="DenseNet transition avg pool k2 s2"),
    _c("k7-avgpool-incl", "AvgPool", (1, 64, 128, 128), (7, 7), (1, 1), (3, 3),
       description="k7 s1 p3 average pool, padding counted (divisor 49)"),
    _c("k7-maxpool", "MaxPool", (1, 64, 128, 128), (7, 7), (1, 1), (3, 3),
       description="k7 s1 p3 max pool"),
    _c("k9-avgpool-excl", "AvgPool", (1, 32, 256, 256), (9, 9), (1, 1), (4, 4), exclude_pad=True,
       description="k9 s1 p4 average pool, exclude pad"),
    _c("k11-maxpool", "MaxPool", (1, 32, 256, 256), (11, 11), (1, 1), (5, 5),
       description="k11 s1 p5 max pool"),
    _c("dilated-maxpool", "MaxPool", (1, 64, 56, 56), (3, 3), (1, 1), (2, 2), dilations=(2, 2),
       description="dilated max pool k3 d2 s1 p2"),
    _c("maxpool1d-k3s1", "MaxPool", (8, 256, 4096), (3,), (1,), (1,),
       description="1-D max pool k3 s1 p1"),
    _c("few-channels-maxpool", "MaxPool", (1, 16, 112, 112), (3, 3), (2, 2), (1, 1),
       description="k3 s2 p1 over 16 channels (under one NXC register block)"),
    _c("rgb-maxpool", "MaxPool", (1, 3, 224, 224), (3, 3), (2, 2), (1, 1),
       description="k3 s2 p1 straight on an RGB image (3 channels)"),
    _c("tiny-maxpool", "MaxPool", (1, 1, 4, 4), (2, 2), (2, 2),
       description="1x1x4x4 k2 s2: per-call overhead"),
    # Late-stage planes: rows too short to vectorise along (NCX pools them a
    # block of channels at a time, channels-last).
    _c("yolo-spp-maxpool", "MaxPool", (1, 512, 13, 13), (13, 13), (1, 1), (6, 6),
       description="YOLOv3-SPP max pool k13 s1 p6 over 13x13 planes"),
    _c("googlenet-maxpool-14x14", "MaxPool", (1, 832, 14, 14), (3, 3), (2, 2), (1, 1),
       description="GoogLeNet pool4 k3 s2 p1 over 14x14 planes"),
    _c("c3d-maxpool", "MaxPool", (1, 256, 8, 14, 14), (2, 2, 2), (2, 2, 2),
       description="C3D pool4 k2 s2 over 8x14x14 volumes"),
    # MaxPool that also returns where its maxima are (ONNX Indices, PyTorch return_indices),
    # as encoder-decoder nets do for max unpooling.
    _c("segnet-maxpool-indices", "MaxPool", (1, 64, 224, 224), (2, 2), (2, 2), dtypes=("f32",),
       indices=True, description="SegNet encoder max pool k2 s2 with indices"),
    _c("k3-maxpool-indices", "MaxPool", (1, 128, 64, 64), (3, 3), (1, 1), (1, 1), dtypes=("f32",),
       indices=True, description="k3 s1 p1 max pool with indices"),
    _c("k9-maxpool-indices", "MaxPool", (1, 128, 64, 64), (9, 9), (1, 1), (4, 4), dtypes=("f32",),
       indices=True, description="k9 s1 p4 max pool with indices"),
)


# Random problems (``dnnpool bench --random``): the shapes no table lists, where a library's
# less travelled paths show.  Choices lean to what networks use, up to RANDOM_MAX_BYTES of f32 src.
RANDOM_MAX_BYTES = 8 << 20
_RANDOM_CHANNELS = (1, 3, 4, 7, 8, 16, 17, 24, 32, 48, 64, 96, 128, 256, 512)
_RANDOM_ROWS = {1: (7, 31, 100, 256, 1000, 4096), 2: (5, 7, 13, 14, 17, 28, 35, 56, 57, 112, 224),
                3: (7, 14, 28, 56)}


def random_cases(count, seed=0):
    """`count` random pooling problems, the same for the same seed: 1-D to 3-D, 1 to 512
    channels, square or not, windows of 1-7 taps per axis, strides 1-3, padding, sometimes
    dilation or exclude-pad; named random-<seed>-<i>, their attributes in the description."""
    import random
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        ndims = rng.choice((1, 2, 2, 2, 3))
        rows = rng.choice(_RANDOM_ROWS[ndims])
        spatial = {1: (rows,), 2: (rows, rows if rng.random() < 0.7 else rng.choice(_RANDOM_ROWS[2])),
                   3: (rng.choice((4, 8, 16)), rows, rng.choice(_RANDOM_ROWS[3]))}[ndims]
        src = (rng.choice((1, 1, 1, 2, 4)), rng.choice(_RANDOM_CHANNELS), *spatial)
        kernel = [rng.choice((1, 2, 2, 3, 3, 3, 4, 5, 7))] * ndims
        if rng.random() < 0.4:
            kernel = [rng.choice((1, 2, 3, 4, 5, 7)) for _ in spatial]
        strides = [rng.choice((1, 1, 2, 2, 3))] * ndims
        if rng.random() < 0.4:
            strides = [rng.choice((1, 2, 3)) for _ in spatial]
        dilations = tuple(rng.choice((1, 2, 3)) for _ in spatial) if rng.random() < 0.1 else None
        pads = [rng.randint(0, (k - 1) // 2) if rng.random() < 0.6 else 0 for k in kernel]
        extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations or (1,) * ndims)]
        if any(e > n + 2 * p for e, n, p in zip(extent, spatial, pads)):
            continue
        if math.prod(src) * 4 > RANDOM_MAX_BYTES:
            continue
        kind = rng.choice(("MaxPool", "AvgPool"))
        exclude_pad = kind == "AvgPool" and any(pads) and rng.random() < 0.5
        name = f"random-{seed}-{len(cases)}"
        case = _c(name, kind, src, kernel, strides, pads if any(pads) else None, dilations=dilations,
                  exclude_pad=exclude_pad, dtypes=FLOAT_DTYPES + (("u8",) if kind == "MaxPool" else ()))
        cases.append(dataclasses.replace(case, description=f"{kind} {'x'.join(map(str, src))} "
                                                           f"{case.attributes}"))
    return tuple(cases)


def numpy_dtype(name):
    import ml_dtypes
    return np.dtype({"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16,
                     "u8": np.uint8}[name])


@dataclasses.dataclass(frozen=True)
class Variant:
    case: Case
    layout: str                    # "NCX" | "NXC"
    dtype: str                     # "f32" | "bf16" | "f16" | "u8"
    threads: int

    @property
    def label(self):
        return f"{self.case.name} {self.layout} {self.dtype} t{self.threads}"

    def _in_layout(self, logical):
        return tuple(logical) if self.layout == "NCX" else (logical[0], *logical[2:], logical[1])

    @property
    def src_shape(self):
        """Shape of the source array, in the variant's layout order."""
        return self._in_layout(self.case.src)

    @property
    def dst_shape(self):
        return self._in_layout(self.case.src[:2] + self.case.dst_spatial)

    @property
    def itemsize(self):
        return numpy_dtype(self.dtype).itemsize

    @property
    def bytes_moved(self):
        """Bytes read once plus bytes written once (int64 indices too): the memory-bound minimum."""
        index_bytes = math.prod(self.dst_shape) * 8 if self.case.indices else 0
        return (math.prod(self.src_shape) + math.prod(self.dst_shape)) * self.itemsize + index_bytes

    def make_source(self):
        """Deterministic input (seeded by the case name), identical for every engine."""
        rng = np.random.default_rng(zlib.crc32(self.case.name.encode()))
        if self.dtype == "u8":
            data = rng.integers(0, 256, size=self.src_shape, dtype=np.uint8)
        else:
            data = rng.standard_normal(self.src_shape, dtype=np.float32).astype(
                numpy_dtype(self.dtype))
        return np.ascontiguousarray(data)


def select_variants(cases=None, layouts=None, dtypes=None, threads=(1,), targets_only=False,
                    case_set=CASES):
    """Expand a case set (the embedded one by default) into variants; ``cases`` are name
    substrings (any may match)."""
    chosen = []
    for case in case_set:
        if targets_only and not case.target:
            continue
        if cases and not any(pattern in case.name for pattern in cases):
            continue
        for dtype in case.dtypes:
            if dtypes and dtype not in dtypes:
                continue
            for layout in layouts or LAYOUTS:
                for n in threads:
                    chosen.append(Variant(case, layout, dtype, n))
    return chosen
