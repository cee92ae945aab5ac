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
  zero: a new layer is the identity, so it can be added to trained weights (``load_adding_attention``).
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

from halma_env.batched import padded_lists
from halma_env.encoding import PLANES, encoding

MASKED_LOGIT = -1e8  # CleanRL's CategoricalMasked value: exp() underflows to exactly 0


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
    """``gather(x) @ W.T + b``, computed chunk by chunk, with a hand-written backward.

    A whole-batch gather writes a (B * H, taps * C) tensor (27 MB for 512 default-network positions)
    that the matmul then reads back from memory; chunks of ``CHUNK_POSITIONS`` positions keep it in
    cache, and the backward gathers again instead of keeping it.  The input gradient is the transposed
    convolution: a gather of the output gradient over the reverse table and one matmul (no scatter).
    The same values up to float rounding (tests/test_network.py compares with autograd); forward,
    backward and Adam of the default network went from 146-169 to 114-118 us per position with the
    chunks (docs/training.md, "Speed").
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
            torch.addmm(bias, gathered.view(-1, taps * c), weight.t(), out=out[start * h:stop * h])
        ctx.save_for_backward(padded, weight, rows, reverse_rows)
        ctx.shape = (b, h, c, taps)
        return out.view(b, h, -1)

    @staticmethod
    def backward(ctx, grad):
        padded, weight, rows, reverse_rows = ctx.saved_tensors
        b, h, c, taps = ctx.shape
        out_channels = grad.shape[-1]
        flat = grad.reshape(b * h, out_channels)
        padded_grad = _pad(grad.reshape(b, h, out_channels))
        # tap d of the weight, (out, C), stacked by tap: (taps * out, C)
        stacked = weight.view(out_channels, taps, c).transpose(0, 1).reshape(taps * out_channels, c)
        grad_x = grad.new_empty(b * h, c)
        grad_weight = grad.new_zeros(out_channels, taps * c)
        chunk = min(b, CHUNK_POSITIONS) * h * taps
        buffer, grad_buffer = grad.new_empty(chunk, c), grad.new_empty(chunk, out_channels)
        for start in range(0, b, CHUNK_POSITIONS):
            stop = min(start + CHUNK_POSITIONS, b)
            n, lo, hi = (stop - start) * h, start * h * taps, stop * h * taps
            gathered = buffer[:n * taps]
            torch.index_select(padded, 0, rows[lo:hi], out=gathered)
            grad_weight.addmm_(flat[start * h:stop * h].t(), gathered.view(n, taps * c))
            gathered_grad = grad_buffer[:n * taps]
            torch.index_select(padded_grad, 0, reverse_rows[lo:hi], out=gathered_grad)
            torch.mm(gathered_grad.view(n, taps * out_channels), stacked, out=grad_x[start * h:stop * h])
        return grad_x.view(b, h, c), grad_weight, flat.sum(0), None, None


def _pair_logits(src_features: torch.Tensor, dst_features: torch.Tensor, pair_dim: int) -> torch.Tensor:
    """(N,) move logits ``<W_s e_src, W_d e_dst> / sqrt(k) + b(e_dst)`` from the two holes' head rows."""
    p = pair_dim
    return (src_features[:, :p] * dst_features[:, p:2 * p]).sum(-1) + dst_features[:, 2 * p]


class _PairLogitsFunction(torch.autograd.Function):
    """``_pair_logits`` of rows gathered from the (B * H, 2 * pair_dim + 1) head features, hand-differentiated.

    Autograd's backward of the two row gathers and their column slices builds several zeroed
    (B * H, k) tensors and adds them; this one zeroes one and ``index_add_``s both holes' gradients
    into it: the head's forward and backward went from 11.0 to 6.7 ms for 512 positions with 73 moves
    each (docs/training.md, "Speed")."""

    @staticmethod
    def forward(ctx, rows, src_rows, dst_rows, pair_dim):
        src_features, dst_features = rows.index_select(0, src_rows), rows.index_select(0, dst_rows)
        ctx.save_for_backward(src_features, dst_features, src_rows, dst_rows)
        ctx.pair_dim, ctx.num_rows = pair_dim, rows.shape[0]
        return _pair_logits(src_features, dst_features, pair_dim)

    @staticmethod
    def backward(ctx, grad):
        src_features, dst_features, src_rows, dst_rows = ctx.saved_tensors
        p = ctx.pair_dim
        g = grad.unsqueeze(1)
        grad_rows = grad.new_zeros(ctx.num_rows, src_features.shape[1])
        grad_rows[:, :p].index_add_(0, src_rows, dst_features[:, p:2 * p] * g)
        grad_rows[:, p:].index_add_(0, dst_rows, torch.cat([src_features[:, :p] * g, g], dim=1))
        return grad_rows, None, None, None


class HoleConv(nn.Module):
    """One residual convolution over the holes: x + relu(W [x_self, x_dir1, ..., x_dirD])."""

    def __init__(self, channels: int, taps: int) -> None:
        super().__init__()
        self.linear = layer_init(nn.Linear(channels * taps, channels))
        self.norm = nn.LayerNorm(channels)

    def forward(self, x: torch.Tensor, rows: torch.Tensor, reverse_rows: torch.Tensor) -> torch.Tensor:
        """``rows`` and ``reverse_rows``: ``gather_rows`` of the neighbour table and of its ``reverse_table``."""
        if torch.onnx.is_in_onnx_export():  # the same values with plain ops an exporter knows
            b, h, _ = x.shape
            conv = self.linear(_gather_taps(x, rows)).view(b, h, -1)
        else:
            conv = _HoleConvFunction.apply(x, self.linear.weight, self.linear.bias, rows, reverse_rows)
        return self.norm(x + torch.relu(conv))


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


class HalmaNet(nn.Module):
    """Shared policy/value network for every seat of one (variant, seat count)."""

    def __init__(self, variant: str, num_players: int, channels: int = 32, blocks: int = 3, pair_dim: int = 32,
                 value_hidden: int = 64, position_embedding: bool = True, attention_layers: int = 0) -> None:
        super().__init__()
        enc = encoding(variant, num_players)
        self.variant, self.num_players = variant, num_players
        self.num_holes = enc.num_holes
        self.num_actions = enc.num_actions
        self.pair_dim = pair_dim
        table = neighbour_table(variant, num_players)
        self.register_buffer("table", torch.as_tensor(table).reshape(-1), persistent=False)
        self.register_buffer("reverse", torch.as_tensor(reverse_table(table)).reshape(-1), persistent=False)
        self.register_buffer("grid_index", torch.as_tensor(enc.grid_index), persistent=False)
        self.embed = layer_init(nn.Linear(PLANES, channels))
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

    def trunk(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-hole move-head features (B, H, 2 * pair_dim + 1) and the value (B,).

        The features are ``[W_s e, W_d e / sqrt(pair_dim), b(e)]`` of each hole's embedding ``e``:
        the three heads run as one linear layer (one matmul instead of three over B * H rows).
        """
        x = self.embed(self.holes(obs))
        if self.position is not None:
            x = x + self.position
        x = torch.relu(x)
        b, h, _ = x.shape
        rows, reverse_rows = gather_rows(self.table, b, h), gather_rows(self.reverse, b, h)
        for block in self.blocks:
            x = block(x, rows, reverse_rows)
        for layer in self.attention:
            x = layer(x)
        scale = 1.0 / math.sqrt(self.pair_dim)
        weight = torch.cat([self.src_head.weight, self.dst_head.weight * scale, self.dst_bias.weight])
        bias = torch.cat([self.src_head.bias, self.dst_head.bias * scale, self.dst_bias.bias])
        pair = F.linear(x, weight, bias)
        # max(dim).values, not amax: the same values, and its backward (a scatter to the argmax) costs
        # about half of amax's (which compares every element with the maximum)
        value = self.value_head(torch.cat([x.mean(dim=1), x.max(dim=1).values], dim=-1)).squeeze(-1)
        return pair, value

    # --- heads --------------------------------------------------------------------------

    def forward(self, obs: torch.Tensor, legal: torch.Tensor, valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits of the listed actions and the value.

        ``legal`` (B, M) int64 actions (src * H + dst), ``valid`` (B, M) bool marks the real
        entries of a padded list.  Padding gets ``MASKED_LOGIT`` (zero probability).
        """
        pair, value = self.trunk(obs)
        b, h, k = pair.shape
        p = self.pair_dim
        # one row of ``pair`` per (position, hole): index_select of whole rows (its backward is a row-wise
        # index_add) costs about half of gathering (B, M, pair_dim) elements from (B, H, pair_dim)
        a = legal.clamp(min=0)
        base = torch.arange(b, device=legal.device).unsqueeze(1) * h
        rows = pair.reshape(b * h, k)
        src_rows, dst_rows = (a // h + base).reshape(-1), (a % h + base).reshape(-1)
        if torch.onnx.is_in_onnx_export():  # the same values with plain ops an exporter knows
            logits = _pair_logits(rows.index_select(0, src_rows), rows.index_select(0, dst_rows), p)
        else:
            logits = _PairLogitsFunction.apply(rows, src_rows, dst_rows, p)
        return logits.view(legal.shape).masked_fill(~valid, MASKED_LOGIT), value

    def dense_logits(self, obs: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, H*H) logits of every action (illegal ones ``MASKED_LOGIT`` when ``mask`` is given)."""
        pair, value = self.trunk(obs)
        p = self.pair_dim
        src, dst, bias = pair[..., :p], pair[..., p:2 * p], pair[..., 2 * p]
        logits = (src @ dst.transpose(1, 2) + bias.unsqueeze(1)).reshape(obs.shape[0], -1)
        if mask is not None:
            logits = logits.masked_fill(~mask.bool(), MASKED_LOGIT)
        return logits, value

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.trunk(obs)[1]


def build_network(variant: str, num_players: int, cfg) -> HalmaNet:
    """A HalmaNet from a ``NetworkConfig`` (or any object with the same attributes)."""
    return HalmaNet(variant, num_players, channels=cfg.channels, blocks=cfg.blocks, pair_dim=cfg.pair_dim,
                    value_hidden=cfg.value_hidden, position_embedding=cfg.position_embedding,
                    attention_layers=cfg.attention_layers)


def load_adding_attention(net: HalmaNet, state: dict[str, torch.Tensor]) -> int:
    """Load into a freshly built ``net`` the weights of the same network with fewer attention layers.

    The layers ``state`` lacks keep their initial identity (zero output projection), so ``net``
    plays exactly as those weights until trained.  Returns how many layers were added.
    """
    missing, unexpected = net.load_state_dict(state, strict=False)
    stray = [k for k in missing if not k.startswith("attention.")] + list(unexpected)
    if stray:
        raise ValueError(f"the weights are not those of this network less some attention layers: {', '.join(stray)}")
    return len({k.split(".")[1] for k in missing})


def legal_lists(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A dense (B, A) bool mask as padded action lists: (B, M) int64 actions and (B, M) validity.

    Rows with no legal action get one invalid entry; M is the largest legal count (at least 1).
    """
    return padded_lists(mask.bool())
