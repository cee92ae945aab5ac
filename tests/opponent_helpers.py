"""Checkpoints with informative (not near-uniform) weights for the export and ladder tests, and tiny
hand-built ONNX models for the opponent loader's security tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def make_checkpoint(path: Path, variant: str = "star", seats: int = 2, seed: int = 1, scale: float = 0.3,
                    attention_layers: int = 0, reach_features: bool = False) -> Path:
    """A HalmaNet checkpoint whose weights are perturbed by ``scale`` so its logits are spread out
    (a freshly initialised head gives near-equal logits, which would make move equality a tie test)."""
    import torch

    from agents.checkpoint import save_checkpoint
    from agents.config import NetworkConfig
    from agents.network import build_network

    torch.manual_seed(seed)
    cfg = NetworkConfig(attention_layers=attention_layers, reach_features=reach_features)
    net = build_network(variant, seats, cfg)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * scale)
    return save_checkpoint(path, {"variant": variant, "num_players": seats, "network": vars(cfg).copy(),
                                  "model": net.state_dict(), "config": {"note": "test checkpoint"},
                                  "global_step": 1234})


def write_graph_model(path: Path, nodes: list | None = None, initializers: list | None = None,
                      extra: str | None = None, opsets: dict[str, int] | None = None,
                      sparse_initializers: list | None = None) -> Path:
    """A tiny star-2 "opponent" written with ``onnx.helper`` (no torch, no export) and its manifest,
    whose checksum matches: ``logits = float(action_mask) + EXTRA`` (``EXTRA`` a float tensor the
    given ``nodes`` compute from ``mf``, the float mask, and ``initializers``), ``value`` the mask's sum.
    Only exporter operators unless ``nodes`` bring others: the models of the security tests."""
    import hashlib
    import json

    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from halma_env.encoding import ENCODING_VERSION, encoding

    enc = encoding("star", 2)
    inputs = [helper.make_tensor_value_info("observation", TensorProto.INT8, ["batch", *enc.observation_shape]),
              helper.make_tensor_value_info("action_mask", TensorProto.INT8, ["batch", enc.num_actions])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", enc.num_actions]),
               helper.make_tensor_value_info("value", TensorProto.FLOAT, ["batch"])]
    inits = [numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"), *(initializers or [])]
    if extra is None:
        extra = "zero"
        inits.append(numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero"))
    graph = helper.make_graph(
        [helper.make_node("Cast", ["action_mask"], ["mf"], to=TensorProto.FLOAT), *(nodes or []),
         helper.make_node("Add", ["mf", extra], ["logits"]),
         helper.make_node("ReduceSum", ["mf", "axis1"], ["value"], keepdims=0)],
        "g", inputs, outputs, initializer=inits, sparse_initializer=sparse_initializers)
    imports = [helper.make_opsetid(domain, version) for domain, version in {"": 17, **(opsets or {})}.items()]
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 8
    data = model.SerializeToString()
    path.write_bytes(data)
    manifest = {"format": "halma_env.opponent", "format_version": 1, "variant": "star", "num_players": 2,
                "encoding_version": ENCODING_VERSION, "onnx_sha256": hashlib.sha256(data).hexdigest(),
                "onnx_file": path.name}
    path.with_name(path.name[: -len(".onnx")] + ".manifest.json").write_text(json.dumps(manifest))
    return path


def external_tensor(name: str, location: str, length: int) -> Any:
    """A uint8 tensor whose ``length`` bytes are those of the file ``location`` (ONNX external data)."""
    from onnx import TensorProto

    t = TensorProto()
    t.name, t.data_type = name, TensorProto.UINT8
    t.dims.append(length)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", str(length))):
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    return t
