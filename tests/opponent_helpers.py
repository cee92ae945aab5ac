"""Checkpoints with informative (not near-uniform) weights for the export and ladder tests."""

from __future__ import annotations

from pathlib import Path


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
