"""spec/onnx_ops.json against the operator schemas the ONNX ecosystem ships: onnx.defs for
the ai.onnx ops (every version), ONNX Runtime's registry for com.microsoft QLinearAveragePool."""
import pytest

onnx = pytest.importorskip("onnx", reason="the ONNX front end's optional dependency")

from dnnpool.onnx._specdata import onnx_ops  # noqa: E402

OPS = onnx_ops()["ops"]
ATTR_TYPES = {onnx.AttributeProto.INT: "INT", onnx.AttributeProto.INTS: "INTS",
              onnx.AttributeProto.STRING: "STRING"}


def _default(proto):
    if proto is None or proto.type == onnx.AttributeProto.UNDEFINED:
        return None
    value = onnx.helper.get_attribute_value(proto)
    return value.decode() if isinstance(value, bytes) else value


def _schema_facts(schema, default_of):
    """The facts spec/onnx_ops.json records, from an operator schema."""
    attributes = {name: {"type": ATTR_TYPES[a.type], "required": bool(a.required),
                         "default": default_of(a)}
                  for name, a in schema.attributes.items()}
    types = {t.type_param_str: sorted(s[len("tensor("):-1] for s in t.allowed_type_strs)
             for t in schema.type_constraints}
    inputs = [(i.name, str(i.option).endswith("Optional")) for i in schema.inputs]
    outputs = [(o.name, str(o.option).endswith("Optional")) for o in schema.outputs]
    return attributes, types, inputs, outputs


def _spec_facts(version):
    attributes = {name: {"type": a["type"], "required": bool(a.get("required")),
                         "default": a.get("default")}
                  for name, a in version["attributes"].items()}
    types = {name: sorted(allowed) for name, allowed in version["type_constraints"].items()}
    inputs = [(i["name"], bool(i.get("optional"))) for i in version["inputs"]]
    outputs = [(o["name"], bool(o.get("optional"))) for o in version["outputs"]]
    return attributes, types, inputs, outputs


def _without_scalar_inputs(types):
    """QLinearAveragePool's scales are typed tensor(float) directly, not by a constraint."""
    return {k: v for k, v in types.items() if k in ("T", "I")}


ONNX_OPS = [(name, v["since_version"]) for name, op in OPS.items() if op["domain"] == ""
            for v in op["versions"]]


@pytest.mark.parametrize("op_type,since", ONNX_OPS, ids=[f"{o}-{v}" for o, v in ONNX_OPS])
def test_version_matches_onnx_defs(op_type, since):
    schema = onnx.defs.get_schema(op_type, since)
    assert schema.since_version == since, "spec lists a version onnx does not have"
    version = next(v for v in OPS[op_type]["versions"] if v["since_version"] == since)
    assert _spec_facts(version) == _schema_facts(schema, lambda a: _default(a.default_value))


@pytest.mark.parametrize("op_type", [n for n, op in OPS.items() if op["domain"] == ""])
def test_every_onnx_version_is_listed(op_type):
    history = sorted({s.since_version for s in onnx.defs.get_all_schemas_with_history()
                      if s.name == op_type and s.domain == ""})
    assert [v["since_version"] for v in OPS[op_type]["versions"]] == history


def test_qlinear_average_pool_matches_onnxruntime_registry():
    ort_c = pytest.importorskip("onnxruntime.capi.onnxruntime_pybind11_state",
                                reason="ONNX Runtime holds the com.microsoft schemas")
    (schema,) = [s for s in ort_c.get_all_operator_schema()
                 if s.name == "QLinearAveragePool" and s.domain == "com.microsoft"]

    def default_of(attr):
        proto = onnx.AttributeProto()
        proto.ParseFromString(attr._default_value)
        return _default(proto)

    (version,) = OPS["QLinearAveragePool"]["versions"]
    assert schema.since_version == version["since_version"]
    got = list(_schema_facts(schema, default_of))
    want = list(_spec_facts(version))
    got[1], want[1] = _without_scalar_inputs(got[1]), _without_scalar_inputs(want[1])
    assert want == got
    scales = [i for i in version["inputs"] if i["type"] == "float"]
    assert [(i.name, i.typeStr) for i in schema.inputs if i.typeStr == "tensor(float)"] == \
        [(i["name"], "tensor(float)") for i in scales]


def test_every_version_states_its_rules():
    for name, op in OPS.items():
        for v in op["versions"]:
            where = f"{name}-{v['since_version']}"
            if op["kind"] == "AvgPool":
                assert v["rules"]["padding_counted"] in ("never", "count_include_pad"), where
            if "ceil_mode" in v["attributes"]:
                assert v["rules"].get("ceil_drop_rule") is True, where
            assert set(v["type_constraints"]["T"]) <= set(onnx_ops()["dtypes"]), where
