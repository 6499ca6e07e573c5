"""Whole ONNX models: onnx's reference evaluator runs the graph, dnnpool runs its pooling nodes.

The pooling ops are handed to onnx.reference.ReferenceEvaluator as custom OpRun classes
(`new_ops`, keyed by domain and class name); each instance delegates to a PoolingNode.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from ._specdata import onnx_ops
from .runner import PoolingNode
from .translate import OnnxNodeError, OnnxNodeTypeError

__all__ = ["ModelRunner", "run_model", "POOLING_OPS", "load_model"]


class _PoolingOpRun(OpRun):
    """Base of the evaluator's pooling ops; subclasses are named after the ONNX op."""

    # No schema: OpRun would otherwise fill in the newest opset's defaults (count_include_pad
    # on AveragePool-1, ...), while the node's own opset decides what is allowed.
    op_schema = None

    def __init__(self, onnx_node, run_params, schema=None):
        super().__init__(onnx_node, run_params, schema)
        self.opset = run_params["opsets"][onnx_node.domain]
        # Attributes linked to an enclosing function are known only at run time: one
        # PoolingNode per set of values the calls bring.
        self.pool = None if self.has_linked_attribute else PoolingNode.from_node(
            onnx_node, self.opset)
        self.linked_pools = {}

    def _run(self, *inputs, **attrs):
        pool = self.pool
        if pool is None:
            # only the node's own attributes: an onnx that ignores op_schema adds defaults
            declared = {a.name for a in self.onnx_node.attribute}
            attrs = {k: v for k, v in attrs.items() if k in declared}
            key = repr(sorted(attrs.items()))
            pool = self.linked_pools.get(key)
            if pool is None:
                pool = self.linked_pools.setdefault(
                    key, PoolingNode.from_node(self.onnx_node, self.opset, attrs))
        return tuple(pool.run(list(inputs)))


POOLING_OPS = [type(name, (_PoolingOpRun,), {"op_domain": entry["domain"]})
               for name, entry in onnx_ops()["ops"].items()]


class _Evaluator(ReferenceEvaluator):
    """ReferenceEvaluator whose every instance, including the ones it creates for model-local
    functions and subgraphs, runs the pooling ops on dnnpool."""

    def __init__(self, proto, *args, new_ops=None, **kwargs):
        super().__init__(proto, *args, new_ops=POOLING_OPS + list(new_ops or []), **kwargs)


def _front_end_error(exc):
    """The ONNX front end's own error inside the evaluator's wrapping TypeError, if any."""
    while exc is not None:
        if isinstance(exc, (OnnxNodeError, OnnxNodeTypeError)):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _reraise_front_end_errors(call, *args):
    """call(*args), with the front end's own error raised in place of the evaluator's wrapper
    (which would bury it under a generic 'Issues with types ...' message)."""
    try:
        return call(*args)
    except (TypeError, ValueError, RuntimeError) as e:
        inner = _front_end_error(e)
        if inner is None or inner is e:
            raise
        raise inner from None


def load_model(model_or_path):
    if isinstance(model_or_path, onnx.ModelProto):
        return model_or_path
    return onnx.load(str(model_or_path))


class ModelRunner:
    """A model prepared once (evaluator, per-node primitive caches) and run many times."""

    def __init__(self, model_or_path):
        self.model = load_model(model_or_path)
        self.evaluator = _reraise_front_end_errors(_Evaluator, self.model)
        initialized = {i.name for i in self.model.graph.initializer}
        self.input_names = [i.name for i in self.model.graph.input if i.name not in initialized]
        self.output_names = [o.name for o in self.model.graph.output]

    @property
    def pooling_nodes(self):
        """The PoolingNode of every pooling node of the main graph that is bound already."""
        return [op.pool for op in self.evaluator.rt_nodes_
                if isinstance(op, _PoolingOpRun) and op.pool is not None]

    def run(self, inputs):
        """Graph outputs (a list, in graph order) for inputs given as a list (graph input
        order, initializers excluded) or a dict by name."""
        if not isinstance(inputs, dict):
            inputs = list(inputs)
            if len(inputs) != len(self.input_names):
                raise ValueError(f"model takes {len(self.input_names)} inputs "
                                 f"{self.input_names}, got {len(inputs)}")
            inputs = dict(zip(self.input_names, inputs))
        missing = [n for n in self.input_names if n not in inputs]
        if missing:
            raise ValueError(f"model inputs {missing} are missing (inputs: {self.input_names})")
        feeds = {k: np.asarray(v) for k, v in inputs.items()}
        return list(_reraise_front_end_errors(self.evaluator.run, None, feeds))


def run_model(model_or_path, inputs):
    """Outputs (a list, in graph order) of an ONNX model (ModelProto or path); pooling nodes
    run on dnnpool, every other node on onnx's reference evaluator."""
    return ModelRunner(model_or_path).run(inputs)
