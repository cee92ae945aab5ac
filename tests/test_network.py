"""The policy/value network: shapes, hex convolution table, bilinear move head and action masking."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.network import (
    CHUNK_POSITIONS,
    MASKED_LOGIT,
    REACH_GAIN_SCALE,
    REACH_PLANES,
    ROWS_CACHE_SIZE,
    HalmaNet,
    HoleConv,
    JumpReach,
    _pair_logits,
    _PairLogitsFunction,
    gather_rows,
    legal_lists,
    load_extending,
    neighbour_table,
    reach_tables,
    reverse_table,
)
from halma_env import Game, Rules
from halma_env.encoding import encoding
from tests.engine_helpers import position


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


def test_every_batch_size_reads_its_own_neighbours() -> None:
    """The gather rows kept per batch size give each position the result it has alone, for more batch
    sizes than are kept (the cache starts over), and the cache stays bounded."""
    torch.manual_seed(1)
    net = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8)
    _, obs, mask = _batch("star", 2, CHUNK_POSITIONS + 3)
    legal, valid = legal_lists(mask)
    with torch.no_grad():
        alone = [net(obs[i:i + 1], legal[i:i + 1], valid[i:i + 1]) for i in range(len(obs))]
        for size in [5, CHUNK_POSITIONS + 3, 2, 5, *range(6, 6 + ROWS_CACHE_SIZE), 3]:
            logits, value = net(obs[:size], legal[:size], valid[:size])
            for i in range(size):
                assert torch.allclose(logits[i], alone[i][0][0], atol=1e-5)
                assert torch.allclose(value[i], alone[i][1][0], atol=1e-5)
            assert len(net._rows_cache) <= ROWS_CACHE_SIZE


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


def test_the_networks_defaults_are_the_configs() -> None:
    """One set of defaults: HalmaNet built without sizes is the network a config without them builds."""
    import inspect

    from agents.config import NetworkConfig

    defaults = {name: p.default for name, p in inspect.signature(HalmaNet).parameters.items()
                if p.default is not inspect.Parameter.empty}
    assert defaults == vars(NetworkConfig())


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


@pytest.mark.parametrize("variant,n", [("star", 2), ("diamond", 3), ("halma16", 2)])
def test_reverse_table_inverts_each_tap(variant: str, n: int) -> None:
    table = neighbour_table(variant, n)
    reverse = reverse_table(table)
    h, taps = table.shape
    for d in range(taps):
        readers = {(int(table[i, d]), i) for i in range(h) if table[i, d] < h}
        assert readers == {(j, int(reverse[j, d])) for j in range(h) if reverse[j, d] < h}
    assert (reverse[:, 0] == np.arange(h)).all()  # the self tap


@pytest.mark.parametrize("variant,n", [("star", 2), ("halma16", 2)])
def test_hole_conv_backward_matches_autograd(variant: str, n: int) -> None:
    """The hand-written backward (a transposed convolution over the reverse table) gives the
    gradients autograd gives for the same gather + linear."""
    torch.manual_seed(4)
    table = neighbour_table(variant, n)
    h, taps = table.shape
    block = HoleConv(8, taps)
    batch = CHUNK_POSITIONS + 3  # a full chunk and a partial one
    x = torch.randn(batch, h, 8, requires_grad=True)
    flat, reverse = torch.as_tensor(table).reshape(-1), torch.as_tensor(reverse_table(table)).reshape(-1)
    rows, reverse_rows = gather_rows(flat, batch, h), gather_rows(reverse, batch, h)
    weights = torch.randn(batch, h, 8)
    (block(x, rows, reverse_rows) * weights).sum().backward()
    fused = [x.grad.clone()] + [p.grad.clone() for p in block.parameters()]
    x.grad = None
    block.zero_grad()
    padded = torch.cat([x, x.new_zeros(batch, 1, 8)], dim=1)
    gathered = torch.index_select(padded, 1, flat).reshape(batch, h, -1)
    (block.norm(x + torch.relu(block.linear(gathered))) * weights).sum().backward()
    plain = [x.grad] + [p.grad for p in block.parameters()]
    # float rounding only: the weight gradient sums its ~2,000 terms per entry in another order than
    # autograd (errors near 1e-7 of the largest entry); a wrong term would be of the entries' own size
    for a, b in zip(fused, plain, strict=True):
        assert (a - b).abs().max() <= 2e-6 * b.abs().max(), (a - b).abs().max()
    with torch.no_grad():
        assert torch.allclose(block(x, rows, reverse_rows), block.norm(x + torch.relu(block.linear(gathered))),
                              atol=1e-6)


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


# Greedy actions and values of the shipped checkpoints on 40 positions (export.sample_positions("star", 2, 40,
# seed=3)): a faster formulation of the network must keep loading these state dicts and give the same moves.
# The quickstart's were recorded with the network code it was trained with (before the hand-written backward
# and the chunked convolution); star2's with the code of its last training stage (the chunks and the move
# head's hand-written backward; the 32 x 4 network).
SHIPPED_GOLDEN = {
    "quickstart_star2": (
        [10115, 12431, 12299, 9018, 13764, 13029, 13646, 12309, 13886, 10724, 8530, 13766, 9722, 12309, 11303, 14346,
         13996, 13886, 11081, 9749, 9505, 14599, 9577, 9964, 13764, 8522, 9964, 13863, 3526, 10724, 14599, 14261,
         14097, 8164, 12543, 14236, 14236, 8034, 11101, 12909],
        [0.535, 0.576, 0.562, 0.567, 0.618, 0.428, 0.624, 0.447, 0.681, 0.65, 0.396, 0.793, 0.429, 0.616, 0.461, 0.464,
         0.31, 0.438, 0.448, 0.838, 0.574, 0.622, 0.414, 0.505, 0.729, 0.391, 0.412, 0.594, 0.483, 0.451, 0.615, 0.473,
         0.549, 0.454, 0.644, 0.785, 0.55, 0.536, 0.708, 0.536]),
    "star2": (
        [14031, 14515, 13778, 14515, 12676, 14026, 12665, 13603, 13886, 14148, 14394, 14599, 14026, 13644, 3147, 14346,
         13996, 14599, 9628, 14624, 13886, 14599, 9577, 8165, 13764, 7432, 8286, 13863, 13764, 10725, 14599, 14261,
         10846, 14639, 14511, 14236, 14236, 14515, 14515, 14149],
        [0.927, 0.675, 0.312, 0.631, 0.693, 0.44, 0.69, 0.36, 0.988, 0.331, 0.511, 0.879, 0.233, 0.734, 0.387, 0.564,
         0.172, 1.106, 0.647, 0.758, 0.961, 0.717, 0.857, 0.437, 0.719, 0.165, 0.35, 0.839, 0.084, 0.267, 0.295, 0.568,
         0.057, 0.304, 0.759, 0.638, 0.765, 0.656, 0.489, 0.426]),
}


@pytest.mark.parametrize("name", sorted(SHIPPED_GOLDEN))
def test_shipped_checkpoints_give_their_recorded_moves(name: str) -> None:
    from pathlib import Path

    from agents.checkpoint import load_checkpoint, model_from_checkpoint
    from agents.export import sample_positions

    path = Path(__file__).resolve().parents[1] / "agents" / "checkpoints" / f"{name}.pt"
    net = model_from_checkpoint(load_checkpoint(path)).eval()
    enc = encoding("star", 2)
    games = sample_positions("star", 2, 40, seed=3)
    obs = torch.from_numpy(np.stack([enc.observation(g, g.to_move) for g in games]))
    mask = torch.from_numpy(np.stack([enc.action_mask(g) for g in games]).astype(bool))
    best, values = SHIPPED_GOLDEN[name]
    with torch.no_grad():
        dense, value = net.dense_logits(obs, mask)
        legal, valid = legal_lists(mask)
        logits, value2 = net(obs, legal, valid)
    assert dense.argmax(1).tolist() == best
    assert value.tolist() == pytest.approx(values, abs=1e-3)
    # the padded-list path (training, play) picks the same moves with the same values
    assert legal.gather(1, logits.argmax(1, keepdim=True)).squeeze(1).tolist() == best
    assert torch.allclose(value, value2)


def test_list_and_dense_paths_have_the_same_gradients() -> None:
    """Training uses the padded-list path: its gradients are those of the dense (all H*H actions) path."""
    torch.manual_seed(3)
    net = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8)
    _, obs, mask = _batch("star", 2, 4)
    legal, valid = legal_lists(mask)

    def grads(loss: torch.Tensor) -> list[torch.Tensor]:
        net.zero_grad()
        loss.backward()
        return [p.grad.clone() for p in net.parameters()]

    logits, value = net(obs, legal, valid)
    sparse = grads(torch.log_softmax(logits, -1)[valid].sum() + value.sum())
    dense, value = net.dense_logits(obs, mask)
    dense_grads = grads(torch.log_softmax(dense, -1).gather(1, legal)[valid].sum() + value.sum())
    for a, b in zip(sparse, dense_grads):
        assert torch.allclose(a, b, atol=1e-4, rtol=1e-3)


def test_pair_logits_backward_matches_autograd() -> None:
    """The move head's hand-written backward gives autograd's gradients, also where moves share holes
    (every row is read many times, as the padding of short move lists reads hole 0)."""
    torch.manual_seed(5)
    pair_dim = 4
    src_table = torch.randn(30, pair_dim, requires_grad=True)
    dst_table = torch.randn(30, pair_dim + 1, requires_grad=True)
    src_rows, dst_rows = torch.randint(0, 30, (200,)), torch.randint(0, 30, (200,))
    src_rows[:50] = 0
    weights = torch.randn(200)
    (_PairLogitsFunction.apply(src_table, dst_table, src_rows, dst_rows) * weights).sum().backward()
    fused = [src_table.grad.clone(), dst_table.grad.clone()]
    src_table.grad = dst_table.grad = None
    plain = _pair_logits(src_table.index_select(0, src_rows), dst_table.index_select(0, dst_rows))
    (plain * weights).sum().backward()
    for a, b in zip(fused, [src_table.grad, dst_table.grad], strict=True):
        assert torch.allclose(a, b, atol=1e-5), (a - b).abs().max()
    with torch.no_grad():
        assert torch.equal(_PairLogitsFunction.apply(src_table, dst_table, src_rows, dst_rows), plain)


def test_attention_layers_read_the_whole_board_and_train() -> None:
    """A global attention layer lets a hole's features depend on holes beyond the convolutions' reach,
    and its gradients (list path) match the dense path's like the convolutions' do."""
    torch.manual_seed(7)
    _, obs, mask = _batch("star", 2, 4)
    row, col = divmod(int(encoding("star", 2).grid_index[0]), 17)
    far = obs.clone()
    far[:, row, col, 9] = 0  # hole 0 (a camp's tip) drops off the "board" plane

    def holes_reached(net: HalmaNet) -> torch.Tensor:
        heads, heads_far = torch.cat(net.trunk(obs)[:2], -1), torch.cat(net.trunk(far)[:2], -1)
        return ((heads - heads_far).abs().amax(dim=-1) > 0).sum(dim=1)  # per position: holes whose features moved

    assert (holes_reached(HalmaNet("star", 2, channels=8, blocks=1, pair_dim=8, value_hidden=8)) == 3).all()
    net = HalmaNet("star", 2, channels=8, blocks=1, pair_dim=8, value_hidden=8, attention_layers=1)
    with torch.no_grad():  # a trained layer, not the identity it starts as
        net.attention[0].out.weight.normal_(0, 0.5)
    assert (holes_reached(net) == 121).all()
    legal, valid = legal_lists(mask)
    logits, value = net(obs, legal, valid)
    (torch.log_softmax(logits, -1)[valid].sum() + value.sum()).backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in net.attention.parameters())


def test_adding_attention_keeps_the_play_and_checks_the_weights() -> None:
    """``load_extending`` adds identity layers: the same logits and values until trained."""
    torch.manual_seed(8)
    net = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    wide = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8, attention_layers=2)
    assert load_extending(wide, net.state_dict()) == ["2 attention layer(s)"]
    _, obs, mask = _batch("star", 2, 6)
    (logits, value), (wide_logits, wide_value) = net.dense_logits(obs, mask), wide.dense_logits(obs, mask)
    assert torch.equal(logits, wide_logits) and torch.equal(value, wide_value)
    state = net.state_dict()
    del state["embed.weight"]
    fresh = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8, attention_layers=1)
    with pytest.raises(ValueError, match="less some attention layers or the reach features: embed.weight"):
        load_extending(fresh, state)


def _reach_reference(obs: np.ndarray, variant: str) -> np.ndarray:
    """``JumpReach``'s features by a breadth-first search of each piece's jump chains, in plain Python."""
    over, land, own, other = reach_tables(variant, 2)
    enc = encoding(variant, 2)
    h = enc.num_holes
    planes = obs.reshape(-1, obs.shape[-1])[enc.grid_index]  # (H, 12) in canonical holes
    occupied = {x for x in range(h) if planes[x, 0] or planes[x, 1]}
    out = np.zeros((h, REACH_PLANES))
    for side, dist in ((0, own), (1, other)):
        for x in (x for x in range(h) if planes[x, side]):
            seen, frontier = set(), [x]
            while frontier:
                y = frontier.pop()
                for d in range(over.shape[1]):
                    to = land[y, d]
                    if over[y, d] < h and over[y, d] in occupied and to < h and to not in occupied and to not in seen:
                        seen.add(to)
                        frontier.append(to)
            if seen:
                out[x, side] = max(0.0, dist[x] - min(dist[y] for y in seen)) * REACH_GAIN_SCALE
            for y in seen:
                out[y, 2 + side] = max(out[y, 2 + side], max(0.0, dist[x] - dist[y]) * REACH_GAIN_SCALE)
                out[y, 4 + side] = 1.0
    return out


@pytest.mark.parametrize("variant", ["star", "halma16"])
def test_reach_features_are_the_jump_chains_of_both_sides(variant: str) -> None:
    """The six planes equal a per-piece search of jump chains, and the actor's chains are its legal jumps."""
    enc = encoding(variant, 2)
    geometry = enc.layout.geometry
    games, obs, _ = _batch(variant, 2, 24)
    games += [Game(Rules(variant, 2))]
    obs = torch.cat([obs, torch.from_numpy(enc.observation(games[-1], 0)).unsqueeze(0)])
    reach = JumpReach(variant, 2)
    features = reach(HalmaNet(variant, 2, channels=4, blocks=0, pair_dim=4, value_hidden=4).holes(obs)).numpy()
    own = reach_tables(variant, 2)[2]
    assert features[:, :, 0].max() > 0 and features[:, :, 1].max() > 0  # the positions have chains of both sides
    for i, game in enumerate(games):
        np.testing.assert_allclose(features[i], _reach_reference(obs[i].numpy(), variant), atol=1e-6)
        seat, canon = game.to_move, enc.to_canonical[game.to_move]
        jumps = [m for m in game.legal_moves() if geometry.distance(m.src, m.dst) > 1]  # steps move 1 hole
        reached = {int(canon[m.dst]) for m in jumps}
        marked = {int(y) for y in np.flatnonzero(features[i, :, 4])}
        assert reached <= marked  # every legal jump ends on a marked hole
        # a marked hole that no step of the actor reaches is the end of a legal jump
        assert {y for y in marked if all(geometry.distance(int(enc.from_canonical[seat][y]), src) > 1
                                         for src in game.pieces(seat))} <= reached
        for src in game.pieces(seat):
            gains = [own[canon[src]] - own[canon[m.dst]] for m in jumps if m.src == src]
            assert features[i, canon[src], 0] >= max(gains + [0]) * REACH_GAIN_SCALE - 1e-6


def test_reach_features_follow_a_chain_one_jump_plus_the_propagation_rounds() -> None:
    """halma16: seat 0's piece on 112 (row 7, column 0) has one chain of 15 jumps and no shortcut: right
    along row 7 over seat 1's pieces on the odd columns, down over 142, and back left along row 9.  The
    engine allows every landing; the features mark the first jump's landing and what the rounds reach
    from it, ``REACH_ROUNDS`` (12) further jumps, 13 in all, and no more: the documented bound."""
    over = [row * 16 + c for row in (7, 9) for c in range(1, 16, 2) if (row, c) != (9, 15)]
    pieces = {112: "0", 142: "1", **{h: "1" for h in over}}
    game = Game.from_position(position("halma16", 2, pieces))
    chain = [7 * 16 + c for c in range(2, 15, 2)] + [9 * 16 + c for c in range(14, -1, -2)]  # 1, 2, ... 15 jumps
    assert {m.dst for m in game.legal_moves() if m.src == 112} >= set(chain)
    enc = encoding("halma16", 2)
    obs = torch.from_numpy(enc.observation(game, 0)).unsqueeze(0)
    features = JumpReach("halma16", 2)(HalmaNet("halma16", 2).holes(obs))[0].numpy()
    marked = {int(enc.from_canonical[0][y]) for y in np.flatnonzero(features[:, 4])}
    assert marked == set(chain[:13])  # REACH_ROUNDS = 12


def test_reach_features_need_a_mirrored_two_seat_game() -> None:
    with pytest.raises(ValueError, match="network.reach_features is for 2-seat games .* not 3 seats"):
        JumpReach("star", 3)
    with pytest.raises(ValueError, match="network.reach_features needs a 2-seat game whose seats mirror"):
        JumpReach("diamond", 2)


def test_adding_reach_features_keeps_the_play_and_then_trains() -> None:
    """``load_extending`` gives the reach planes zero input weights: the same play (to float rounding)
    until trained, and
    the planes' weights get gradients."""
    torch.manual_seed(9)
    net = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    wide = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8, reach_features=True,
                    attention_layers=1)
    assert load_extending(wide, net.state_dict()) == ["1 attention layer(s)", "reach features"]
    _, obs, mask = _batch("star", 2, 6)
    (logits, value), (wide_logits, wide_value) = net.dense_logits(obs, mask), wide.dense_logits(obs, mask)
    # the embedding's matmul over 18 inputs (6 of them times zero) may round differently from 12
    assert torch.allclose(logits, wide_logits, atol=1e-5) and torch.allclose(value, wide_value, atol=1e-5)
    assert torch.equal(logits.argmax(-1), wide_logits.argmax(-1))
    legal, valid = legal_lists(mask)
    logits, value = wide(obs, legal, valid)
    (torch.log_softmax(logits, -1)[valid].sum() + value.sum()).backward()
    assert wide.embed.weight.grad[:, -REACH_PLANES:].abs().sum() > 0
    narrow = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8)
    with pytest.raises(ValueError, match=r"embed.weight \(8, 18\) vs \(8, 12\)"):
        load_extending(narrow, wide.state_dict())


# --- audit: the hole convolution, the move head and the canonical frame against independent references ---

# The tap order the shipped weights were trained with, as grid offsets (row, col) of each tap's neighbour:
# the hole itself, then the 6 hex directions of the 17 x 17 axial grid (star, diamond) or the 8 king
# directions of the 16 x 16 board (halma16).  The star's 3 x 3 kernel leaves out (1, -1) and (-1, 1).
TAP_OFFSETS = {
    "hex": [(0, 0), (0, 1), (1, 1), (1, 0), (0, -1), (-1, -1), (-1, 0)],
    "square": [(0, 0), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)],
}


def _grid_conv_reference(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, variant: str) -> torch.Tensor:
    """``relu(sum over taps of W_tap x_neighbour + b)`` as a 3 x 3 ``conv2d`` of the features laid out on
    the observation grid (cells off the board are zeros) with the kernel's unused corners zero."""
    enc = encoding(variant, 2)
    rows, cols = enc.grid_shape
    b, h, c = x.shape
    offsets = TAP_OFFSETS["square" if variant == "halma16" else "hex"]
    kernel = weight.new_zeros(weight.shape[0], c, 3, 3)
    for d, (dr, dc) in enumerate(offsets):
        kernel[:, :, 1 + dr, 1 + dc] = weight[:, d * c:(d + 1) * c]
    cells = torch.tensor(enc.grid_index)  # (a copy: the encoding's tables are read-only)
    grid = x.new_zeros(b, rows * cols, c)
    grid[:, cells] = x
    out = torch.nn.functional.conv2d(grid.view(b, rows, cols, c).permute(0, 3, 1, 2), kernel, bias, padding=1)
    return torch.relu(out.permute(0, 2, 3, 1).reshape(b, rows * cols, -1)[:, cells])


def _conv_rows(variant: str, batch: int) -> tuple[int, int, torch.Tensor, torch.Tensor]:
    table = neighbour_table(variant, 2)
    h, taps = table.shape
    flat, reverse = torch.as_tensor(table).reshape(-1), torch.as_tensor(reverse_table(table)).reshape(-1)
    return h, taps, gather_rows(flat, batch, h), gather_rows(reverse, batch, h)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("variant", ["star", "diamond", "halma16"])
def test_hole_conv_is_the_masked_grid_convolution(variant: str, dtype: torch.dtype) -> None:
    """The chunked convolution over the holes equals a 3 x 3 convolution of the grid with the documented
    tap order (missing neighbours read zeros), for batches around the chunk size."""
    from agents.network import _HoleConvFunction

    torch.manual_seed(11)
    channels, out_channels = 5, 6
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    for batch in (1, CHUNK_POSITIONS - 1, CHUNK_POSITIONS, CHUNK_POSITIONS + 1, 2 * CHUNK_POSITIONS + 1):
        h, taps, rows, reverse_rows = _conv_rows(variant, batch)
        x = torch.randn(batch, h, channels, dtype=dtype)
        weight = torch.randn(out_channels, taps * channels, dtype=dtype)
        bias = torch.randn(out_channels, dtype=dtype)
        got = _HoleConvFunction.apply(x, weight, bias, rows, reverse_rows)
        assert got.dtype == dtype and got.shape == (batch, h, out_channels)
        ref = _grid_conv_reference(x, weight, bias, variant)
        assert (got - ref).abs().max() <= tol * ref.abs().max(), (batch, (got - ref).abs().max())


@pytest.mark.parametrize("variant", ["star", "halma16"])
def test_hole_conv_gradcheck(variant: str) -> None:
    """Finite differences in float64 confirm the hand-written backward (input, weight and bias): exactly on
    two positions, and in gradcheck's fast mode (random projections) across a chunk boundary."""
    from agents.network import _HoleConvFunction

    torch.manual_seed(12)
    for batch, channels, out_channels, fast in ((2, 2, 3, False), (CHUNK_POSITIONS + 1, 3, 2, True)):
        h, taps, rows, reverse_rows = _conv_rows(variant, batch)
        x = torch.randn(batch, h, channels, dtype=torch.float64, requires_grad=True)
        weight = torch.randn(out_channels, taps * channels, dtype=torch.float64, requires_grad=True)
        bias = torch.randn(out_channels, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(
            lambda x, w, b, rows=rows, reverse_rows=reverse_rows: _HoleConvFunction.apply(x, w, b, rows, reverse_rows),
            (x, weight, bias), fast_mode=fast)


def test_pair_logits_gradcheck_with_shared_rows() -> None:
    """Finite differences in float64 confirm the move head's backward where rows repeat: duplicate
    (src, dst) pairs, a row read as both source and destination, and hole 0 read many times."""
    torch.manual_seed(13)
    src_table = torch.randn(9, 3, dtype=torch.float64, requires_grad=True)
    dst_table = torch.randn(9, 4, dtype=torch.float64, requires_grad=True)
    src_rows = torch.tensor([0, 0, 0, 2, 2, 5, 8, 0, 0])
    dst_rows = torch.tensor([0, 3, 3, 2, 2, 0, 8, 0, 0])
    assert torch.autograd.gradcheck(lambda s, d: _PairLogitsFunction.apply(s, d, src_rows, dst_rows),
                                    (src_table, dst_table))
    # its backward is written by hand for the first derivative only: a second one is an error, not wrong numbers
    out = _PairLogitsFunction.apply(src_table, dst_table, src_rows, dst_rows)
    grad_out = torch.ones_like(out, requires_grad=True)
    (grad,) = torch.autograd.grad(out, src_table, grad_out, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        grad.sum().backward()


def test_move_head_padding_dense_scatter_and_ties() -> None:
    """The list logits of the real entries do not depend on how long the trailing padding is or what it
    holds; padding reads exactly ``MASKED_LOGIT``; the dense logits are the list logits scattered into the
    H*H actions (every other action masked); greedy picks agree, ties going to the lowest action."""
    torch.manual_seed(14)
    net = HalmaNet("star", 3, channels=8, blocks=2, pair_dim=8, value_hidden=8)
    _, obs, mask = _batch("star", 3, 5)
    legal, valid = legal_lists(mask)
    with torch.no_grad():
        logits, value = net(obs, legal, valid)
        for extra, fill in ((1, 0), (7, 14640), (3, 123)):
            longer = torch.cat([legal, torch.full((5, extra), fill)], dim=1)
            padded = torch.cat([valid, torch.zeros(5, extra, dtype=torch.bool)], dim=1)
            logits2, value2 = net(obs, longer, padded)
            assert torch.equal(logits2[:, :legal.shape[1]], logits) and torch.equal(value2, value)
            assert torch.all(logits2[~padded] == MASKED_LOGIT)
        dense, dense_value = net.dense_logits(obs, mask)
        scattered = torch.full_like(dense, MASKED_LOGIT)
        scattered[valid.nonzero(as_tuple=True)[0], legal[valid]] = logits[valid]
        # matmul against elementwise products: float rounding only (logits of order 1 here)
        assert (dense - scattered).abs().max() < 1e-5 and torch.equal(dense[~mask], scattered[~mask])
        assert torch.equal(dense_value, value)
        assert torch.equal(dense.argmax(1), legal.gather(1, logits.argmax(1, keepdim=True)).squeeze(1))
        # all logits equal (no source term, no destination bias): both paths pick the lowest legal action
        net.src_head.weight.zero_()
        net.src_head.bias.zero_()
        net.dst_bias.weight.zero_()
        dense, _ = net.dense_logits(obs, mask)
        logits, _ = net(obs, legal, valid)
    lowest = legal[:, 0]
    assert torch.equal(dense.argmax(1), lowest) and torch.equal(legal.gather(1, logits.argmax(1, keepdim=True))[:, 0],
                                                                lowest)


def _turned(game: Game, k: int) -> Game:
    """The position turned so that seat ``to_move + k`` stands where ``to_move`` stood, every seat's
    pieces (and kings) renumbered by ``+k``, with seat ``to_move + k`` to move."""
    enc, n = encoding(game.rules.variant, game.num_players), game.num_players
    seat = game.to_move
    hole_map = enc.from_canonical[(seat + k) % n][enc.to_canonical[seat]]
    variant, seats, board, _, ply = game.position().split(" ")
    chars = list(board.replace("/", ""))
    turned = ["."] * len(chars)
    for hole, ch in enumerate(chars):
        if ch != ".":
            alphabet = "012345" if ch.isdigit() else "ABCDEF"
            turned[hole_map[hole]] = alphabet[(alphabet.index(ch) + k) % n]
    rows, i = [], 0
    for width in game.geometry.row_widths:
        rows.append("".join(turned[i:i + width]))
        i += width
    return Game.from_position(f"{variant} {seats} {'/'.join(rows)} {(seat + k) % n} {ply}")


@pytest.mark.parametrize("variant,n", [("star", 2), ("star", 3), ("star", 6), ("diamond", 3), ("halma16", 2)])
def test_turned_positions_give_the_network_the_same_inputs(variant: str, n: int) -> None:
    """The canonical frame: a mid-game position turned to another seat (star 2 seats: the position
    mirrored through the centre, seat 1 to move) gives the acting seat the same planes and legal actions,
    so the network the same logits and value."""
    torch.manual_seed(15)
    enc = encoding(variant, n)
    net = HalmaNet(variant, n, channels=8, blocks=1, pair_dim=8, value_hidden=8)
    games = _positions(variant, n, 4, seed=3)
    for game in games:
        others = [_turned(game, k) for k in range(1, n)]
        obs = torch.from_numpy(np.stack([enc.observation(g, g.to_move) for g in [game, *others]]))
        mask = torch.from_numpy(np.stack([enc.action_mask(g) for g in [game, *others]]).astype(bool))
        for i in range(1, n):
            assert torch.equal(obs[i], obs[0]) and torch.equal(mask[i], mask[0])
        assert not np.array_equal(enc.observation(others[0], game.to_move), enc.observation(game, game.to_move))
        with torch.no_grad():
            dense, value = net.dense_logits(obs, mask)
        assert torch.allclose(dense, dense[:1].expand_as(dense)) and torch.allclose(value, value[:1].expand_as(value))


def test_outputs_are_repeatable_and_do_not_depend_on_the_batch_order() -> None:
    """The same weights and inputs give bit-identical outputs call after call; a position's outputs do not
    depend on the other positions of its batch beyond float rounding (the shipped networks: at most
    7.3e-7 on logits of order 10)."""
    torch.manual_seed(16)
    net = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8)
    _, obs, mask = _batch("star", 2, CHUNK_POSITIONS + 4)
    legal, valid = legal_lists(mask)
    order = torch.randperm(len(obs))
    with torch.no_grad():
        first, again = net(obs, legal, valid), net(obs, legal, valid)
        shuffled = net(obs[order], legal[order], valid[order])
    assert torch.equal(first[0], again[0]) and torch.equal(first[1], again[1])
    assert torch.allclose(shuffled[0], first[0][order], atol=1e-5) and torch.allclose(shuffled[1], first[1][order],
                                                                                       atol=1e-5)


@pytest.mark.parametrize("variant", ["star", "halma16"])
def test_convolutions_reach_blocks_holes_away(variant: str) -> None:
    """Without attention, a change at one hole moves the move-head features of exactly the holes within
    ``blocks`` steps (hex steps on the star, king steps on the square board)."""
    enc = encoding(variant, 2)
    geometry = enc.layout.geometry
    _, obs, _ = _batch(variant, 2, 2)
    centre = 60 if variant == "star" else 119
    here = int(enc.from_canonical[0][centre])
    distance = np.array([geometry.distance(int(enc.from_canonical[0][y]), here) for y in range(enc.num_holes)])
    for blocks in (1, 2, 3):
        torch.manual_seed(blocks)
        net = HalmaNet(variant, 2, channels=8, blocks=blocks, pair_dim=8, value_hidden=8)
        x = net.holes(obs)
        changed = x.clone()
        changed[:, centre, 0] += 0.5
        with torch.no_grad():
            a, b = torch.cat(net.trunk(x)[:2], -1), torch.cat(net.trunk(changed)[:2], -1)
        moved = (a - b).abs().amax(-1) > 0
        for row in moved:
            assert set(np.flatnonzero(row.numpy())) == set(np.flatnonzero(distance <= blocks))


def test_export_ops_give_the_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain-op branches taken while exporting (convolution, attention, reach planes, list head) give
    the values of the fast ones."""
    torch.manual_seed(17)
    net = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8, attention_layers=1,
                   reach_features=True)
    with torch.no_grad():
        net.attention[0].out.weight.normal_(0, 0.5)
    _, obs, mask = _batch("star", 2, 6)
    legal, valid = legal_lists(mask)
    with torch.no_grad():
        fast = net(obs, legal, valid), net.dense_logits(obs, mask)
        monkeypatch.setattr(torch.onnx, "is_in_onnx_export", lambda: True)
        plain = net(obs, legal, valid), net.dense_logits(obs, mask)
    for a, b in zip(fast, plain, strict=True):
        for x, y in zip(a, b, strict=True):
            assert torch.allclose(x, y, atol=1e-5, rtol=1e-5), (x - y).abs().max()


# each shipped config's parameter count (docs/training.md, "Network", "Sizes")
CONFIG_PARAMETERS = {"quickstart": 7_474, "star2": 39_714, "star3": 7_474, "star4": 7_474, "star6": 7_474,
                     "diamond2": 7_474, "diamond3": 39_714, "halma16_2": 10_658}


@pytest.mark.parametrize("name", sorted(CONFIG_PARAMETERS))
def test_config_parameter_counts(name: str) -> None:
    """The parameter counts docs/training.md ("Network", "Sizes") gives, and their closed form."""
    from pathlib import Path

    import yaml

    from agents.network import build_network
    from halma_env.encoding import PLANES

    cfg = yaml.safe_load((Path(__file__).resolve().parents[1] / "configs" / f"{name}.yaml").read_text())
    game, network = cfg["game"], cfg["network"]
    net = build_network(game["variant"], game["num_players"], type("Cfg", (), network))
    c, p, v, blocks = network["channels"], network["pair_dim"], network["value_hidden"], network["blocks"]
    h, taps = neighbour_table(game["variant"], game["num_players"]).shape
    assert not network["attention_layers"] and not network["reach_features"] and network["position_embedding"]
    closed = (h * c + (PLANES + 1) * c + blocks * (taps * c * c + c + 2 * c)  # position, embed, blocks
              + 2 * (c * p + p) + (c + 1) + (2 * c * v + v) + (v + 1))  # move head, value head
    assert sum(q.numel() for q in net.parameters()) == closed == CONFIG_PARAMETERS[name]


def test_layer_init_is_cleanrls_orthogonal_init() -> None:
    """Orthogonal weights scaled by ``std`` (sqrt(2) by default) and a constant bias, as CleanRL's layer_init."""
    import math

    from agents.network import layer_init

    torch.manual_seed(0)
    default = layer_init(torch.nn.Linear(24, 8))
    torch.testing.assert_close(default.weight @ default.weight.T, 2.0 * torch.eye(8), atol=1e-5, rtol=0)
    assert torch.equal(default.bias, torch.zeros(8))
    small = layer_init(torch.nn.Linear(24, 8), std=0.01, bias=0.5)
    torch.testing.assert_close(small.weight @ small.weight.T, 1e-4 * torch.eye(8), atol=1e-9, rtol=0)
    assert torch.equal(small.bias, torch.full((8,), 0.5))
    assert math.isclose(layer_init.__defaults__[0], math.sqrt(2))


@pytest.mark.parametrize("heads", [1, 2, 4])
def test_hole_attention_is_standard_multi_head_self_attention(heads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``x + W_o attn(LN(x))``: the same numbers as torch's own nn.MultiheadAttention given the same
    weights (q, k, v stacked in that order, the heads side by side), in training and in the exporter's
    written-out path."""
    from agents.network import HoleAttention

    torch.manual_seed(heads)
    block = HoleAttention(channels=16, heads=heads)
    with torch.no_grad():
        for p in block.parameters():  # the output projection starts at zero (the identity): perturb it all
            p.add_(torch.randn_like(p) * 0.3)
    reference = torch.nn.MultiheadAttention(16, heads, batch_first=True)
    with torch.no_grad():
        reference.in_proj_weight.copy_(block.qkv.weight)
        reference.in_proj_bias.copy_(block.qkv.bias)
        reference.out_proj.weight.copy_(block.out.weight)
        reference.out_proj.bias.copy_(block.out.bias)
    x = torch.randn(3, 121, 16)
    normed = block.norm(x)
    expected = x + reference(normed, normed, normed, need_weights=False)[0]
    with torch.no_grad():
        torch.testing.assert_close(block(x), expected, atol=1e-5, rtol=1e-4)
        assert (block(x) - x).abs().max() > 0.1  # the attention term is really there
        monkeypatch.setattr(torch.onnx, "is_in_onnx_export", lambda: True)
        torch.testing.assert_close(block(x), expected, atol=1e-5, rtol=1e-4)


# --- mutation round (session 36): large batches, the convolution's buffers, the reach tables ---


def test_gather_rows_offset_each_position_by_its_padded_block() -> None:
    """Position b reads the table plus ``b * (H + 1)``, also for batches past H / 2 and past H (a
    rollout over many environments), where a wrong length of the offsets would show."""
    for variant in ("star", "halma16"):
        table = torch.as_tensor(neighbour_table(variant, 2)).reshape(-1)
        h = encoding(variant, 2).num_holes
        for batch in (1, 2, h // 2 + 3, h, h + 1, 2 * h + 5):
            expected = torch.cat([table + b * (h + 1) for b in range(batch)])
            assert torch.equal(gather_rows(table, batch, h), expected), (variant, batch)


def test_jump_reach_of_a_batch_past_the_board_size_is_each_positions_own() -> None:
    """``JumpReach`` offsets each position's rows like ``gather_rows``: a batch of more positions than
    holes gives every position the features it has alone."""
    enc = encoding("star", 2)
    games = _positions("star", 2, enc.num_holes + 9, seed=5)
    obs = torch.from_numpy(np.stack([enc.observation(g, g.to_move) for g in games]))
    reach = JumpReach("star", 2)
    holes = HalmaNet("star", 2, channels=4, blocks=0, pair_dim=4, value_hidden=4).holes(obs)
    together = reach(holes)
    alone = torch.cat([reach(holes[i:i + 1]) for i in range(len(games))])
    assert together[:, :, 4].sum() > 0 and torch.equal(together, alone)


def test_the_chunked_convolution_fills_its_buffers_without_warnings() -> None:
    """Forward and backward over full chunks and a partial last one write each chunk into a buffer slice
    of the right size: torch warns (an error here) when an ``out=`` tensor has to be resized."""
    import warnings

    torch.manual_seed(18)
    net = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8)
    _, obs, mask = _batch("star", 2, 2 * CHUNK_POSITIONS + 3)
    legal, valid = legal_lists(mask)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        logits, value = net(obs, legal, valid)
        (torch.log_softmax(logits, -1)[valid].sum() + value.sum()).backward()
    assert all(p.grad is not None for p in net.blocks.parameters())


@pytest.mark.parametrize("variant", ["star", "halma16"])
def test_reach_tables_are_the_boards_steps_jumps_and_goal_distances(variant: str) -> None:
    """``reach_tables``: for each hole and board direction (no self tap), the hole one step away and the
    one beyond it (a jump's landing); the single steps to the nearest hole of the actor's goal and of
    the opponent's, the same in both seats' frames (from the layout's goals, not ``goal_distance``)."""
    over, land, own, other = reach_tables(variant, 2)
    enc = encoding(variant, 2)
    lay, g = enc.layout, enc.layout.geometry
    h = g.num_holes
    assert over.shape == land.shape == (h, g.num_directions)
    for x in range(h):
        assert set(over[x]) - {h} == set(g.neighbours[x]) and len(set(over[x]) - {h}) == (over[x] < h).sum()
        for d in range(g.num_directions):
            y, z = int(over[x, d]), int(land[x, d])
            assert z == (h if y == h else int(over[y, d]))
            if z < h:
                assert (g.distance(x, y), g.distance(y, z), g.distance(x, z)) == (1, 1, 2)
    for seat in (0, 1):
        frame = enc.from_canonical[seat]
        for x in range(h):
            assert own[x] == min(g.distance(int(frame[x]), t) for t in lay.goals[seat])
            assert other[x] == min(g.distance(int(frame[x]), t) for t in lay.goals[1 - seat])
    assert (own == 0).sum() == len(lay.goals[0]) and not np.array_equal(own, other)


def test_padding_may_hold_any_action_also_in_the_export_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    """A padded list's invalid entries are never scored, whatever they hold (-1 here, as an empty slot
    is often marked): the exporter's written-out list head gives the fast path's logits."""
    torch.manual_seed(19)
    net = HalmaNet("star", 2, channels=8, blocks=1, pair_dim=8, value_hidden=8)
    _, obs, mask = _batch("star", 2, 4)
    legal, valid = legal_lists(mask)
    marked = torch.cat([legal.masked_fill(~valid, -1), torch.full((4, 3), -1)], dim=1)
    padded = torch.cat([valid, torch.zeros(4, 3, dtype=torch.bool)], dim=1)
    with torch.no_grad():
        fast, fast_value = net(obs, marked, padded)
        monkeypatch.setattr(torch.onnx, "is_in_onnx_export", lambda: True)
        plain, plain_value = net(obs, marked, padded)
    assert torch.all(fast[~padded] == MASKED_LOGIT) and torch.equal(plain[~padded], fast[~padded])
    assert torch.allclose(plain, fast, atol=1e-5) and torch.allclose(plain_value, fast_value)


def test_extending_a_reach_network_refuses_weights_of_another_width() -> None:
    """A reach network takes a narrower input layer only from a network of its own channel count."""
    other = HalmaNet("star", 2, channels=16, blocks=2, pair_dim=8, value_hidden=8)
    wide = HalmaNet("star", 2, channels=8, blocks=2, pair_dim=8, value_hidden=8, reach_features=True)
    with pytest.raises(ValueError, match=r"less some attention layers or the reach features: embed.weight "
                                         r"\(16, 12\) vs \(8, 18\)$"):
        load_extending(wide, other.state_dict())


def test_building_a_network_warns_nothing() -> None:
    """The encoding's shared tables are read-only: torch.as_tensor of one warned ('not writable') at every
    network built (every bench and training run printed it)."""
    import warnings

    from agents.config import NetworkConfig
    from agents.network import build_network

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build_network("star", 2, NetworkConfig())
