"""The policy/value network: convolutions over the holes and a bilinear (src, dst) move head.

- Input: the observation planes of ``halma_env.encoding`` (rows, cols, 12), read at each
  canonical hole's grid cell (``encoding.grid_index``), so the trunk works on the H holes
  (star/diamond 121, halma16 256) in the acting seat's frame.
- Trunk: residual *hole convolutions*.  A hole's new features are a linear map of the
  concatenated features of itself and its neighbours in a fixed direction order (the 6 hex
  directions on the star, the 8 king directions on the square board; missing neighbours read
  zeros).  On the star this is a hexagonal 7-tap convolution: exactly the 3 x 3 convolution on
  the 17 x 17 axial grid with its two non-hex corners masked, computed on the holes only.
- Optional global attention (``attention_layers``): after the convolutions, pre-norm residual
  self-attention over the holes, ``x + W_o attn(LN(x))``, so every hole reads the whole board in
  one layer (jump chains cross it; the convolutions see ``blocks`` holes away).  ``W_o`` starts at
  zero: a new layer is the identity, so it can be added to trained weights (``load_extending``).
- Optional jump-reach planes (``reach_features``, 2 seats): six per-hole features of the jump chains
  both sides have in the position (``JumpReach``), computed from the planes and added to the input.
- Move head: ``logit(src, dst) = <W_s e_src, W_d e_dst> / sqrt(k) + b(e_dst)`` from the trunk's
  per-hole embeddings: no dense H*H-way layer.  Action ``a = src * H + dst`` in canonical holes.
- Value head: mean and max over the holes, then an MLP to one number.

Two ways to score moves: ``forward`` takes the legal actions of each position as a padded
(B, M) list (fast: only legal pairs are scored) and ``dense_logits`` scores all H*H actions
(illegal ones masked to a large negative) for tests, export and analysis.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.function import once_differentiable

from halma_env.batched import padded_lists
from halma_env.encoding import PLANES, encoding

MASKED_LOGIT = -1e8  # CleanRL's CategoricalMasked value: exp() underflows to exactly 0


class Diverged(RuntimeError):
    """A training step's gradients turned NaN or infinite (a NaN or infinite loss): raised before the optimizer
    takes them, so the weights are those of the last finite step and no checkpoint holds the bad ones.
    ``where``: which step ("update 12", "imitation epoch 3"); ``setting``: the config key to lower."""

    def __init__(self, where: str, setting: str) -> None:
        super().__init__(f"the training diverged: {where}'s gradients are not finite (NaN or infinite), so it "
                         f"stopped before they reached the weights; a smaller {setting} or ppo.max_grad_norm may "
                         "keep the next attempt finite")
        self.where, self.setting = where, setting


def clip_gradients(net: nn.Module, max_norm: float, where: str, setting: str) -> None:
    """``clip_grad_norm_`` over ``net``'s gradients, raising ``Diverged`` when their norm is not finite (the
    optimizer step that follows would write NaN into every weight)."""
    norm = nn.utils.clip_grad_norm_(net.parameters(), max_norm)
    if not bool(torch.isfinite(norm)):
        raise Diverged(where, setting)


def layer_init(layer: nn.Linear, std: float = math.sqrt(2), bias: float = 0.0) -> nn.Linear:
    """Orthogonal weights, constant bias (CleanRL's layer_init)."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


def neighbour_table(variant: str, num_players: int) -> np.ndarray:
    """(H, 1 + D) int64: each hole itself, then its neighbour in each direction (H = none)."""
    enc = encoding(variant, num_players)
    g = enc.layout.geometry
    h = g.num_holes
    table = np.full((h, 1 + g.num_directions), h, dtype=np.int64)
    for hole in range(h):
        table[hole, 0] = hole
        for d, shift in enumerate(g.shifts):
            other = g.hole_of_bit[g.bit[hole] + shift]
            if other >= 0:
                table[hole, 1 + d] = other
    return table


def reverse_table(table: np.ndarray) -> np.ndarray:
    """(H, 1 + D): for each hole and tap, the hole that reads it through that tap (H = none).

    The tap-d neighbour map is one-to-one (a shift on the grid), so each hole is read through tap d
    by at most one hole: the backward of the convolution is a convolution over this table."""
    h, taps = table.shape
    reverse = np.full((h, taps), h, dtype=np.int64)
    readers, tap = np.nonzero(table < h)
    reverse[table[readers, tap], tap] = readers
    return reverse


# positions per chunk of the hole convolution: the chunk's gathered (16 * H, taps * C) block (about 0.9 MB for
# the default star network) stays in the core's L2 cache between the gather and the matmul that reads it
CHUNK_POSITIONS = 16
ROWS_CACHE_SIZE = 8  # batch sizes whose gather rows a network keeps (HalmaNet._gather_rows)


def gather_rows(index: torch.Tensor, batch: int, num_holes: int) -> torch.Tensor:
    """(B * H * taps,) rows of the zero-padded (B * (H + 1), C) features that ``index`` reads.

    ``index`` is a flattened (H, taps) neighbour table (value H = no neighbour); position b's rows
    start at ``b * (H + 1)`` and its row H is zeros, so a missing neighbour reads zeros."""
    offsets = torch.arange(0, batch * (num_holes + 1), num_holes + 1, device=index.device)
    return (index + offsets.unsqueeze(1)).reshape(-1)


def _pad(x: torch.Tensor) -> torch.Tensor:
    """(B, H, C) -> (B * (H + 1), C): each position's holes, then a zero row."""
    b, _, c = x.shape
    return torch.cat([x, x.new_zeros(b, 1, c)], dim=1).view(-1, c)


def _gather_taps(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """(B, H, C) -> (B * H, taps * C): each hole's features and its neighbours' (``gather_rows``)."""
    b, h, _ = x.shape
    return torch.index_select(_pad(x), 0, rows).view(b * h, -1)


class _HoleConvFunction(torch.autograd.Function):
    """``relu(gather(x) @ W.T + b)``, computed chunk by chunk, with a hand-written backward.

    A whole-batch gather writes a (B * H, taps * C) tensor (27 MB for 512 default-network positions)
    that the matmul then reads back from memory; chunks of ``CHUNK_POSITIONS`` positions keep it in
    cache.  The ReLU runs on each chunk's rows while they are in cache.  The backward is the
    transposed convolution: one gather of the (masked) output gradient over the reverse table per
    chunk gives both the input gradient (one matmul, no scatter) and the weight gradient (against the
    input rows as they are, so the input is not gathered again).  The same values up to float
    rounding (tests/test_network.py compares with autograd); docs/training.md, "Speed", has the timings.
    """

    @staticmethod
    def forward(ctx, x, weight, bias, rows, reverse_rows):
        b, h, c = x.shape
        padded = _pad(x)
        taps = rows.numel() // (b * h)
        out = x.new_empty(b * h, weight.shape[0])
        buffer = x.new_empty(min(b, CHUNK_POSITIONS) * h * taps, c)
        for start in range(0, b, CHUNK_POSITIONS):
            stop = min(start + CHUNK_POSITIONS, b)
            gathered = buffer[:(stop - start) * h * taps]
            torch.index_select(padded, 0, rows[start * h * taps:stop * h * taps], out=gathered)
            chunk = out[start * h:stop * h]
            torch.addmm(bias, gathered.view(-1, taps * c), weight.t(), out=chunk)
            chunk.relu_()
        ctx.save_for_backward(x, weight, reverse_rows, out)
        ctx.taps = taps
        return out.view(b, h, -1)

    @staticmethod
    @once_differentiable  # a hand-written first derivative: a second one would be silently wrong
    def backward(ctx, grad):
        x, weight, reverse_rows, out = ctx.saved_tensors
        b, h, c = x.shape
        taps, out_channels = ctx.taps, grad.shape[-1]
        # the gradient before the ReLU, written straight into the padded (B, H + 1, out) layout
        # (threshold_backward's out= form: a multiply by the mask into the strided view is 8x slower)
        by_position = grad.new_empty(b, h + 1, out_channels)
        by_position[:, h] = 0
        torch.ops.aten.threshold_backward.grad_input(grad, out.view(b, h, out_channels), 0,
                                                     grad_input=by_position[:, :h])
        padded_grad = by_position.view(-1, out_channels)
        # tap d of the weight, (out, C), stacked by tap: (taps * out, C)
        stacked = weight.view(out_channels, taps, c).transpose(0, 1).reshape(taps * out_channels, c)
        grad_x = grad.new_empty(b * h, c)
        # hole j's row of the reverse gather holds, for each tap d, the gradient of the hole that reads j
        # through d: so it gives both the input gradient (times the stacked taps) and, against x_j, tap
        # d's weight gradient, without gathering the input again
        grad_stacked = grad.new_zeros(taps * out_channels, c)
        x_rows = x.reshape(b * h, c)
        grad_buffer = grad.new_empty(min(b, CHUNK_POSITIONS) * h * taps, out_channels)
        for start in range(0, b, CHUNK_POSITIONS):
            stop = min(start + CHUNK_POSITIONS, b)
            n, lo, hi = (stop - start) * h, start * h * taps, stop * h * taps
            gathered_grad = grad_buffer[:n * taps].view(n, taps * out_channels)
            torch.index_select(padded_grad, 0, reverse_rows[lo:hi], out=grad_buffer[:n * taps])
            torch.mm(gathered_grad, stacked, out=grad_x[start * h:stop * h])
            grad_stacked.addmm_(gathered_grad.t(), x_rows[start * h:stop * h])
        grad_weight = grad_stacked.view(taps, out_channels, c).transpose(0, 1).reshape(out_channels, taps * c)
        return grad_x.view(b, h, c), grad_weight, padded_grad.sum(0), None, None


def _pair_logits(src_features: torch.Tensor, dst_features: torch.Tensor) -> torch.Tensor:
    """(N,) move logits ``<W_s e_src, W_d e_dst> / sqrt(k) + b(e_dst)`` from the source hole's (N, k)
    and the destination hole's (N, k + 1) head rows."""
    return (src_features * dst_features[:, :-1]).sum(-1) + dst_features[:, -1]


class _PairLogitsFunction(torch.autograd.Function):
    """``_pair_logits`` of rows gathered from the (B * H, k) source and (B * H, k + 1) destination
    tables, hand-differentiated.

    Autograd's backward of the product and of the destination rows' two column slices builds
    zero-padded copies of the (N, k + 1) rows and adds them; this one computes each side's row
    gradients at once (one ``cat``) and ``index_add_``s them into its table (the whole loop, one
    thread, alternating runs: 2,895-3,079 steps/s with it, 2,811-2,919 with autograd's;
    docs/training.md, "Speed")."""

    @staticmethod
    def forward(ctx, src_table, dst_table, src_rows, dst_rows):
        src_features, dst_features = src_table.index_select(0, src_rows), dst_table.index_select(0, dst_rows)
        ctx.save_for_backward(src_features, dst_features, src_rows, dst_rows)
        ctx.num_rows = src_table.shape[0]
        return _pair_logits(src_features, dst_features)

    @staticmethod
    @once_differentiable  # a hand-written first derivative: a second one would be silently wrong
    def backward(ctx, grad):
        src_features, dst_features, src_rows, dst_rows = ctx.saved_tensors
        g = grad.unsqueeze(1)
        grad_src = grad.new_zeros(ctx.num_rows, src_features.shape[1])
        grad_src.index_add_(0, src_rows, dst_features[:, :-1] * g)
        grad_dst = grad.new_zeros(ctx.num_rows, dst_features.shape[1])
        grad_dst.index_add_(0, dst_rows, torch.cat([src_features * g, g], dim=1))
        return grad_src, grad_dst, None, None


class HoleConv(nn.Module):
    """One residual convolution over the holes: LayerNorm(x + relu(W [x_self, x_dir1, ..., x_dirD]))."""

    def __init__(self, channels: int, taps: int) -> None:
        super().__init__()
        self.linear = layer_init(nn.Linear(channels * taps, channels))
        self.norm = nn.LayerNorm(channels)

    def forward(self, x: torch.Tensor, rows: torch.Tensor, reverse_rows: torch.Tensor) -> torch.Tensor:
        """``rows`` and ``reverse_rows``: ``gather_rows`` of the neighbour table and of its ``reverse_table``."""
        if torch.onnx.is_in_onnx_export():  # the same values with plain ops an exporter knows
            b, h, _ = x.shape
            conv = torch.relu(self.linear(_gather_taps(x, rows))).view(b, h, -1)
        else:
            conv = _HoleConvFunction.apply(x, self.linear.weight, self.linear.bias, rows, reverse_rows)
        return self.norm(x + conv)


class HoleAttention(nn.Module):
    """Pre-norm residual multi-head self-attention over the holes: ``x + W_o attn(LN(x))``."""

    def __init__(self, channels: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm = nn.LayerNorm(channels)
        self.qkv = layer_init(nn.Linear(channels, 3 * channels), std=1.0)
        self.out = nn.Linear(channels, channels)
        nn.init.zeros_(self.out.weight)  # the identity until trained (see the module docstring)
        nn.init.zeros_(self.out.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, h, c = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, h, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        if torch.onnx.is_in_onnx_export():  # the same values with plain ops an exporter knows
            weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(c // self.heads), dim=-1)
            mixed = weights @ v
        else:
            mixed = F.scaled_dot_product_attention(q, k, v)
        return x + self.out(mixed.transpose(1, 2).reshape(b, h, c))


ATTENTION_HEADS = 4

# reach_features: the propagation rounds (a component of the jump graph wider than this many jumps is
# read only this far: the features are defined by the fixed count, the same in training and export) and the
# planes added to the input, with the scale of the gains (single steps toward the goal, 16 across the star)
REACH_ROUNDS = 12
REACH_PLANES = 6
REACH_GAIN_SCALE = 1.0 / 8.0
_NO_CHAIN = -100  # int8 "no such chain" in the max-propagation (every real value is >= -16)


def reach_tables(variant: str, num_players: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Tables of the canonical frame for ``JumpReach``: (over, land, own_distance, other_distance).

    ``over[h, d]`` / ``land[h, d]``: the hole one / two steps from ``h`` in direction ``d`` (H = off the
    board); ``own_distance[h]`` / ``other_distance[h]``: single steps from ``h`` to the nearest hole of the
    actor's / the opponent's goal.  Only for 2-seat games whose two seats see the same frame (star and
    halma16: the opponent's goal is the actor's home), so the tables do not depend on the actor's seat.
    """
    from halma_env.rewards import goal_distance

    if num_players != 2:
        raise ValueError(f"network.reach_features is for 2-seat games (one opponent whose progress the features "
                         f"measure), not {num_players} seats")
    enc = encoding(variant, num_players)
    frames = [(np.array(goal_distance(variant, 2, s))[enc.from_canonical[s]],
               np.array(goal_distance(variant, 2, 1 - s))[enc.from_canonical[s]]) for s in (0, 1)]
    if not all(np.array_equal(a, b) for a, b in zip(frames[0], frames[1])):
        raise ValueError(f"network.reach_features needs a 2-seat game whose seats mirror each other (star, "
                         f"halma16); in {variant} the opponent's goal is not the same for both seats' frames")
    over = neighbour_table(variant, num_players)[:, 1:]
    h = enc.num_holes
    land = np.full_like(over, h)
    for d in range(over.shape[1]):
        on = over[:, d] < h
        land[on, d] = over[over[on, d], d]
    return over, land, frames[0][0], frames[0][1]


class JumpReach(nn.Module):
    """Per-hole jump-chain features computed from the observation planes (no parameters, no gradient).

    A move is a step or a chain of jumps; with every other piece standing still, the holes a chain can
    pass through are the components of the *jump graph*: empty holes linked when one jump (over an
    occupied hole) joins them.  The convolutions see ``blocks`` holes away and chains cross the board,
    so the trunk gets, per hole (gains in single steps toward the side's goal, times ``REACH_GAIN_SCALE``):

    0. a piece of the actor: the best gain of a jump chain from it;
    1. a piece of the opponent: the same toward its goal;
    2. an empty hole: the largest gain with which a chain of an actor's piece can end there;
    3. an empty hole: the same for the opponent;
    4. / 5. an empty hole that a chain of an actor's / an opponent's piece reaches (1 or 0).

    Static approximations, the same for training, play and export: the moving piece's own hole counts as
    occupied, diamond's closed camps are ignored, and components are followed ``REACH_ROUNDS`` jumps wide.
    Computed in int8, direction-major, each round one gather of 4-byte rows (the four int8 values of a hole
    read as one int32) (``tests/test_network.py`` checks the features against a per-piece search and the
    engine's moves; ONNX export takes the same values through plain ops).
    """

    # buffers (registered in __init__; declared here for the type checker)
    over: torch.Tensor
    land: torch.Tensor
    distance: torch.Tensor
    land_distance: torch.Tensor

    def __init__(self, variant: str, num_players: int) -> None:
        super().__init__()
        over, land, own, other = reach_tables(variant, num_players)
        self.num_holes, self.directions = over.shape
        # direction-major (D, H) tables; the distances at each jump's landing hole (0 off the board: masked)
        self.register_buffer("over", torch.as_tensor(over.T.copy()), persistent=False)
        self.register_buffer("land", torch.as_tensor(land.T.copy()), persistent=False)
        dist = np.stack([own, other]).astype(np.int8)  # (2, H)
        padded = np.concatenate([dist, np.zeros((2, 1), np.int8)], axis=1)
        self.register_buffer("distance", torch.as_tensor(dist), persistent=False)
        self.register_buffer("land_distance", torch.as_tensor(padded[:, land.T]), persistent=False)  # (2, D, H)

    def _rows(self, table: torch.Tensor, batch: int) -> torch.Tensor:
        """(D, H) hole table -> (D, B, H) rows of the flat padded (B * (H + 1)) arrays."""
        h = self.num_holes
        offsets = torch.arange(0, batch * (h + 1), h + 1, device=table.device).view(1, -1, 1)
        return table.unsqueeze(1) + offsets

    @torch.no_grad()
    def forward(self, holes: torch.Tensor) -> torch.Tensor:
        """(B, H, 12) float observation planes per hole -> (B, H, ``REACH_PLANES``) float features."""
        b, h = holes.shape[0], self.num_holes
        exporting = torch.onnx.is_in_onnx_export()
        # exported in int32: onnxruntime before 1.31 has no int8 Where or Max kernels (the same values)
        small = torch.int32 if exporting else torch.int8
        none = torch.tensor(_NO_CHAIN, dtype=small, device=holes.device)
        distance, land_distance = self.distance.to(small), self.land_distance.to(small)
        sides = holes[..., :2] > 0  # (B, H, 2): actor, opponent
        occupied = sides.any(-1)
        empty = ~occupied

        over_rows, land_rows = self._rows(self.over, b), self._rows(self.land, b)  # (D, B, H)

        def at(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:  # (B, H) values read at (D, B, H) rows
            flat = _pad(x.unsqueeze(-1)).view(-1)  # False / 0 off the board
            return torch.index_select(flat, 0, rows.reshape(-1)).view(rows.shape)

        over_occupied = at(occupied, over_rows)
        jump = over_occupied & at(empty, land_rows)  # from the hole, over a piece, onto an empty hole
        link = jump & empty  # an edge of the jump graph between two empty holes
        # per empty hole: the goal distances of the side pieces one jump away ("starts", max over them)
        starting = over_occupied & empty
        starts = [torch.where(starting & at(sides[..., k], land_rows), land_distance[k].unsqueeze(1),
                              none).amax(dim=0) for k in (0, 1)]
        # values maxed over each component: -distance (its nearest hole to each goal) and the starts
        values = torch.stack([-distance[0].expand(b, h), -distance[1].expand(b, h), *starts], dim=-1)
        values = torch.where(empty.unsqueeze(-1), values, none)
        flat = torch.cat([values, none.expand(b, 1, 4)], dim=1).reshape(-1, 4)
        inner = values.reshape(-1, 4)
        pad_rows = self._rows(torch.full_like(self.land[:, :1], h), b)  # (D, B, 1): each position's pad row
        rows = torch.where(link, land_rows, pad_rows).reshape(-1)  # not a link: the pad row
        for _ in range(REACH_ROUNDS):
            if exporting:  # plain ops: gather the rows (ONNX has no bitcast)
                linked = torch.index_select(flat, 0, rows)
            else:  # a hole's four int8 values as one int32: one gather of 4-byte rows per round
                linked = torch.index_select(flat.view(torch.int32).view(-1), 0, rows).view(torch.int8)
            inner = torch.maximum(inner, linked.view(self.directions, -1, 4).amax(dim=0))
            flat = torch.cat([inner.view(b, h, 4), none.expand(b, 1, 4)], dim=1).reshape(-1, 4)
        values = flat.view(b, h + 1, 4)[:, :h].float()
        dist = self.distance.t().float()  # (H, 2)
        reached = values[..., 2:] > _NO_CHAIN
        arrive = torch.where(reached, torch.relu(values[..., 2:] - dist), torch.zeros_like(dist))
        # from a piece: its first jump lands on an empty hole, then that component's nearest hole to its goal
        landing = torch.index_select(flat[:, :2], 0, torch.where(jump, land_rows, pad_rows).reshape(-1))
        first = landing.view(self.directions, b * h, 2).amax(dim=0).view(b, h, 2).float()
        depart = torch.where(first > _NO_CHAIN, torch.relu(dist + first), torch.zeros_like(dist)) * sides
        keep = empty.unsqueeze(-1)
        return torch.cat([depart * REACH_GAIN_SCALE, arrive * REACH_GAIN_SCALE * keep, reached.float() * keep], -1)


class HalmaNet(nn.Module):
    """Shared policy/value network for every seat of one (variant, seat count)."""

    # buffers (registered in __init__; declared here for the type checker)
    table: torch.Tensor
    reverse: torch.Tensor
    grid_index: torch.Tensor

    # the defaults are NetworkConfig's (agents/config.py; a test keeps the two equal)
    def __init__(self, variant: str, num_players: int, channels: int = 16, blocks: int = 2, pair_dim: int = 16,
                 value_hidden: int = 32, position_embedding: bool = True, attention_layers: int = 0,
                 reach_features: bool = False) -> None:
        super().__init__()
        enc = encoding(variant, num_players)
        self.variant, self.num_players = variant, num_players
        self.num_holes = enc.num_holes
        self.num_actions = enc.num_actions
        self.pair_dim = pair_dim
        table = neighbour_table(variant, num_players)
        self.register_buffer("table", torch.as_tensor(table).reshape(-1), persistent=False)
        self.register_buffer("reverse", torch.as_tensor(reverse_table(table)).reshape(-1), persistent=False)
        self.register_buffer("grid_index", torch.tensor(enc.grid_index), persistent=False)
        self._rows_cache: dict[tuple[int, torch.device], tuple[torch.Tensor, torch.Tensor]] = {}
        self.reach = JumpReach(variant, num_players) if reach_features else None
        self.embed = layer_init(nn.Linear(PLANES + (REACH_PLANES if reach_features else 0), channels))
        self.position = nn.Parameter(torch.zeros(self.num_holes, channels)) if position_embedding else None
        self.blocks = nn.ModuleList(HoleConv(channels, table.shape[1]) for _ in range(blocks))
        self.attention = nn.ModuleList(HoleAttention(channels, ATTENTION_HEADS) for _ in range(attention_layers))
        # small initial policy logits (CleanRL: std 0.01 on the actor's last layer)
        self.src_head = layer_init(nn.Linear(channels, pair_dim), std=0.1)
        self.dst_head = layer_init(nn.Linear(channels, pair_dim), std=0.1)
        self.dst_bias = layer_init(nn.Linear(channels, 1), std=0.01)
        self.value_head = nn.Sequential(
            layer_init(nn.Linear(2 * channels, value_hidden)), nn.ReLU(),
            layer_init(nn.Linear(value_hidden, 1), std=1.0),
        )

    # --- trunk --------------------------------------------------------------------------

    def holes(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, rows, cols, 12) observation planes -> (B, H, 12) float features per canonical hole."""
        b = obs.shape[0]
        if obs.dim() == 4:
            obs = torch.index_select(obs.reshape(b, -1, obs.shape[-1]), 1, self.grid_index)
        return obs.float()

    def _gather_rows(self, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``gather_rows`` of the neighbour and reverse tables for ``batch`` positions, kept for the few
        batch sizes a run uses (rollout, minibatch, last minibatch): building them cost about 2% of
        the training loop.  Not kept while exporting, where the batch is a traced dimension."""
        if torch.onnx.is_in_onnx_export():
            return gather_rows(self.table, batch, self.num_holes), gather_rows(self.reverse, batch, self.num_holes)
        key = (batch, self.table.device)
        if key not in self._rows_cache:
            if len(self._rows_cache) >= ROWS_CACHE_SIZE:
                self._rows_cache.clear()
            self._rows_cache[key] = (gather_rows(self.table, batch, self.num_holes),
                                     gather_rows(self.reverse, batch, self.num_holes))
        return self._rows_cache[key]

    def trunk(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per-hole move-head features and the value (B,).

        The source features ``W_s e`` (B, H, pair_dim) and the destination features
        ``[W_d e / sqrt(pair_dim), b(e)]`` (B, H, pair_dim + 1) of each hole's embedding ``e``: two
        contiguous tables, so that the move head gathers whole rows of each (one table of both read
        each move's rows at twice the bytes, and its backward scattered into column slices).
        """
        features = self.holes(obs)
        if self.reach is not None:
            features = torch.cat([features, self.reach(features)], dim=-1)
        x = self.embed(features)
        if self.position is not None:
            x = x + self.position
        x = torch.relu(x)
        b, h, _ = x.shape
        rows, reverse_rows = self._gather_rows(b)
        for block in self.blocks:
            x = block(x, rows, reverse_rows)
        for layer in self.attention:
            x = layer(x)
        src = self.src_head(x)
        scale = 1.0 / math.sqrt(self.pair_dim)
        dst = F.linear(x, torch.cat([self.dst_head.weight * scale, self.dst_bias.weight]),
                       torch.cat([self.dst_head.bias * scale, self.dst_bias.bias]))
        # max(dim).values, not amax: the same values, and its backward (a scatter to the argmax) costs
        # about half of amax's (which compares every element with the maximum)
        value = self.value_head(torch.cat([x.mean(dim=1), x.max(dim=1).values], dim=-1)).squeeze(-1)
        return src, dst, value

    # --- heads --------------------------------------------------------------------------

    def forward(self, obs: torch.Tensor, legal: torch.Tensor, valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits of the listed actions and the value.

        ``legal`` (B, M) int64 actions (src * H + dst), ``valid`` (B, M) bool marks the real
        entries of a padded list.  Padding gets ``MASKED_LOGIT`` (zero probability).
        """
        src, dst, value = self.trunk(obs)
        b, h, _ = src.shape
        # one row of each table per (position, hole): index_select of whole rows (its backward is a
        # row-wise index_add) costs about half of gathering (B, M, pair_dim) elements from (B, H, pair_dim)
        src_table, dst_table = src.reshape(b * h, -1), dst.reshape(b * h, -1)
        if torch.onnx.is_in_onnx_export():  # the same values with plain ops an exporter knows
            a = legal.clamp(min=0)
            base = torch.arange(b, device=legal.device).unsqueeze(1) * h
            src_rows, dst_rows = (a // h + base).reshape(-1), (a % h + base).reshape(-1)
            logits = _pair_logits(src_table.index_select(0, src_rows), dst_table.index_select(0, dst_rows))
            return logits.view(legal.shape).masked_fill(~valid, MASKED_LOGIT), value
        # only the real entries are scored: a padded list is about 40% padding in training minibatches
        entry = valid.reshape(-1).nonzero().squeeze(1)
        a = legal.reshape(-1).index_select(0, entry)
        base = torch.div(entry, legal.shape[1], rounding_mode="floor") * h
        logits = _PairLogitsFunction.apply(src_table, dst_table, a // h + base, a % h + base)
        return src.new_full(legal.shape, MASKED_LOGIT).masked_scatter(valid, logits), value

    def dense_logits(self, obs: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, H*H) logits of every action (illegal ones ``MASKED_LOGIT`` when ``mask`` is given)."""
        src, dst, value = self.trunk(obs)
        logits = (src @ dst[..., :-1].transpose(1, 2) + dst[..., -1].unsqueeze(1)).reshape(obs.shape[0], -1)
        if mask is not None:
            logits = logits.masked_fill(~mask.bool(), MASKED_LOGIT)
        return logits, value


def build_network(variant: str, num_players: int, cfg) -> HalmaNet:
    """A HalmaNet from a ``NetworkConfig`` (or any object with the same attributes)."""
    return HalmaNet(variant, num_players, channels=cfg.channels, blocks=cfg.blocks, pair_dim=cfg.pair_dim,
                    value_hidden=cfg.value_hidden, position_embedding=cfg.position_embedding,
                    attention_layers=cfg.attention_layers, reach_features=cfg.reach_features)


def load_extending(net: HalmaNet, state: dict[str, torch.Tensor]) -> list[str]:
    """Load into a freshly built ``net`` the weights of the same network with fewer attention layers
    and/or without ``reach_features``.

    The attention layers ``state`` lacks keep their initial identity (zero output projection) and the
    input weights of the reach planes start at zero, so ``net`` plays exactly as those weights until
    trained (to float rounding: the input layer's matmul over more inputs may round differently).
    Returns what was added (for the log), e.g. ``["1 attention layer(s)", "reach features"]``.
    """
    state = dict(state)
    added = []
    narrow = state.get("embed.weight")
    wide = net.embed.weight
    if narrow is not None and narrow.shape != wide.shape:
        if net.reach is None or narrow.shape != (wide.shape[0], PLANES):
            raise ValueError(f"the weights are not those of this network less some attention layers or the reach "
                             f"features: embed.weight {tuple(narrow.shape)} vs {tuple(wide.shape)}")
        state["embed.weight"] = torch.cat([narrow, narrow.new_zeros(wide.shape[0], REACH_PLANES)], dim=1)
        added.append("reach features")
    missing, unexpected = net.load_state_dict(state, strict=False)
    stray = [k for k in missing if not k.startswith("attention.")] + list(unexpected)
    if stray:
        raise ValueError(f"the weights are not those of this network less some attention layers or the reach "
                         f"features: {', '.join(stray)}")
    layers = len({k.split(".")[1] for k in missing})
    if layers:
        added.insert(0, f"{layers} attention layer(s)")
    return added


def legal_lists(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A dense (B, A) bool mask as padded action lists: (B, M) int64 actions and (B, M) validity.

    Rows with no legal action get one invalid entry; M is the largest legal count (at least 1).
    """
    return padded_lists(mask.bool())
