"""Run ONNX pooling nodes on dnnpool primitives.

A PoolingNode is one node bound to its opset; it builds a dp.Pooling per input shape, dtype
and quantization parameters on first use and reuses it afterwards.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import Pooling
from .translate import check_attributes, find_op, translate

__all__ = ["PoolingNode", "run_node", "node_attributes", "node_inputs_by_position",
           "num_outputs"]

# Primitives kept per node: shapes (or quantization parameters) beyond that evict the oldest.
MAX_PRIMITIVES_PER_NODE = 64


def node_attributes(node):
    """A NodeProto's attributes as a plain dict (what translate() takes)."""
    import onnx

    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def num_outputs(node):
    """Outputs a node asks for: trailing optional outputs left empty do not count."""
    count = len(node.output)
    while count > 1 and not node.output[count - 1]:
        count -= 1
    return count


def node_inputs_by_position(node, inputs):
    """inputs (a list, or a dict by input name) in the node's input order; None for an
    omitted optional input."""
    if isinstance(inputs, dict):
        return [inputs.get(name) if name else None for name in node.input]
    return list(inputs)


class PoolingNode:
    """One ONNX pooling node: translation, checks and a cache of primitives."""

    def __init__(self, op_type, attrs, opset=22, domain="", name=None, num_outputs=1):
        self.op_type, self.attrs, self.opset, self.domain, self.name = (
            op_type, dict(attrs), opset, domain, name or None)
        # Attribute errors surface when the node is bound, not at its first run.
        self.version, ref = check_attributes(op_type, self.attrs, opset, domain, self.name)
        self._ref = ref
        outputs = self.version["outputs"]
        if not 1 <= num_outputs <= len(outputs):
            names = [o["name"] for o in outputs]
            raise ref.value_error(f"node has {num_outputs} outputs; "
                                  f"{op_type}-{ref.since_version} has outputs {names}")
        self.with_indices = num_outputs == 2
        self.primitives = {}    # (shape, dtype, quantization) -> dp.Pooling
        self.calls = 0

    @classmethod
    def from_node(cls, node, opset=22, attrs=None):
        """attrs: the attributes to use instead of the node's own (resolved function
        attributes)."""
        return cls(node.op_type, node_attributes(node) if attrs is None else attrs, opset,
                   node.domain, node.name, num_outputs(node))

    def _quant_inputs(self, extra):
        """The scalar inputs after X (QLinearAveragePool) as {name: value}; None = omitted."""
        declared = self.version["inputs"]
        if len(extra) > len(declared) - 1:
            raise self._ref.value_error(f"node has {len(extra) + 1} inputs; at most "
                                        f"{len(declared)} allowed ({[i['name'] for i in declared]})")
        return {inp["name"]: value for inp, value in zip(declared[1:], extra) if value is not None}

    def primitive(self, x, quant_inputs=None):
        quant_key = tuple(sorted((k, np.asarray(v).tobytes(), str(np.asarray(v).dtype))
                                 for k, v in (quant_inputs or {}).items()))
        key = (x.shape, x.dtype, quant_key)
        prim = self.primitives.get(key)
        if prim is None:
            desc = translate(self.op_type, self.attrs, x.shape, x.dtype, self.opset, self.domain,
                             node_name=self.name, quant_inputs=quant_inputs or None)
            if len(self.primitives) >= MAX_PRIMITIVES_PER_NODE:
                self.primitives.pop(next(iter(self.primitives)), None)
            # setdefault: two threads racing on a new shape end up sharing one primitive
            prim = self.primitives.setdefault(key, Pooling(desc))
        return prim

    def run(self, inputs):
        """Outputs of the node for inputs in node order: [Y] or [Y, Indices]."""
        if not inputs or inputs[0] is None:
            raise self._ref.value_error("input 'X' is missing")
        x = np.asarray(inputs[0])
        prim = self.primitive(x, self._quant_inputs(list(inputs[1:])))
        self.calls += 1
        if self.with_indices:
            return list(prim.execute(x, with_indices=True))
        return [prim.execute(x)]


@functools.lru_cache(maxsize=256)
def _cached_node(serialized, opset):
    import onnx

    node = onnx.NodeProto()
    node.ParseFromString(serialized)
    return PoolingNode.from_node(node, opset)


def _run_other_node(node, inputs, opset):
    """A non-pooling node, through onnx's reference evaluator."""
    import onnx
    from onnx.reference import ReferenceEvaluator

    names = [n for n in node.input if n]
    graph = onnx.helper.make_graph(
        [node], "single_node", [onnx.helper.make_value_info(n, onnx.TypeProto()) for n in names],
        [onnx.helper.make_value_info(n, onnx.TypeProto()) for n in node.output if n])
    feeds = dict(zip(node.input, inputs))
    evaluator = ReferenceEvaluator(graph, opsets={node.domain: opset})
    return evaluator.run(None, {n: feeds[n] for n in names})


def run_node(node, inputs, opset=22):
    """Outputs (a list) of one onnx.NodeProto.

    inputs: a list in node order or a dict by input name.  opset: the opset of the node's
    domain.  Pooling nodes run on dnnpool (primitives cached per node, shape and dtype); any
    other node runs through onnx's reference evaluator."""
    inputs = node_inputs_by_position(node, inputs)
    if find_op(node.op_type, node.domain) is None:
        return list(_run_other_node(node, inputs, opset))
    return _cached_node(node.SerializeToString(), opset).run(inputs)
