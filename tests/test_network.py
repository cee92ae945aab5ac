"""The policy/value network: shapes, hex convolution table, bilinear move head and action masking."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.network import MASKED_LOGIT, HalmaNet, legal_lists, neighbour_table
from halma_env import Game, Rules
from halma_env.encoding import encoding


def _positions(variant: str, n: int, count: int, seed: int = 0) -> list[Game]:
    rng = np.random.default_rng(seed)
    games = []
    game = Game(Rules(variant, n))
    for _ in range(count):
        for _ in range(int(rng.integers(0, 12))):
            if game.is_over:
                game = Game(Rules(variant, n))
            moves = game.legal_moves()
            game.play(moves[int(rng.integers(len(moves)))])
        games.append(game.copy())
    return games


def _batch(variant: str, n: int, count: int):
    enc = encoding(variant, n)
    games = _positions(variant, n, count)
    obs = torch.from_numpy(np.stack([enc.observation(g, g.to_move) for g in games]))
    mask = torch.from_numpy(np.stack([enc.action_mask(g) for g in games]).astype(bool))
    return games, obs, mask


@pytest.mark.parametrize("variant,n", [("star", 2), ("star", 6), ("diamond", 3), ("halma16", 2)])
def test_shapes(variant: str, n: int) -> None:
    torch.manual_seed(0)
    net = HalmaNet(variant, n, channels=8, blocks=1, pair_dim=8, value_hidden=8)
    _, obs, mask = _batch(variant, n, 5)
    legal, valid = legal_lists(mask)
    logits, value = net(obs, legal, valid)
    assert logits.shape == legal.shape and value.shape == (5,)
    dense, value2 = net.dense_logits(obs, mask)
    assert dense.shape == (5, encoding(variant, n).num_actions)
    assert torch.allclose(value, value2)


def test_no_dense_action_layer() -> None:
    """The move head is bilinear over per-hole embeddings: no parameter scales with H*H."""
    net = HalmaNet("star", 2)
    a = net.num_actions
    assert all(a not in p.shape for p in net.parameters())
    assert sum(p.numel() for p in net.parameters()) < 100_000


def test_illegal_actions_get_zero_probability() -> None:
    torch.manual_seed(1)
    net = HalmaNet("star", 3, channels=8, blocks=1, pair_dim=8, value_hidden=8)
    _, obs, mask = _batch("star", 3, 6)
    dense, _ = net.dense_logits(obs, mask)
    probs = torch.softmax(dense, dim=-1)
    assert torch.all(probs[~mask] == 0)
    assert torch.allclose(probs.sum(-1), torch.ones(6))
    # the padded-list path gives the same distribution over the legal actions
    legal, valid = legal_lists(mask)
    logits, _ = net(obs, legal, valid)
    assert torch.all(logits[~valid] == MASKED_LOGIT)
    lp_sparse = torch.log_softmax(logits, -1)
    lp_dense = torch.log_softmax(dense, -1).gather(1, legal)
    assert torch.allclose(lp_sparse[valid], lp_dense[valid], atol=1e-5)
    assert torch.all(torch.softmax(logits, -1)[~valid] == 0)
    # sampling never picks an illegal action
    samples = torch.distributions.Categorical(logits=dense).sample((200,))
    assert mask.gather(1, samples.T).all()


def test_legal_lists_round_trip() -> None:
    _, _, mask = _batch("diamond", 2, 4)
    legal, valid = legal_lists(mask)
    assert valid.sum().item() == mask.sum().item()
    rebuilt = torch.zeros_like(mask)
    for b in range(mask.shape[0]):
        rebuilt[b, legal[b][valid[b]]] = True
        assert torch.all(legal[b][valid[b]].diff() > 0)  # ascending, no duplicates
    assert torch.equal(rebuilt, mask)


def test_empty_mask_row_is_padding_only() -> None:
    mask = torch.zeros(2, 10, dtype=torch.bool)
    mask[1, 3] = True
    legal, valid = legal_lists(mask)
    assert legal.shape == (2, 1) and not valid[0].any() and legal[1, 0] == 3


@pytest.mark.parametrize("variant,n", [("star", 2), ("halma16", 2)])
def test_neighbour_table_matches_geometry(variant: str, n: int) -> None:
    g = encoding(variant, n).layout.geometry
    table = neighbour_table(variant, n)
    h = g.num_holes
    assert table.shape == (h, 1 + g.num_directions)
    for hole in range(h):
        assert table[hole, 0] == hole
        assert set(table[hole, 1:]) - {h} == set(g.neighbours[hole])
    if variant == "star":
        assert (table[60, 1:] < h).sum() == 6  # the centre has 6 hex neighbours
        assert (table[0, 1:] < h).sum() == 2  # the top tip has 2


def test_value_and_logits_depend_on_the_position() -> None:
    torch.manual_seed(2)
    net = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8)
    _, obs, mask = _batch("star", 2, 2)
    dense, value = net.dense_logits(obs, mask)
    assert torch.isfinite(dense).all() and torch.isfinite(value).all()
    obs2 = obs.clone()
    obs2[0] = obs[1]
    _, value2 = net.dense_logits(obs2, mask)
    assert value2[0].item() == pytest.approx(value[1].item(), abs=1e-5)
