"""A batched engine in torch: B games of one rule set at once, on CPU or CUDA with the same code.

It plays exactly the games of the scalar engine (``halma_env.Game``) and produces exactly the
arrays of ``halma_env.encoding`` (observations, action masks in the mover's canonical frame) and the
rewards of ``halma_env.rewards``; tests step both side by side.  See docs/batched.md.

Move generation (docs/batched.md): the hop graph between empty holes is the same for every ordinary
piece, so its connected components are found once per position by min-label propagation; a
piece reaches its empty neighbours and the components of its first-hop landings.  Everything is
done in the mover's canonical frame, where its goal, home and closed camps are the same holes for
every seat, so the mask comes out directly in the action encoding.
Kings (diamond) jump rows: their graph is built from per-direction rays and gets its own
component pass; the halma16 goal lock gets a second pass restricted to the goal.

Progress (pieces in goal, then the least total distance by optimal assignment): with
``stall_limit`` every game keeps each seat's Hungarian state and re-solves the moved piece's row
after each move, in torch (see "progress" below).  Without it, the rare progress rankings (a game
ending by a limit or a first finish) use the scalar engine's exact code on CPU for just the games
concerned.  Importing this module imports torch; ``import halma_env`` does not.

``action_mask()``, ``observation()`` and ``legal_moves()`` return views of buffers kept between
steps (fresh big tensors every step cost more in page faults than the work): valid until the next
``step``; ``.clone()`` what must be kept.

Games that end inside ``step`` are reset at once (auto-reset); with ``auto_reset=False`` they stay
in their final positions (``ended``), ignore their actions and report their end once, until
``reset`` restarts them (docs/batched.md, *Ended games without auto-reset*).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Self, cast

import numpy as np

try:
    import torch
except ModuleNotFoundError as exc:  # the core install has no torch: say where it comes from
    if exc.name != "torch":
        raise
    raise ModuleNotFoundError("halma_env.batched needs torch, which comes with the train extra (pip install -e "
                              "'.[train]' in the repository, or a wheel with [train]); on a machine without a GPU "
                              "install torch's CPU build first (README, Set up)", name="torch") from None

from halma_env.encoding import PLANES, encoding
from halma_env.game import ACTIVE, FINISHED, RESIGNED, Game, IllegalMoveError, _progress
from halma_env.layout import layout
from halma_env.rewards import check_progress_shaping, check_reward_scheme, piece_distance, shaping_potential
from halma_env.rules import Rules, WrongTypeError, flag_argument, integer_argument
from halma_env.suggest import shown_value

END_REASONS = ("", "finished", "first_finish", "resign", "move_limit", "stall_limit", "repetition", "no_moves")
"""End reason codes: ``END_REASONS[code]``; 0 = the game has not ended."""
_CODE = {name: i for i, name in enumerate(END_REASONS)}
_STATUS = (ACTIVE, FINISHED, RESIGNED)  # the codes of BatchedGame.status
_KEY_SCALE = 1_000_000  # progress key as one int: -in_goal * scale + distance (smaller is better)
_PAD = 1_000_000  # cost of a padding cell of the square assignment that an optimum never uses


def _progress_key(variant: str, n: int, seat: int, geometry, owner_row: np.ndarray, king_row: np.ndarray) -> int:
    """The scalar engine's exact progress key of ``seat`` on one board (owner per hole, -1 empty)."""
    holes = np.flatnonzero(owner_row == seat)
    own = geometry.mask(holes.tolist())
    king = geometry.mask(h for h in holes.tolist() if king_row[h])
    goal = layout(variant, n).goals[seat]
    in_goal = int(np.isin(holes, goal).sum())
    p = _progress(variant, n, seat, own, king, in_goal)
    return -p.in_goal * _KEY_SCALE + p.distance


class _HoleSet:
    """Tables of the hop graph over a set of holes, indexed locally (0..n-1, n = none): every
    hole (the general case) or halma16's goal (pieces locked in it)."""

    def __init__(self, holes: np.ndarray, mid: np.ndarray, land: np.ndarray, nb: np.ndarray,
                 bits: torch.Tensor, device: torch.device) -> None:
        H = mid.shape[0] - 1
        n = len(holes)
        local = np.full(H + 1, n, dtype=np.int64)
        local[holes] = np.arange(n)
        t = lambda a: torch.as_tensor(np.ascontiguousarray(a), device=device)  # noqa: E731
        self.n = n
        self.holes = t(holes.astype(np.int64))
        self.local = t(local)  # global hole (H = none) -> local index (n = outside the set)
        self.midT = t(mid[holes].T.reshape(-1))  # direction-major, global holes (rows of jump_x)
        self.landT = t(local[land[holes]].T.reshape(-1))  # direction-major, local
        self.land_rows = self.landT.view(-1, n).unbind(0)  # per direction, for index_select
        # the same with a "no piece" row n per direction (the sentinel row of the labels)
        self.landT_x = t(np.concatenate([local[land[holes]].T, np.full((land.shape[1], 1), n)], 1).reshape(-1))
        self.nbD = t(np.concatenate([local[nb[holes]].T, np.full((nb.shape[1], 1), n)], 1))  # (D, n+1)
        self.bits = torch.cat([bits[:, torch.as_tensor(holes, device=device)],
                               torch.zeros((bits.shape[0], 1), dtype=bits.dtype, device=device)], 1)
        # per hole (and a "none" column n): the bit set of its neighbours in the set (its steps,
        # before occupancy)
        nbbits = torch.zeros_like(self.bits)
        for d in range(nb.shape[1]):
            nbbits |= self.bits[:, self.nbD[d]]
        self.nbbits = nbbits  # (W, n+1)
        self.dtype = torch.uint8 if n < 128 else torch.int16
        self.refused_bit = 0x80 if n < 128 else 0x4000
        self.big = torch.tensor(n, dtype=self.dtype, device=device)
        self.arange_col = torch.arange(n, device=device).view(n, 1).to(self.dtype)



# The batch's state and buffers are updated in place, which torch refuses for tensors made under
# torch.inference_mode() once outside it: a rollout function wrapped in @torch.inference_mode() would
# leave a batch that fails half-way through its next step outside one (its board moved, its seat to
# move not).  Every public method runs with inference mode off, so the batch only ever holds ordinary
# tensors; nothing here needs autograd either way.
_outside_inference_mode = torch.inference_mode(False)

# the most games one batch may hold: each takes hundreds of bytes of state at the least (the 2-seat star's 121
# holes' owners alone are 121 bytes), so 2**30 games are far past any machine's memory; and far past that, torch's
# own size arithmetic failed (2**62: "Storage size calculation overflowed", 2**63: a TypeError from its C++ layer)
MAX_BATCH_SIZE = 2**30


@contextlib.contextmanager
def _memory_for(batch_size: int, device: torch.device) -> Iterator[None]:
    """torch's failed allocation (a RuntimeError, a CUDA OutOfMemoryError) made a ``MemoryError`` that names the
    batch size, instead of torch's allocator message alone."""
    try:
        yield
    except RuntimeError as exc:
        if not isinstance(exc, torch.OutOfMemoryError) and "can't allocate memory" not in str(exc):
            raise  # (the CPU allocator's "DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes")
        asked = re.search(r"[Tt]ried to allocate ([\d.]+ ?[A-Za-z]+)", str(exc))  # (CPU: "N bytes", CUDA: "2.00 GiB")
        what = f"torch could not allocate {asked.group(1)}" if asked else str(exc).splitlines()[0][:200]
        raise MemoryError(f"batch_size {batch_size}: the state of {batch_size:,} games does not fit in the memory "
                          f"of {device} ({what}); use a smaller batch") from None


class BatchedGame:
    """``batch_size`` games of ``rules`` played in lockstep (one move per game per ``step``).

    Seats are absolute (as in ``Game``); actions and observations are in the canonical frame of
    each game's mover.  Games that end inside ``step`` are reset at once (auto-reset); ``step``
    reports how they ended.  With ``rotate_first_seat`` game k of slot b begins with seat
    ``(rules.first_seat + b + k) % n``; without it every game begins with ``rules.first_seat``.

    With ``auto_reset=False`` a game that ends keeps its final position until ``reset`` restarts its
    slot: ``ended`` ((B,) bool) marks those slots, ``end_reason`` holds their END_REASONS codes;
    ``step`` ignores their actions (any integer), pays them nothing and reports their end only in the
    step where it happened; they have no legal moves (an all-False mask row, empty lists) and
    ``random_actions`` gives them 0.
    """

    @_outside_inference_mode
    def __init__(
        self,
        rules: Rules,
        batch_size: int,
        device: str | torch.device | None = "cpu",
        seed: int = 0,
        reward: str = "place",
        progress_shaping: float = 0.0,
        rotate_first_seat: bool = False,
        auto_reset: bool = True,
    ) -> None:
        if not isinstance(rules, Rules):
            raise WrongTypeError(f"rules must be a halma_env.Rules, got {type(rules).__name__}")
        size = integer_argument(batch_size, lambda: f"batch_size must be a positive int, got {shown_value(batch_size)}")
        if size < 1:
            raise ValueError(f"batch_size must be a positive int, got {shown_value(batch_size)}")
        if size > MAX_BATCH_SIZE:
            raise ValueError(f"batch_size must be at most 2**30 ({MAX_BATCH_SIZE:,} games, far past any machine's "
                             f"memory), got {shown_value(batch_size)}")
        if seed is None:  # (reset's "keep the generator"; a new batch needs a seed)
            raise WrongTypeError("seed must be an int (-2**63 .. 2**64-1), got None")
        batch_size, seed = size, cast(int, self._check_seed(seed))
        check_reward_scheme(reward)
        progress_shaping = check_progress_shaping(progress_shaping)
        self.rules = rules
        self.batch_size = B = batch_size
        try:  # None: torch's default device, as torch's own functions take it
            self.device = torch.get_default_device() if device is None else torch.device(device)
        except (RuntimeError, TypeError):  # torch's message lists every device type it knows
            raise ValueError("device must be a torch device such as cpu, cuda or cuda:1, "
                             f"got {shown_value(device)}") from None
        if self.device.type not in ("cpu", "cuda"):
            raise ValueError(f"device {device!r}: the batched engine runs on cpu or cuda")
        if self.device.type == "cuda":
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if not count:
                raise ValueError(f"device {device!r}: torch sees no CUDA device on this machine")
            if self.device.index is not None and self.device.index >= count:
                raise ValueError(f"device {device!r}: torch sees {count} CUDA device(s), cuda:0 .. cuda:{count - 1}")
        self.reward = reward
        self.progress_shaping = progress_shaping
        self.rotate_first_seat = flag_argument(rotate_first_seat, "rotate_first_seat")
        self.auto_reset = flag_argument(auto_reset, "auto_reset")
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(seed)
        self._build_tables()
        self.num_actions = self.H * self.H
        self.observation_shape = self.enc.observation_shape
        n, H, P = self.n, self.H, self.P
        with _memory_for(B, self.device):  # (a batch too big for the machine: one MemoryError naming it)
            dev = self.device
            self.owner = torch.full((B, H), -1, dtype=torch.int8, device=dev)
            self.king = torch.zeros((B, H), dtype=torch.bool, device=dev)
            self.pieces = torch.full((B, n, P), H, dtype=torch.long, device=dev)
            self.to_move = torch.zeros(B, dtype=torch.long, device=dev)
            self.ply = torch.zeros(B, dtype=torch.long, device=dev)
            self.status = torch.zeros((B, n), dtype=torch.int8, device=dev)  # 0 active, 1 finished, 2 resigned
            self.places = torch.zeros((B, n), dtype=torch.long, device=dev)  # 0 = undecided
            self.top = torch.ones(B, dtype=torch.long, device=dev)
            self.first_seat = torch.full((B,), rules.first_seat, dtype=torch.long, device=dev)
            self.stall = torch.zeros(B, dtype=torch.long, device=dev)
            self.best = torch.zeros((B, n), dtype=torch.long, device=dev)
            self.hash = torch.zeros(B, dtype=torch.long, device=dev)
            if rules.stall_limit is not None:  # per game and seat: the Hungarian state of its progress
                self.asg_u, self.asg_v, self.asg_match = (x.expand(B, n, self.S + 1).clone() for x in self.t_asg0)
            self.hist = torch.zeros((B, 64 if rules.repetition_limit else 1), dtype=torch.long, device=dev)
            self.hist_len = torch.zeros(B, dtype=torch.long, device=dev)
            # END_REASONS code of each slot's ended game, kept until reset (auto_reset=False); 0: in play
            self.end_reason = torch.zeros(B, dtype=torch.long, device=dev)
            self._mask: torch.Tensor | None = None  # dense mask, built when asked for
            self._mask_rows: torch.Tensor | None = None  # rows of the mask buffer holding piece rows
            self._dest: torch.Tensor | None = None  # (B, R, H) bool, unpacked when asked for
            self._buffers: dict[str, torch.Tensor] = {}  # scratch and output buffers reused between steps
            self._live_buffers: dict[str, torch.Tensor] = {}  # those of the steps of the games in play (_step_live)
            self._start_moves = self._first_moves()
            bits, rows = self._start_moves  # (reset() writes every game's rows again)
            self._bits = bits[self.first_seat]  # (B, R, W) destination bit sets of each piece
            self._rows = rows[self.first_seat]  # (B, R) its canonical hole (H = no piece)
            self.reset()

    # --- tables -----------------------------------------------------------------------

    def _build_tables(self) -> None:
        rules = self.rules
        lay = layout(rules.variant, rules.num_players)
        enc = encoding(rules.variant, rules.num_players)
        g = lay.geometry
        self.enc, self.layout, self.geometry = enc, lay, g
        self.n = n = rules.num_players
        self.H = H = g.num_holes
        self.P = P = lay.max_pieces
        self.D = D = g.num_directions
        dev = self.device
        nb = np.full((H + 1, D), H, dtype=np.int64)
        mid = np.full((H + 1, D), H, dtype=np.int64)
        land = np.full((H + 1, D), H, dtype=np.int64)
        hob = g.hole_of_bit
        for h, b in enumerate(g.bit):
            for d, s in enumerate(g.shifts):
                if hob[b + s] >= 0:
                    nb[h, d] = hob[b + s]
                    if hob[b + 2 * s] >= 0:
                        mid[h, d] = hob[b + s]
                        land[h, d] = hob[b + 2 * s]
        t = lambda a: torch.as_tensor(a, device=dev)  # noqa: E731
        self.t_arange = torch.arange(H, device=dev)
        self.t_seats = torch.arange(n, device=dev)
        self.t_arange_col = self.t_arange.view(H, 1)
        self._big = torch.tensor(H, device=dev)
        self.t_nbD = t(np.ascontiguousarray(nb.T))
        self.W = W = (H + 63) // 64
        bits = np.zeros((W, H + 1), dtype=np.uint64)
        for h in range(H):
            bits[h // 64, h] = np.uint64(1) << np.uint64(h % 64)
        self.t_bits = t(bits.view(np.int64))  # (W, H+1): the bit of each hole, none for H
        self._all_holes = _HoleSet(np.arange(H), mid, land, nb, self.t_bits, dev)
        self.t_popcount = t(np.array([bin(i).count("1") for i in range(256)], dtype=np.int64))
        self.t_byte_bits = t(((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(bool))  # (256, 8)
        # the same table as one int64 per byte value: a 1-D index_select is ~4x faster than
        # copying 8-byte rows of a 2-D one; the result is viewed back as bools
        self.t_byte_bits64 = self.t_byte_bits.view(torch.int64).view(256)
        to_can = np.concatenate([enc.to_canonical, np.full((n, 1), H)], axis=1)
        from_can = np.concatenate([enc.from_canonical, np.full((n, 1), H)], axis=1)
        self.t_to_can, self.t_from_can = t(to_can), t(from_can)
        self.t_from_can_H = t(np.ascontiguousarray(from_can[:, :H]))
        # in the canonical frame the mover's open holes and goal are the same for every seat
        canon_open = [np.zeros(H, dtype=bool) for _ in range(n)]
        canon_goal = [np.zeros(H, dtype=bool) for _ in range(n)]
        for s in range(n):
            canon_open[s][enc.to_canonical[s][g.holes(lay.open_holes[s])]] = True
            canon_goal[s][enc.to_canonical[s][list(lay.goals[s])]] = True
        assert all((c == canon_open[0]).all() for c in canon_open)
        assert all((c == canon_goal[0]).all() for c in canon_goal)
        self.t_open = t(canon_open[0])
        self.t_open_col = self.t_open.view(H, 1)
        self.t_lock = t(canon_goal[0]) if rules.variant == "halma16" else None
        if self.t_lock is not None:
            self.t_lock_x = torch.cat([self.t_lock, torch.zeros(1, dtype=torch.bool, device=dev)])
            self._goal_holes = _HoleSet(np.flatnonzero(canon_goal[0]), mid, land, nb, self.t_bits, dev)
        goal_abs = np.zeros((n, H + 1), dtype=bool)
        for s in range(n):
            goal_abs[s, list(lay.goals[s])] = True
        self.t_goal = t(goal_abs)
        goal_owner = np.full(H + 1, -1, dtype=np.int64)
        for s in range(n):
            assert (goal_owner[list(lay.goals[s])] < 0).all(), "goals are disjoint"
            goal_owner[list(lay.goals[s])] = s
        self.t_goal_owner = t(goal_owner)
        self.goal_size = t(np.array([len(x) for x in lay.goals]))
        assert len({len(x) for x in lay.goals}) == 1
        self.t_goal_holes = t(np.array([sorted(x) for x in lay.goals], dtype=np.int64))
        self.t_tip = t(np.array([H if x is None else x for x in lay.goal_tip]))
        # observation: hole of each cell in each seat's frame (H = no hole)
        cells = enc.observation_shape[0] * enc.observation_shape[1]
        inv = np.full((n, cells), H, dtype=np.int64)
        for s in range(n):
            inv[s, enc.grid_index[enc.to_canonical[s]]] = np.arange(H)
        self.t_inv_cell = t(inv)
        # observation codes: static pattern id * NP + piece code (0 empty, 1 + rel*4 + king*2 + retired)
        patterns, static_id = np.unique(enc.static_planes.reshape(-1, PLANES), axis=0, return_inverse=True)
        NP = 1 + 4 * n
        table = np.zeros((len(patterns), NP, PLANES), dtype=np.int8)
        table[:] = patterns[:, None, :]
        for rel in range(n):
            for king in (0, 1):
                for retired in (0, 1):
                    c = 1 + rel * 4 + king * 2 + retired
                    table[:, c, rel] = 1
                    table[:, c, 6] = king
                    table[:, c, 11] = retired
        self.t_obs_table = t(table.reshape(-1, PLANES))
        self.t_static_id = t(static_id.reshape(n, cells).astype(np.int64) * NP)
        self._static_same = bool((self.t_static_id == self.t_static_id[0]).all())
        self._code_dtype = torch.uint8 if len(table.reshape(-1, PLANES)) <= 256 else torch.int32
        self.t_static_code = self.t_static_id.to(self._code_dtype)
        # the start position
        owner0 = np.full(H, -1, dtype=np.int8)
        king0 = np.zeros(H, dtype=bool)
        pieces0 = np.full((n, P), H, dtype=np.int64)
        for s, holes in enumerate(lay.start):
            owner0[list(holes)] = s
            pieces0[s, : len(holes)] = sorted(holes)
        for king_hole in lay.king_start:
            if king_hole is not None:
                king0[king_hole] = True
        self.t_owner0, self.t_king0, self.t_pieces0 = t(owner0), t(king0), t(pieces0)
        # shaping: goal distance per seat and hole (0 on the sentinel), the king's distance to its
        # goal tip (diamond: it must finish there) and phi at the start
        gd = np.zeros((n, H + 1), dtype=np.float32)
        kd = np.zeros((n, H + 1), dtype=np.float32)
        for s in range(n):
            gd[s, :H] = piece_distance(rules.variant, n, s)
            kd[s, :H] = piece_distance(rules.variant, n, s, True) if lay.has_kings else gd[s, :H]
        self.t_gd, self.t_kd = t(gd), t(kd)
        phi0 = [max(shaping_potential(rules.variant, n, s, list(lay.start[s]), lay.king_start[s]), 1) for s in range(n)]
        self.t_phi0 = t(np.array(phi0, dtype=np.float32))
        # repetition: Zobrist keys (xor) for (seat, hole), kings and the seat to move
        rng = np.random.default_rng(0x5EED)
        zob = rng.integers(-(2**63), 2**63 - 1, size=(n + 1, H + 1), dtype=np.int64)
        zob[n, :] = 0  # the "empty" seat row
        zob[:, H] = 0
        zking = rng.integers(-(2**63), 2**63 - 1, size=H + 1, dtype=np.int64)
        zking[H] = 0
        zturn = rng.integers(-(2**63), 2**63 - 1, size=n, dtype=np.int64)
        self._np_zob, self._np_zking, self._np_zturn = zob, zking, zturn
        self.t_zob, self.t_zking, self.t_zturn = t(zob), t(zking), t(zturn)
        self._start_hash = self._np_hash(owner0, king0, 0)
        self.t_best0 = torch.zeros(n, dtype=torch.long, device=dev)
        if rules.stall_limit is not None:
            self._build_assignment_tables(lay, g)
            seats = torch.arange(n, device=dev)
            king_x = torch.cat([self.t_king0, torch.zeros(1, dtype=torch.bool, device=dev)])
            u, v, match = self._assign_solve(seats, self.t_pieces0, king_x.expand(n, H + 1))
            self.t_asg0 = (u, v, match)  # the start position's assignment of each seat
            self.t_best0 = self._keys_of(seats, self.t_pieces0, u, v)

    # --- progress (remaining distance by optimal assignment), batched ----------------------
    #
    # The scalar engine's progress key is (-pieces in goal, least total distance of an assignment
    # of pieces to goal holes) (Hungarian algorithm, game._progress).  With ``stall_limit`` the
    # batch keeps, per game and seat, the Hungarian state of that assignment (potentials u, v and
    # the matching, 1-based as in halma_env.assignment) on a square cost matrix, and after each
    # move re-solves only the moved piece's row: free its column, then one Hungarian phase
    # (a shortest augmenting path) for the row with its new costs.  The matching is perfect and
    # the duals stay feasible and tight on it, so it is optimal again, and the least distance is
    # the dual sum(u) + sum(v).  Square: S = max(pieces, goal holes); padding rows (no piece) and
    # columns cost 0 or _PAD so that the optimum is exactly the scalar one (every piece to its own
    # goal hole; with more pieces than goal holes, puzzles only, every goal hole to its own piece).

    def _build_assignment_tables(self, lay, g) -> None:
        """Cost rows (n * (H+1) * 2 * 2, S): seat, hole (H = no piece), king, overfull."""
        n, H = self.n, self.H
        G = len(lay.goals[0])
        S = self.S = max(self.P, G)
        big = 10_000  # the scalar engine's cost of a king off its tip
        cost = np.zeros((n, H + 1, 2, 2, S), dtype=np.int64)
        for s in range(n):
            goal = list(lay.goals[s])
            tip = lay.goal_tip[s]
            for h in range(H):
                d = np.array([g.distance(h, x) for x in goal])
                cost[s, h, 0, :, :G] = d
                cost[s, h, 1, :, :G] = [g.distance(h, x) if x == tip else big for x in goal]
            cost[s, :H, :, 0, G:] = _PAD  # a piece must go to a goal hole (not overfull)
            cost[s, H, :, 1, :G] = _PAD  # every goal hole needs a piece (overfull)
        self.t_asg_cost = torch.as_tensor(cost.reshape(-1, S), device=self.device)
        self._G = G

    def _assign_rows(self, seat: torch.Tensor, pieces: torch.Tensor, king_x: torch.Tensor) -> torch.Tensor:
        """(K, S+1) row of t_asg_cost for each (1-based) assignment row of seat ``seat`` (K,) with
        pieces ``pieces`` (K, P) (H = none) and kings ``king_x`` (K, H+1); column 0 unused."""
        K, H, P, S = seat.shape[0], self.H, self.P, self.S
        holes = torch.full((K, S + 1), H, dtype=torch.long, device=self.device)
        holes[:, 1 : P + 1] = pieces
        over = ((pieces < H).sum(1) > self._G).long()
        king = king_x.gather(1, holes).long()
        return ((seat[:, None] * (H + 1) + holes) * 2 + king) * 2 + over[:, None]

    def _assign_phase(self, rows: torch.Tensor, u: torch.Tensor, v: torch.Tensor, match: torch.Tensor,
                      i: torch.Tensor, active: torch.Tensor) -> None:
        """One Hungarian phase (halma_env.assignment's inner loop) for row ``i`` (K,) of each
        problem where ``active``, in place on ``u``, ``v``, ``match`` (K, S+1), with the
        problems side by side: at most S+1 rounds of (K, S+1) tensor ops."""
        K, S = u.shape[0], self.S
        dev = u.device
        inf = 1 << 40
        cost = self.t_asg_cost
        minv = torch.full((K, S + 1), inf, dtype=torch.long, device=dev)
        used = torch.zeros((K, S + 1), dtype=torch.bool, device=dev)
        way = torch.zeros((K, S + 1), dtype=torch.long, device=dev)
        match[:, 0] = i
        j0 = torch.zeros(K, dtype=torch.long, device=dev)
        run = active.clone()
        for _ in range(S + 1):
            used.scatter_(1, j0[:, None], used.gather(1, j0[:, None]) | run[:, None])
            i0 = match.gather(1, j0[:, None])  # (K, 1)
            cur = cost.index_select(0, rows.gather(1, i0).view(-1)) - u.gather(1, i0) - v[:, 1:]
            free = ~used[:, 1:]
            upd = free & (cur < minv[:, 1:]) & run[:, None]
            minv[:, 1:] = torch.where(upd, cur, minv[:, 1:])
            way[:, 1:] = torch.where(upd, j0[:, None], way[:, 1:])
            delta, j1 = torch.where(free, minv[:, 1:], inf).min(1)
            delta = delta * run
            step = used.long() * delta[:, None]
            u.scatter_add_(1, match * used, step)  # rows of used columns (distinct); 0 elsewhere
            v -= step
            minv -= (~used).long() * delta[:, None]
            j0 = torch.where(run, j1 + 1, j0)
            run &= match.gather(1, j0[:, None]).squeeze(1) != 0
            if not bool(run.any()):
                break
        go = j0 != 0
        for _ in range(S + 1):  # augment along the path back to column 0
            if not bool(go.any()):
                break
            j1 = way.gather(1, j0[:, None])
            old = match.gather(1, j0[:, None])
            match.scatter_(1, j0[:, None], torch.where(go[:, None], match.gather(1, j1), old))
            j0 = torch.where(go, j1.squeeze(1), j0)
            go = j0 != 0

    def _assign_solve(self, seat: torch.Tensor, pieces: torch.Tensor,
                      king_x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The optimal assignment of K problems from scratch (S phases): (u, v, match) (K, S+1)."""
        K, S = seat.shape[0], self.S
        dev = self.device
        rows = self._assign_rows(seat, pieces, king_x)
        u = torch.zeros((K, S + 1), dtype=torch.long, device=dev)
        v = torch.zeros_like(u)
        match = torch.zeros_like(u)
        every = torch.ones(K, dtype=torch.bool, device=dev)
        for r in range(1, S + 1):
            self._assign_phase(rows, u, v, match, torch.full((K,), r, dtype=torch.long, device=dev), every)
        return u, v, match

    def _keys_of(self, seat: torch.Tensor, pieces: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Progress keys (-in_goal * _KEY_SCALE + distance) from assignment duals; pieces (K, P)."""
        in_goal = self.t_goal[seat].gather(1, pieces).sum(1)
        return -in_goal * _KEY_SCALE + u[:, 1:].sum(1) + v[:, 1:].sum(1)

    def _np_hash(self, owner: np.ndarray, king: np.ndarray, to_move: int) -> int:
        n = self.n
        idx = np.where(owner >= 0, owner, n).astype(np.int64)
        h = np.bitwise_xor.reduce(self._np_zob[idx, np.arange(self.H)])
        h ^= np.bitwise_xor.reduce(np.where(king, self._np_zking[: self.H], 0))
        return int(h ^ self._np_zturn[to_move])

    # --- state ------------------------------------------------------------------------

    # the state of the games, changed by step (often in place): a copy clones them.  Everything else
    # is a table made by __init__ (shared) or a buffer/cache of what the state determines (fresh)
    _STATE = ("owner", "king", "pieces", "to_move", "ply", "status", "places", "top", "first_seat", "stall", "best",
              "hash", "asg_u", "asg_v", "asg_match", "hist", "hist_len", "end_reason", "_bits", "_rows")

    @_outside_inference_mode
    def __copy__(self) -> Self:
        """``copy.copy(batch)``: an independent batch, as ``copy.deepcopy`` gives but without copying the
        lookup tables, which no step changes (they are shared).  The games' state tensors are cloned,
        the generator gets a copy of its state (both batches then draw the same random actions), and
        the buffers behind ``action_mask()``, ``observation()`` and ``legal_moves()`` start afresh:
        stepping either batch leaves the other exactly as it was."""
        generator = torch.Generator(device=self.device)
        generator.set_state(self.generator.get_state())
        return self._with_state(torch.Tensor.clone, generator)

    def _with_state(self, state: Any, generator: torch.Generator) -> Self:
        """A batch sharing this one's tables, with ``state(t)`` of each per-slot state tensor ``t`` (``_STATE``),
        the generator ``generator`` and fresh buffers (``copy.copy``, ``take``)."""
        other = type(self).__new__(type(self))
        other.__dict__.update(self.__dict__)
        for name in self._STATE:
            if name in self.__dict__:  # asg_*: only with a stall limit
                setattr(other, name, state(getattr(self, name)))
        other.batch_size = int(other.owner.shape[0])
        other.generator = generator
        other._buffers = {}
        other._live_buffers = {}
        other._mask = other._mask_rows = other._dest = None
        return other

    @_outside_inference_mode
    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        """``copy.deepcopy(batch)``: everything copied, tables included, as by default, but with inference
        mode off (see ``_outside_inference_mode``): made inside ``torch.inference_mode()`` the copy's
        tensors would be inference tensors, and its first step outside one would fail."""
        other = type(self).__new__(type(self))
        memo[id(self)] = other
        for name, value in self.__dict__.items():
            other.__dict__[name] = copy.deepcopy(value, memo)
        return other

    @_outside_inference_mode
    def reset(self, mask: Any = None, *, seed: Any = None) -> None:
        """Games back to the start: every slot (``mask=None``), or the slots where ``mask`` ((B,) bool)
        is true.  A reset slot becomes what ``reset()`` makes of it: its ``first_seat`` back to the
        scheme (``rules.first_seat``, plus the slot's index with ``rotate_first_seat``); the other
        slots are untouched.  ``seed`` (an int) reseeds the batch's generator; None leaves it."""
        B = self.batch_size
        if mask is None:
            which = torch.ones(B, dtype=torch.bool, device=self.device)
        else:
            try:
                which = torch.as_tensor(mask, device=self.device)
            except (TypeError, ValueError, RuntimeError, OverflowError) as e:
                raise WrongTypeError(f"mask must be a ({B},) bool tensor, got {type(mask).__name__} ({e})") from None
            if which.dtype != torch.bool:
                raise WrongTypeError(f"mask must be a ({B},) bool tensor, got dtype {which.dtype}")
            if which.shape != (B,):
                raise ValueError(f"mask must have shape ({B},), got {tuple(which.shape)}")
        seed_int = self._check_seed(seed)
        if seed_int is not None:
            self.generator.manual_seed(seed_int)
        scheme = torch.full((B,), self.rules.first_seat, dtype=torch.long, device=self.device)
        if self.rotate_first_seat:  # slot b starts with seat first_seat + b (as agents/vecgame.py)
            scheme += torch.arange(B, device=self.device)
            scheme %= self.n
        if mask is None:
            self.first_seat.copy_(scheme)
            self.end_reason.zero_()
        else:
            self.first_seat.copy_(torch.where(which, scheme, self.first_seat))
            self.end_reason.masked_fill_(which, 0)
        self._reset_games(which, rotate=False)

    @staticmethod
    def _check_seed(seed: Any) -> int | None:
        """None, or ``seed`` as an int in the range torch.Generator.manual_seed takes."""
        if seed is None:
            return None
        seed_int = integer_argument(seed, lambda: f"seed must be an int (-2**63 .. 2**64-1), got {shown_value(seed)}")
        if not -(2**63) <= seed_int < 2**64:  # the range torch.Generator.manual_seed takes
            raise ValueError(f"seed must be an int (-2**63 .. 2**64-1), got {shown_value(seed)}")
        return seed_int

    def _slot_index(self, idx: Any, size: int, what: str, unique: bool = False) -> torch.Tensor:
        """``idx`` as a 1-D long tensor on the batch's device, every entry in 0..size-1."""
        try:
            t = torch.as_tensor(idx, device=self.device)
        except (TypeError, ValueError, RuntimeError, OverflowError) as e:
            if "Overflow" in str(e) or isinstance(e, OverflowError):  # an integer past int64: out of range, as step
                raise ValueError(f"{what} must be slots 0..{size - 1}, got an integer past int64; nothing was "
                                 "changed") from None
            raise WrongTypeError(f"{what} must be a 1-D integer tensor or sequence, got {type(idx).__name__} ({e})") \
                from None
        if t.dim() != 1 or t.numel() == 0:  # (first: torch reads [] as float32)
            raise ValueError(f"{what} must be a non-empty 1-D sequence of slots, got shape {tuple(t.shape)}")
        if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
            raise WrongTypeError(f"{what} must be integers, got dtype {t.dtype} (a bool mask: use "
                                 "mask.nonzero()[:, 0])")
        wide = t.double() if t.dtype == torch.uint64 else t.long()  # (in int8 or uint16 `>= size` wraps or fails)
        bad = (wide < 0) | (wide >= size)
        if bool(bad.any()):
            raise ValueError(f"{what} must be slots 0..{size - 1}, got {t[bad][:8].tolist()}; nothing was changed")
        t = t.long()
        if unique and t.unique().numel() != t.numel():
            raise ValueError(f"{what} names a slot twice (a scatter needs distinct slots); nothing was changed")
        return t

    @_outside_inference_mode
    def take(self, idx: Any, *, seed: Any = None) -> Self:
        """A new batch of the games in slots ``idx`` (a 1-D integer tensor or sequence; repeats give
        copies of a slot: ``idx = torch.arange(B).repeat_interleave(K)`` for K children each).

        Every per-slot state tensor (``_STATE``: board, pieces, seat to move, ply, status, places,
        first seat, stall counters and progress assignments, repetition history, move tables) is
        gathered; the lookup tables are shared (no step changes them); the buffers start afresh.
        The new batch has its own generator: seeded with ``seed``, or else with a seed derived from
        this batch's generator state and a count of its takes (a hash of both), so two takes draw
        different random actions while this batch's own random stream is not advanced."""
        index = self._slot_index(idx, self.batch_size, "idx")
        seed_int = self._check_seed(seed)
        if seed_int is None:
            self._takes = getattr(self, "_takes", 0) + 1
            state = self.generator.get_state().cpu().numpy().tobytes()
            digest = hashlib.blake2b(state + self._takes.to_bytes(8, "little"), digest_size=8).digest()
            seed_int = int.from_bytes(digest, "little") >> 1
        generator = torch.Generator(device=self.device)
        generator.manual_seed(seed_int)
        other = self._with_state(lambda t: t.index_select(0, index), generator)
        other._takes = 0
        return other

    @_outside_inference_mode
    def put(self, idx: Any, src: BatchedGame, src_idx: Any = None) -> None:
        """Copy the games of ``src``'s slots ``src_idx`` (default: all, in order) into this batch's
        slots ``idx``, in place: every per-slot state tensor, as ``take`` gathers it.  ``src`` plays
        the same rules on the same device (``src`` may be this batch); ``idx`` names distinct slots,
        ``src_idx`` may repeat.  The repetition history table is padded to the wider of the two.
        Bad arguments raise (TypeError, ValueError) and change nothing."""
        if not isinstance(src, BatchedGame):
            raise WrongTypeError(f"src must be a BatchedGame, got {type(src).__name__}")
        if src.rules != self.rules:
            raise ValueError(f"src plays other rules ({src.rules}), this batch plays {self.rules}")
        if src.device != self.device:
            raise ValueError(f"src is on {src.device}, this batch on {self.device}")
        dst = self._slot_index(idx, self.batch_size, "idx", unique=True)
        if src_idx is None:
            sidx = torch.arange(src.batch_size, device=self.device)
        else:
            sidx = self._slot_index(src_idx, src.batch_size, "src_idx")
        if sidx.numel() != dst.numel():
            raise ValueError(f"idx names {dst.numel()} slots, src_idx {sidx.numel()}")
        ended = src.end_reason.index_select(0, sidx) > 0
        if self.auto_reset and bool(ended.any()):
            raise ValueError(f"src slot(s) {sidx[ended][:8].tolist()} hold ended games (auto_reset=False), which this "
                             "auto_reset batch cannot hold; nothing was changed")
        self._write_rows(dst, {name: getattr(src, name).index_select(0, sidx)
                               for name in self._STATE if name in src.__dict__})

    def _write_rows(self, dst: torch.Tensor, rows: dict[str, torch.Tensor]) -> None:
        """Write state rows (``_STATE`` name -> rows for the slots ``dst``, distinct) into the batch, the
        repetition table and the rows' history padded to the wider of the two."""
        width = max(self.hist.shape[1], rows["hist"].shape[1])
        if self.hist.shape[1] < width:
            self.hist = torch.cat([self.hist, self.hist.new_zeros((self.batch_size, width - self.hist.shape[1]))], 1)
        elif rows["hist"].shape[1] < width:
            h = rows["hist"]
            rows["hist"] = torch.cat([h, h.new_zeros((h.shape[0], width - h.shape[1]))], 1)
        for name, value in rows.items():
            getattr(self, name)[dst] = value
        self._mask = self._dest = None

    def _reset_games(self, which: torch.Tensor, rotate: bool) -> None:
        """Start new games in the slots where ``which`` is true (their mask rows included)."""
        idx = which.nonzero().squeeze(1)
        if idx.numel() == 0:
            return
        n = self.n
        k = idx.numel()
        if rotate and self.rotate_first_seat:
            self.first_seat[idx] = (self.first_seat[idx] + 1) % n
        fs = self.first_seat[idx]
        self.owner[idx] = self.t_owner0
        self.king[idx] = self.t_king0
        self.pieces[idx] = self.t_pieces0
        self.to_move[idx] = fs
        self.ply[idx] = 0
        self.status[idx] = 0
        self.places[idx] = 0
        self.top[idx] = 1
        self.stall[idx] = 0
        self.best[idx] = self.t_best0
        if self.rules.stall_limit is not None:
            self.asg_u[idx], self.asg_v[idx], self.asg_match[idx] = self.t_asg0
        self.hash[idx] = self._start_hash ^ self.t_zturn[0] ^ self.t_zturn[fs]
        self.hist_len[idx] = 0
        if self.rules.repetition_limit:
            self.hist[idx, 0] = self.hash[idx]
            self.hist_len[idx] = 1
        bits, rows = self._start_moves
        self._bits[idx] = bits[fs]
        self._rows[idx] = rows[fs]
        self._mask = self._dest = None
        assert k == fs.numel()

    # --- move generation --------------------------------------------------------------

    def _components(self, allowed: torch.Tensor, jump_x: torch.Tensor,
                    sub: _HoleSet) -> tuple[torch.Tensor, torch.Tensor]:
        """Min-label of each allowed hole's component in the hop graph, hole-major.

        ``allowed`` (H, B), ``jump_x`` (H+1, B) with a False sentinel row.  Returns (H+1, B) labels
        (the set's small dtype), H for holes that are not allowed (and on the sentinel row).  An edge joins c and
        c+2d when both are allowed and c+d is jumpable; labels spread by pairwise minimum over the
        directions (direction-major, so every gather copies whole batch rows) until a round
        changes nothing.  Also returns the label of each hole's first hop per direction, with
        a "no piece" row n (D, n+1, B) (high bit: no hop)."""
        H, D, B = sub.n, self.D, allowed.shape[1]  # H: holes of the set (local indices)
        full = B == self.batch_size  # keep the scratch buffers (not for a subset of the games)
        allowed_x = torch.cat([allowed, self._false_row(B)], 0)
        # a hop from c in direction d: c+d holds a jumpable piece and c+2d is allowed
        # (the (D, H, B) tensors live in kept buffers: see _buffer)
        hop = self._buffer(f"hop{H}", (D * H, B), torch.bool, full)
        torch.index_select(jump_x, 0, sub.midT, out=hop)
        land_ok = self._buffer(f"land_ok{H}", (D * H, B), torch.bool, full)
        torch.index_select(allowed_x, 0, sub.landT, out=land_ok)
        hop &= land_ok
        hop = hop.view(D, H, B)
        # small labels (uint8 on the star, int16 on the square board): the gathers and minima
        # move an eighth (a quarter) of the bytes of int64
        dt = sub.dtype
        big = sub.big
        lab = torch.maximum(sub.arange_col, (~allowed).to(dt) * H)
        # torch.where is ~100x slower than arithmetic on this CPU build: refused hops get a high bit
        # (row H of each direction: "no piece", never a hop)
        refused_hop = self._buffer(f"refused_hop{H}", (D, H + 1, B), dt, full)
        torch.bitwise_not(hop, out=land_ok.view(D, H, B))
        # (the bools read as bytes: a bool * int product into a uint8 out is ~25x slower)
        torch.mul(land_ok.view(D, H, B).view(dt) if dt == torch.uint8 else land_ok.view(D, H, B).to(dt),
                  sub.refused_bit, out=refused_hop[:, :H])
        refused_hop[:, H] = sub.refused_bit
        refused = self._buffer(f"refused{H}", (D, H, B), dt, full)
        torch.bitwise_or(refused_hop[:, :H], ((~allowed).to(dt) * sub.refused_bit).unsqueeze(0), out=refused)
        lab_x = torch.cat([lab, big.expand(1, B)], 0)
        lab = lab_x[:H]
        # Gauss-Seidel: each direction updates the labels in place, so a label can travel along
        # several directions in one round (about half the rounds of updating all at once).  No
        # pointer jumping: a gather with per-column indices costs as much as ~5 rounds of these
        # row-wise index_selects and minima on small labels, and components are small.
        # Labels only decrease and stay below the high bit, so a round changed nothing exactly when
        # their sum did not change: a sum of the labels read as int32 words (4x fewer elements,
        # no overflow in int64) replaces a clone and a comparison per round.
        land_rows = sub.land_rows
        refused_d = refused.unbind(0)
        tmp = torch.empty((H, B), dtype=dt, device=lab.device)
        order = list(range(D))
        total = self._label_sum(lab)
        while True:
            for d in order:
                torch.index_select(lab_x, 0, land_rows[d], out=tmp)
                tmp |= refused_d[d]
                torch.minimum(lab, tmp, out=lab)
            new_total = self._label_sum(lab)
            if new_total == total:
                first = self._buffer(f"first{H}", (D * (H + 1), B), dt, full)
                torch.index_select(lab_x, 0, sub.landT_x, out=first)
                first = first.view(D, H + 1, B)
                first |= refused_hop
                return lab_x, first
            total = new_total
            order.reverse()

    @staticmethod
    def _label_sum(lab: torch.Tensor) -> int:
        """Sum of non-negative labels (exact): as int32 words when the bytes allow it."""
        if lab.is_contiguous() and (lab.numel() * lab.element_size()) % 4 == 0:
            return int(lab.view(-1).view(torch.int32).sum())
        return int(lab.sum(dtype=torch.int64))

    def _false_row(self, B: int) -> torch.Tensor:
        return torch.zeros((1, B), dtype=torch.bool, device=self.device)

    def _ordinary(self, pcs: torch.Tensor, allowed: torch.Tensor, jump_x: torch.Tensor, sub: _HoleSet) -> torch.Tensor:
        """Destination bit sets (W, R, B) of the pieces on holes ``pcs`` (R, B) of the hole set
        ``sub`` (local indices, ``sub.n`` = no piece) in the hop graph over ``allowed`` (n, B)
        (the set's holes that may be landed on), plus their steps.  ``jump_x`` (H+1, B) is global."""
        H, D, W = sub.n, self.D, self.W
        R, B = pcs.shape
        full = B == self.batch_size
        lab_x, first_all = self._components(allowed, jump_x, sub)
        # one bit set per component label (column H collects holes that are not allowed, column
        # H+1 stays empty for refused hops): distinct bits, so a sum is an or.  Batch-major
        # (W, B, H+2): a scatter along the contiguous dim is ~4x faster than along the hole dim
        lab_b = lab_x.t()[:, :H].contiguous().long()  # (B, H) batch-major: the scatter below reads its index in order
        comp = self._buffer(f"comp{H}", (W, B, H + 2), torch.long, full)
        comp.zero_()
        comp.scatter_add_(2, lab_b.unsqueeze(0).expand(W, B, H), sub.bits[:, None, :H].expand(W, B, H))
        allowed_bits = comp[:, :, :H].sum(2)  # (W, B): the bits of the allowed holes
        # per piece and direction: its first hop's landing component (H+1, an empty bit set: none)
        first = first_all.gather(1, pcs.unsqueeze(0).expand(D, R, B)).long().clamp_(max=H + 1)
        first += self._col * (H + 2)
        hop = self._buffer(f"hop_bits{H}", (W, D * R * B), torch.long, full)
        torch.gather(comp.view(W, -1), 1, first.view(1, D * R * B).expand(W, -1), out=hop)
        hop = hop.view(W, D, R, B)
        # steps: the piece's neighbours in the set that are allowed, as one and of bit sets
        out = sub.nbbits.index_select(1, pcs.view(-1)).view(W, R, B) & allowed_bits.unsqueeze(1)
        for d in range(D):
            out |= hop[:, d]
        return out

    def _king(self, k: torch.Tensor, occ: torch.Tensor, kings: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        """Destination bit set (W, B) of the king on canonical hole ``k`` (B,) (H = none):
        steps, and chains of row jumps over contiguous non-king pieces onto the first hole behind,
        its start hole counting as empty.  The row-jump graph is undirected, so the chains are the
        king's component in it.  Hole-major inputs (H, B)."""
        H, D = self.H, self.D
        B = k.shape[0]
        has = k < H
        start = torch.zeros((H + 1, B), dtype=torch.bool, device=self.device)
        start.scatter_(0, k[None], True)
        start = start[:H] & has[None]
        occ_k = occ & ~start
        jump = occ_k & ~kings
        jump_x = torch.cat([jump, self._false_row(B)], 0)
        allowed_k = allowed | start
        allowed_kx = torch.cat([allowed_k, self._false_row(B)], 0)
        # ptr[d, c] = the last cell of the row of jumpable pieces that starts next to c in
        # direction d (c itself when there is none); pointer doubling, rows are < 16 long
        nbD = self.t_nbD[:, :H]  # (D, H)
        col = torch.arange(B, device=self.device)
        nxt_jump = jump_x.view(-1).take(nbD.unsqueeze(-1) * B + col)  # (D, H, B)
        cells = self.t_arange_col.expand(H, B)
        ptr = cells + nxt_jump * (nbD.unsqueeze(-1) - cells)  # one step
        ptr = torch.cat([ptr, torch.full((D, 1, B), H, dtype=torch.long, device=self.device)], 1)  # (D, H+1, B)
        for _ in range(4):
            ptr = ptr.gather(1, ptr)
        ptr = ptr[:, :H]
        moved = ptr != cells
        landing = self.t_nbD.gather(1, ptr.reshape(D, -1)).view(D, H, B)
        ok = moved & allowed_kx.view(-1).take(landing * B + col) & allowed_k.unsqueeze(0)
        target = torch.maximum(landing, (~ok).long() * H)  # (D, H, B)
        big = self._big
        lab_x = torch.cat([torch.maximum(self.t_arange_col, (~allowed_k).long() * H), big.expand(1, B)], 0)
        tflat = target.view(D * H, B)
        while True:
            cand = lab_x.gather(0, tflat).view(D, H, B)
            new = torch.minimum(cand[0], cand[1])
            for d in range(2, D):
                new = torch.minimum(new, cand[d])
            new = torch.minimum(lab_x[:H], new)
            new_x = torch.cat([new, big.expand(1, B)], 0)
            new_x = new_x.gather(0, new_x)
            if torch.equal(new_x, lab_x):
                break
            lab_x = new_x
        kl = lab_x.gather(0, k[None])
        dest = (lab_x[:H] == kl) & ~start & has[None]
        knb = self.t_nbD.gather(1, k[None].expand(D, B))  # (D, B)
        step = torch.cat([allowed, self._false_row(B)], 0).view(-1).take(knb * B + col) & has[None]
        dest_x = torch.cat([dest, self._false_row(B)], 0)
        dest_x.view(-1).scatter_(0, (torch.maximum(knb, (~step).long() * H) * B + col).view(-1), True)
        dest = dest_x[:H]
        # bits: a sum of distinct bits
        return (dest.unsqueeze(0).long() * self.t_bits[:, :H, None]).sum(1)

    def _first_moves(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The moves of the start position for each seat moving first: bits (n, R', W), rows (n, R')."""
        n, H = self.n, self.H
        owner = self.t_owner0.expand(n, H)
        king = self.t_king0.expand(n, H)
        pieces = self.t_pieces0.expand(n, *self.t_pieces0.shape)
        return self._moves_of(owner, king, pieces, torch.arange(n, device=self.device))

    def _legal_moves(self, idx: torch.Tensor | None, seat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Compact legal moves of games ``idx`` (None = all) for ``seat``: destination bit sets
        (k, R', W) and source rows (k, R'), both in the seat's canonical frame."""
        if idx is None:
            return self._moves_of(self.owner, self.king, self.pieces, seat)
        return self._moves_of(self.owner[idx], self.king[idx], self.pieces[idx], seat)

    def _moves_of(self, owner, king, pieces, seat) -> tuple[torch.Tensor, torch.Tensor]:
        B, H, P = owner.shape[0], self.H, self.P
        full = B == self.batch_size
        self._col = torch.arange(B, device=self.device).view(1, 1, B)
        # row copies (not advanced indexing) into kept buffers
        fc = torch.index_select(self.t_from_can_H, 0, seat, out=self._buffer("fc", (B, H), torch.long, full))
        # one gather for occupancy and kings: code 0 empty, 1 piece, 2 king
        code = ((owner >= 0).to(torch.int8) + king.to(torch.int8)).gather(1, fc).t().contiguous()  # (H, B)
        occ = code > 0
        kings_c = code > 1
        pcs_abs = pieces.gather(1, seat.view(B, 1, 1).expand(B, 1, P)).squeeze(1)
        to_can = torch.index_select(self.t_to_can, 0, seat, out=self._buffer("to_can", (B, H + 1), torch.long, full))
        pcs = to_can.gather(1, pcs_abs).t().contiguous()  # (P, B), H = none
        allowed = ~occ & self.t_open_col
        jump_x = torch.cat([occ & ~kings_c, self._false_row(B)], 0)
        if self.layout.has_kings:
            pk = torch.cat([kings_c, self._false_row(B)], 0).gather(0, pcs)  # which slot holds the king
            kpos = torch.maximum(pcs, (~pk).long() * H).amin(0)
            pcs_ord = torch.maximum(pcs, pk.long() * H)
        else:
            pcs_ord = pcs
        if self.t_lock is not None:
            # halma16: a piece that begins in its goal stays there: a second, small pass over the
            # graph of the goal holes alone
            locked = self.t_lock_x[pcs_ord]
            bits = self._ordinary(torch.maximum(pcs_ord, locked.long() * H), allowed, jump_x, self._all_holes)
            sub = self._goal_holes
            local = sub.local[torch.maximum(pcs_ord, (~locked).long() * H)]
            bits |= self._ordinary(local, allowed.index_select(0, sub.holes), jump_x, sub)
        else:
            bits = self._ordinary(pcs_ord, allowed, jump_x, self._all_holes)
        rows = pcs_ord
        if self.layout.has_kings:
            kbits = self._king(kpos, occ, kings_c, allowed)
            bits = torch.cat([bits, kbits.unsqueeze(1)], 1)
            rows = torch.cat([pcs_ord, kpos.unsqueeze(0)], 0)
        return bits.permute(2, 1, 0).contiguous(), rows.t().contiguous()

    # --- reading ----------------------------------------------------------------------

    @_outside_inference_mode
    def action_mask(self) -> torch.Tensor:
        """(B, H*H) bool, in a reused buffer (``.clone()`` to keep it): the legal moves of each game's
        mover, ``canon(src) * H + canon(dst)``.

        Built on first call after a step (later calls return the same tensor).  It is a view of
        one buffer that the next ``action_mask()`` after a step rewrites: ``.clone()`` it to keep
        it, and do not write into it.  Only the rows of pieces change: the rows written last time
        are cleared and the mover's piece rows are written (2 R rows per game instead of H)."""
        if self._mask is None:
            B, H = self.batch_size, self.H
            rows, dest = self.legal_moves()
            R = rows.shape[1]
            buf = self._buffers.get("mask")
            if buf is None:  # (B*H + 1, H): row B*H takes the writes of "no piece" slots
                buf = self._buffers["mask"] = torch.zeros((B * H + 1, H), dtype=torch.bool, device=self.device)
            if self._mask_rows is not None:  # (a zero tensor: index_put_ of a scalar is ~6x slower)
                zeros = self._buffers.get("mask_zeros")
                if zeros is None or zeros.shape[0] != self._mask_rows.numel():
                    zeros = self._buffers["mask_zeros"] = buf.new_zeros((self._mask_rows.numel(), H))
                buf.index_put_((self._mask_rows,), zeros)
            flat = (rows + torch.arange(0, B * H, H, device=self.device)[:, None]).clamp_(max=B * H)
            flat = flat + (rows == H).long() * (B * H)  # a missing piece's row goes to the spare row
            flat = flat.clamp_(max=B * H).view(B * R)
            buf.index_put_((flat,), dest.reshape(B * R, H))
            self._mask_rows = flat
            self._mask = buf[: B * H].view(B, H * H)
        return self._mask

    @_outside_inference_mode
    def legal_moves(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The compact form of the mask: ``(rows, dest)`` with ``rows`` (B, R) the canonical
        source holes of the mover's pieces (H = no piece) and ``dest`` (B, R, H) bool their
        canonical destinations.  Far smaller than the dense mask.  ``rows`` is a copy; ``dest`` is a
        (non-contiguous) view of a buffer that the next step's call rewrites."""
        if self._dest is None:
            # one table lookup per byte of the bit sets (little-endian: bit h is in byte h // 8)
            B, R, W = self._bits.shape
            by = self._buffer("byte_idx", (B * R * W * 8,), torch.long)
            by.copy_(self._bits.view(torch.uint8).view(-1))
            dest = self._buffer("dest", (B * R * W * 8,), torch.long)  # valid until the next step
            torch.index_select(self.t_byte_bits64, 0, by, out=dest)
            self._dest = dest.view(torch.bool).view(B, R, W * 64)[:, :, : self.H]
        return self._rows.clone(), self._dest  # rows copied: step checks legality against the engine's own

    @_outside_inference_mode
    def legal_lists(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The legal actions as padded lists: (B, M) int64 ascending, and (B, M) validity, with
        M the largest number of legal moves in the batch."""
        rows, dest = self.legal_moves()
        B, R, H = dest.shape
        # pieces by source hole, then the row-major order of their destinations is ascending by action
        # (sorting the B x R sources instead of the B x R*H actions: 3.1 -> 0.65 ms at B=128 on the star)
        rows, order = rows.sort(1)
        cols, valid = padded_lists(dest.gather(1, order.unsqueeze(-1).expand(B, R, H)).view(B, R * H))
        return (rows.gather(1, cols // H) * H + cols % H) * valid, valid

    @_outside_inference_mode
    def random_actions(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """(B,) uniformly random legal actions (from the compact form, without the dense mask); 0 for
        the ended games of ``auto_reset=False`` (which draw all the same: the stream does not depend on
        which games ended)."""
        B, H = self.batch_size, self.H
        if generator is not None and not isinstance(generator, torch.Generator):  # (torch's own error is a page)
            raise WrongTypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
        gen = self.generator if generator is None else generator
        R, W = self._bits.shape[1:]
        by = self._buffer("byte_idx", (B * R * W * 8,), torch.long)
        by.copy_(self._bits.view(torch.uint8).view(-1))
        pop = torch.index_select(self.t_popcount, 0, by, out=self._buffer("popcount", by.shape, torch.long))
        counts = pop.view(B, R, W * 8).sum(2)  # moves per piece
        cum = counts.cumsum(1)
        total = cum[:, -1]
        u = (torch.rand(B, generator=gen, device=self.device) * total).long().clamp(max=total - 1)
        r = (cum <= u[:, None]).sum(1)  # the piece holding the u-th move
        j = u - (cum.gather(1, r[:, None]).squeeze(1) - counts.gather(1, r[:, None]).squeeze(1))
        row_bytes = by.view(B, R, W * 8).gather(1, r.view(B, 1, 1).expand(B, 1, W * 8)).view(-1)
        # that piece's destinations
        row = self.t_byte_bits64.index_select(0, row_bytes).view(torch.bool).view(B, W * 64)
        c = (row.cumsum(1) <= j[:, None]).sum(1)
        src = self._rows.gather(1, r[:, None]).squeeze(1)
        if not self.auto_reset:  # an ended game has no moves (total 0): 0, which step ignores there
            return torch.where(total > 0, src * H + c, 0)
        return src * H + c

    @property
    def ended(self) -> torch.Tensor:
        """(B,) bool, a fresh tensor: the slots whose game has ended and waits for ``reset``
        (``auto_reset=False``; always all False with auto-reset).  ``end_reason`` gives their codes."""
        return self.end_reason > 0

    @_outside_inference_mode
    def observation(self) -> torch.Tensor:
        """(B, rows, cols, 12) int8, in a reused buffer (``.clone()`` to keep it):
        ``encoding.observation(game, to_move)`` of every game.

        Every cell gets one code (its static planes, and the piece on it: seat relative to the
        mover, king, retired), and one table lookup expands the codes into the planes.  A view of
        a buffer that the next call rewrites: ``.clone()`` it to keep it."""
        return self._observe(self.owner, self.king, self.status, self.to_move, keep=True)

    @_outside_inference_mode
    def final_observation(self, info: dict[str, torch.Tensor], seat: Any = None) -> torch.Tensor:
        """(k, rows, cols, 12) int8, a fresh tensor: the observations of the final positions of the k
        games that ended in the step that returned ``info`` (slot order: ``info["end_reason"] > 0``),
        as ``encoding.observation(game, seat)`` of the scalar game at its end (finished seats marked
        retired).  ``seat``: the frame, by default the seat that made the ending move
        (``info["mover"]``); or an int, or a (k,) integer tensor, one seat per ended game.  Built
        from ``info`` alone (its final board, seat status and mover), so it works after later steps."""
        try:
            end, owner, king = info["end_reason"], info["final_owner"], info["final_king"]
            status, mover = info["final_status"], info["mover"]
        except (KeyError, TypeError):
            raise WrongTypeError("info must be the dict returned by this batch's step()") from None
        B, n = self.batch_size, self.n
        if end.shape != (B,) or owner.shape != (B, self.H) or status.shape != (B, n):
            raise ValueError(f"info comes from a batch of another size or game: end_reason {tuple(end.shape)}, "
                             f"final_owner {tuple(owner.shape)}, final_status {tuple(status.shape)}; this batch "
                             f"has B={B}, H={self.H}, {n} seats")
        idx = (end > 0).nonzero().squeeze(1)
        k = idx.numel()
        if seat is None:
            seats = mover.index_select(0, idx)
        else:
            try:
                seats = torch.as_tensor(seat, device=self.device)
            except (TypeError, ValueError, RuntimeError, OverflowError) as e:
                raise WrongTypeError(f"seat must be an int or a ({k},) integer tensor, got {type(seat).__name__} "
                                     f"({e})") from None
            if seats.dtype.is_floating_point or seats.dtype.is_complex or seats.dtype == torch.bool:
                raise WrongTypeError(f"seat must be integers, got dtype {seats.dtype}")
            if bool(((seats < 0) | (seats >= n)).any()):  # (an int too when no game ended)
                raise ValueError(f"seat must be 0..{n - 1}, got {seats.tolist()}")
            if seats.dim() == 0:
                seats = seats.expand(k)
            if seats.shape != (k,):
                raise ValueError(f"seat must be an int or have shape ({k},) (the games that ended), "
                                 f"got {tuple(seats.shape)}")
            seats = seats.long()
        if k == 0:
            return torch.zeros((0, *self.observation_shape), dtype=torch.int8, device=self.device)
        return self._observe(owner.index_select(0, idx), king.index_select(0, idx), status.index_select(0, idx),
                             seats, keep=False)

    def _observe(self, owner_: torch.Tensor, king_: torch.Tensor, status: torch.Tensor, seat: torch.Tensor,
                 keep: bool) -> torch.Tensor:
        """Observations of the boards ``owner_`` / ``king_`` (k, H) with seat status (k, n) from ``seat``
        (k,): in the kept buffers (``keep``, k = B), or in fresh tensors."""
        B, n = owner_.shape[0], self.n
        dev = self.device
        buf = self._buffer if keep else lambda _name, shape, dtype: torch.empty(shape, dtype=dtype, device=dev)
        cdt = self._code_dtype
        # per game, the code of each owner (index 0 = empty, s+1 = seat s): a (B, n+1) table
        others = (self.t_seats - seat[:, None]) % n  # (B, n) seat relative to the mover
        retired = (status != 0).long()  # finished or resigned (loaded by from_games)
        lut = torch.cat([self._zero_col(B), 1 + others * 4 + retired], 1).to(cdt)
        owner = buf("obs_owner", (B, self.H + 1), torch.long)  # (B, H+1), column H = no hole
        owner[:, : self.H] = owner_
        owner[:, self.H] = -1
        owner += 1
        code = lut.gather(1, owner)  # small codes: the gathers move 1 byte per cell, not 8
        if self.layout.has_kings:
            code += torch.cat([king_, self._false_col(B)], 1).to(cdt) * 2
        inv = buf("obs_inv", (B, self.t_inv_cell.shape[1]), torch.long)
        code = code.gather(1, torch.index_select(self.t_inv_cell, 0, seat, out=inv))
        if self._static_same:  # the static planes do not depend on the seat: broadcast one row
            code += self.t_static_code[0]
        else:
            code += self.t_static_code.index_select(0, seat)
        rows, cols, _ = self.observation_shape
        out = buf("obs", (B * rows * cols, PLANES), torch.int8)
        torch.index_select(self.t_obs_table, 0, code.view(-1).int(), out=out)
        return out.view(B, rows, cols, PLANES)

    def _buffer(self, name: str, shape: tuple[int, ...], dtype: torch.dtype, keep: bool = True) -> torch.Tensor:
        """A scratch tensor kept between calls (contents undefined): big tensors allocated afresh
        every step cost more in page faults than in the work that fills them (glibc hands big
        blocks back to the system when they are freed).  ``keep=False`` (a subset of the games,
        rare): a fresh tensor, the kept one stays."""
        buf = self._buffers.get(name)
        if buf is None or buf.shape != shape or buf.dtype != dtype:
            buf = torch.empty(shape, dtype=dtype, device=self.device)
            if keep:
                self._buffers[name] = buf
        return buf

    def _zero_col(self, B: int) -> torch.Tensor:
        return torch.zeros((B, 1), dtype=torch.long, device=self.device)

    def _false_col(self, B: int) -> torch.Tensor:
        return torch.zeros((B, 1), dtype=torch.bool, device=self.device)

    # --- playing ----------------------------------------------------------------------

    @_outside_inference_mode
    def step(self, actions: torch.Tensor | np.ndarray | Sequence[int]
             ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """Play one action per game (canonical frame of its mover).

        Returns ``rewards`` (B, n) float32 by absolute seat (the mover's shaping term; at a
        game's end every seat's place reward on top), ``done`` (B,) bool, and ``info``:
        ``places`` (B, n) (0 where not done), ``end_reason`` (B,) codes into END_REASONS,
        ``length`` (B,) plies of the ended games, ``finished`` (B, n) their seats that finished
        (not those that resigned), ``final_owner``/``final_king`` the boards before the reset.
        Ended games are reset in place; with ``auto_reset=False`` they keep their final positions
        instead, and in later steps their actions (any integers) are ignored: nothing of theirs
        changes, their rewards are 0 and their ``done`` and ``end_reason`` 0 (an end is reported
        once).  Bad actions raise and play nothing: TypeError for
        non-integers, ValueError for a wrong shape or an action outside 0..H*H-1 (as the envs and
        ``Encoding.decode_action`` refuse it), and ``IllegalMoveError`` (a ValueError, as
        ``Game.play`` and the envs raise) for an action that is not in the mask."""
        B, H = self.batch_size, self.H
        dev = self.device
        try:
            actions = torch.as_tensor(actions, device=dev)
        except (TypeError, ValueError, RuntimeError, OverflowError) as e:  # strings, None, objects, huge ints
            if "verflow" in str(e) or isinstance(e, OverflowError):  # Python ints beyond int64
                raise ValueError(f"actions must be 0..{self.num_actions - 1}, got {shown_value(actions)}") from None
            raise WrongTypeError(f"actions must be an integer tensor of shape ({B},), got {type(actions).__name__} "
                                 f"({e})") from None
        if actions.shape != (B,):
            raise ValueError(f"actions must have shape ({B},), got {tuple(actions.shape)}")
        if actions.dtype.is_floating_point or actions.dtype.is_complex or actions.dtype == torch.bool:
            # (.long() would truncate)
            raise WrongTypeError(f"actions must be an integer tensor, got dtype {actions.dtype}")
        # compared in int64 (an int16 tensor compared with 65536 wraps it; uint16 and uint32 have no `<` on the CPU),
        # or as doubles for uint64, whose values past 2**63 .long() would wrap
        wide = actions.double() if actions.dtype == torch.uint64 else actions.long()
        out_of_range = (wide < 0) | (wide >= self.num_actions)
        frozen = None  # auto_reset=False: the slots of ended games, whose actions are ignored
        if not self.auto_reset and bool(self.end_reason.any()):
            frozen = self.end_reason > 0
            out_of_range &= ~frozen
        if bool(out_of_range.any()):
            bad = out_of_range.nonzero().squeeze(1)[:8]
            raise ValueError(f"actions must be 0..{self.num_actions - 1}: got {actions[bad].tolist()} in game(s) "
                             f"{bad.tolist()}; nothing was played")
        actions = actions.long()
        if frozen is not None:
            actions = actions.masked_fill(frozen, 0)
        cs, cd = actions // H, actions % H
        hit = self._rows == cs[:, None]  # (B, R)
        word = self._bits.gather(2, (cd // 64).view(B, 1, 1).expand(-1, hit.shape[1], 1)).squeeze(2)
        legal = (hit & (word >> (cd % 64)[:, None] & 1).bool()).any(1)
        if frozen is not None:
            legal |= frozen
        if not bool(legal.all()):
            games = (~legal).nonzero().squeeze(1)[:8].tolist()
            raise IllegalMoveError(f"illegal action in game(s) {games} (see action_mask()); nothing was played")
        if frozen is not None:
            return self._step_live(frozen, cs, cd)
        return self._play(cs, cd)

    def _play(self, cs: torch.Tensor, cd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """``step`` after its checks: play the legal moves ``cs`` -> ``cd`` (canonical holes) in every game."""
        B, n = self.batch_size, self.n
        dev = self.device
        ar = torch.arange(B, device=dev)
        mover = self.to_move
        src = self.t_from_can[mover, cs]
        dst = self.t_from_can[mover, cd]
        # move the piece
        is_king = self.king[ar, src]
        self.owner[ar, src] = -1
        self.owner[ar, dst] = mover.to(torch.int8)
        self.king[ar, src] = False
        self.king[ar, dst] = is_king
        slot = (self.pieces[ar, mover] == src[:, None]).long().argmax(1)
        self.pieces[ar, mover, slot] = dst
        if self.rules.stall_limit is not None:
            self._reassign(mover, slot)
        self.hash ^= self.t_zob[mover, src] ^ self.t_zob[mover, dst]
        self.hash ^= torch.where(is_king, self.t_zking[src] ^ self.t_zking[dst], 0)
        self.ply += 1
        rewards = torch.zeros((B, n), dtype=torch.float32, device=dev)
        if self.progress_shaping:
            before = torch.where(is_king, self.t_kd[mover, src], self.t_gd[mover, src])
            after = torch.where(is_king, self.t_kd[mover, dst], self.t_gd[mover, dst])
            gain = (before - after) / self.t_phi0[mover]
            rewards[ar, mover] = self.progress_shaping * gain
        end = torch.zeros(B, dtype=torch.long, device=dev)
        # did the mover finish?  With anti-blocking the piece may also complete the goal of the
        # (one) other seat whose goal holds its landing hole: that seat finishes too, after it
        finished = self._has_finished(mover)
        if self.rules.anti_blocking and n > 1:
            other = self.t_goal_owner[dst]  # (B,) seat whose goal holds dst, -1 none
            oc = other.clamp(min=0)
            other_done = (other >= 0) & (other != mover) & (self.status[ar, oc] == 0) & self._has_finished(oc)
        else:
            other = mover
            other_done = torch.zeros_like(finished)
        if bool((finished | other_done).any()):
            for who, seats in ((finished, mover), (other_done, other)):
                w = who.nonzero().squeeze(1)
                self.status[w, seats[w]] = 1
                self.places[w, seats[w]] = self.top[w]
                self.top[w] += 1
            f = (finished | other_done).nonzero().squeeze(1)
            if not self.rules.play_to_end and n >= 3:
                self._end_by_progress(f, "first_finish", end)
            else:
                und = (self.places[f] == 0).sum(1)
                fin = f[und <= 1]
                if fin.numel():
                    self._fill_last(fin)
                    end[fin] = _CODE["finished"]
        # hand the turn on: next active seat that can move (automatic passes)
        live = end == 0
        seat = self._next_active(None, mover)
        bits, rows = self._legal_moves(None, seat)
        pending = live & ~(bits != 0).flatten(1).any(1)
        for _ in range(n - 1):
            if not bool(pending.any()):
                break
            p = pending.nonzero().squeeze(1)
            cand = self._next_active(p, seat[p])
            seat[p] = cand
            bt, r = self._legal_moves(p, cand)
            bits[p] = bt
            rows[p] = r
            pending[p[(bt != 0).flatten(1).any(1)]] = False
        if bool(pending.any()):  # nobody could move
            p = pending.nonzero().squeeze(1)
            self._fill_draw(p)
            end[p] = _CODE["no_moves"]
        live = end == 0
        self.hash ^= torch.where(live, self.t_zturn[mover] ^ self.t_zturn[seat], 0)
        self.to_move = torch.where(live, seat, self.to_move)
        rules = self.rules
        if rules.repetition_limit and bool(live.any()):
            if int(self.hist_len.max()) >= self.hist.shape[1]:
                self.hist = torch.cat([self.hist, torch.zeros_like(self.hist)], 1)
            li = live.nonzero().squeeze(1)
            self.hist[li, self.hist_len[li]] = self.hash[li]
            self.hist_len[li] += 1
            width = int(self.hist_len.max())
            if self.hist.shape[1] > 64 and 4 * width <= self.hist.shape[1]:  # the long games are over: room back
                self.hist = self.hist[:, : self.hist.shape[1] // 2].clone()
            valid = torch.arange(width, device=dev) < self.hist_len[:, None]
            count = ((self.hist[:, :width] == self.hash[:, None]) & valid).sum(1)
            rep = live & (count >= rules.repetition_limit)
            if bool(rep.any()):
                r = rep.nonzero().squeeze(1)
                self._fill_draw(r)
                end[r] = _CODE["repetition"]
                live = end == 0
        if rules.move_limit is not None:
            lim = live & (self.ply >= rules.move_limit)
            if bool(lim.any()):
                li = lim.nonzero().squeeze(1)
                if rules.limit_outcome == "draw":
                    self._fill_draw(li)
                    end[li] = _CODE["move_limit"]
                else:
                    self._end_by_progress(li, "move_limit", end)
                live = end == 0
        if rules.stall_limit is not None:
            # the mover's progress key (from its assignment, updated after the move) against its best
            keys = self._keys_of(mover, self.pieces[ar, mover], self.asg_u[ar, mover], self.asg_v[ar, mover])
            best = self.best[ar, mover]
            better = live & (keys < best)
            self.best[ar, mover] = torch.minimum(best, torch.where(live, keys, best))
            self.stall = torch.where(better, 0, self.stall + live.long())
            st = (live & ~better & (self.stall >= rules.stall_limit)).nonzero().squeeze(1)
            if st.numel():
                self._end_by_progress(st, "stall_limit", end)
        done = end > 0
        truncated = end == _CODE["move_limit"]  # the only time limit (as the AEC env's move_limit_truncates)
        info: dict[str, Any] = {
            "end_reason": end,
            "places": torch.where(done[:, None], self.places, 0),
            "length": torch.where(done, self.ply, 0),
            "finished": (self.status == 1) & done[:, None],  # not the resigned (2)
            "final_owner": self.owner.clone(),
            "final_king": self.king.clone(),
            "final_status": self.status.clone(),
            "mover": mover,  # (the tensor self.to_move was: replaced above, not written in place)
            "truncated": truncated,
            "terminated": done & ~truncated,
        }
        self._bits, self._rows, self._mask, self._dest = bits, rows, None, None
        if bool(done.any()):
            rewards += self._place_rewards(self.places, self.status) * done[:, None]
            if self.auto_reset:
                self._reset_games(done, rotate=True)
            else:  # the game stays as it ended, without moves, until reset
                self.end_reason = torch.where(done, end, self.end_reason)
                self._bits[done] = 0
                self._rows[done] = self.H
        return rewards, done, info

    def _step_live(self, frozen: torch.Tensor, cs: torch.Tensor,
                   cd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """``step`` with ended games (``auto_reset=False``): the games in play are gathered into a
        batch of their own (as ``take`` does), stepped, and their state is written back; the ended
        games are not touched, and their rows of the returned tensors are those of a game that did not
        end (zero rewards, ``done`` False, ``end_reason`` 0), their board in ``final_owner``/``final_king``."""
        B, n = self.batch_size, self.n
        dev = self.device
        live = (~frozen).nonzero().squeeze(1)
        rewards = torch.zeros((B, n), dtype=torch.float32, device=dev)
        end = torch.zeros(B, dtype=torch.long, device=dev)
        places = torch.zeros((B, n), dtype=torch.long, device=dev)
        length = torch.zeros(B, dtype=torch.long, device=dev)
        finished = torch.zeros((B, n), dtype=torch.bool, device=dev)
        mover = self.to_move.clone()
        if live.numel():
            sub = self._with_state(lambda t: t.index_select(0, live), self.generator)
            sub._buffers = self._live_buffers  # kept between steps (their shapes change when a game ends)
            r, _, info = sub._play(cs.index_select(0, live), cd.index_select(0, live))
            rewards[live] = r
            end[live] = info["end_reason"]
            places[live] = info["places"]
            length[live] = info["length"]
            finished[live] = info["finished"]
            mover[live] = info["mover"]
            self._write_rows(live, {name: getattr(sub, name) for name in self._STATE if name in sub.__dict__})
            if self.hist.shape[1] > 64 and 4 * int(self.hist_len.max()) <= self.hist.shape[1]:  # as _play does
                self.hist = self.hist[:, : self.hist.shape[1] // 2].clone()
        self._mask = self._dest = None
        done = end > 0
        truncated = end == _CODE["move_limit"]
        info = {
            "end_reason": end,
            "places": places,
            "length": length,
            "finished": finished,
            "final_owner": self.owner.clone(),
            "final_king": self.king.clone(),
            "final_status": self.status.clone(),
            "mover": mover,
            "truncated": truncated,
            "terminated": done & ~truncated,
        }
        return rewards, done, info

    def _has_finished(self, seat: torch.Tensor) -> torch.Tensor:
        """(B,) whether ``seat`` (B,) meets its goal in each game (the scalar engine's test)."""
        B, H = self.batch_size, self.H
        ar = torch.arange(B, device=self.device)
        pcs = self.pieces[ar, seat]  # (B, P), H = no piece
        in_goal = self.t_goal[seat].gather(1, pcs).sum(1)
        n_own = (pcs < H).sum(1)
        gsize = self.goal_size[seat]
        finished = (in_goal > 0) & ((in_goal == n_own) | (in_goal == gsize))
        if self.rules.anti_blocking:
            occupied = (self.owner.gather(1, self.t_goal_holes[seat]) >= 0).sum(1)
            finished |= (in_goal > 0) & (occupied == gsize)
        if self.layout.has_kings:
            # the king must be on the goal tip (a puzzle seat without a king is spared)
            tip = self.t_tip[seat].clamp(max=H - 1)
            has_king = torch.cat([self.king, self._false_col(B)], 1).gather(1, pcs).any(1)
            on_tip = self.king[ar, tip] & (self.owner[ar, tip].long() == seat)
            finished &= ~has_king | on_tip
        return finished

    def _next_active(self, idx: torch.Tensor | None, seat: torch.Tensor) -> torch.Tensor:
        """The first active seat after ``seat`` in turn order (the seat itself after n)."""
        n = self.n
        offs = torch.arange(1, n + 1, device=self.device)
        cand = (seat[:, None] + offs) % n  # (k, n)
        status = self.status if idx is None else self.status[idx]
        active = status.gather(1, cand) == 0
        first = active.long().argmax(1)
        return cand.gather(1, first[:, None]).squeeze(1)

    def _fill_last(self, idx: torch.Tensor) -> None:
        """The (at most one) undecided seat of each game takes the place left."""
        und = self.places[idx] == 0
        self.places[idx] = torch.where(und, self.top[idx, None], self.places[idx])

    def _fill_draw(self, idx: torch.Tensor) -> None:
        """Every undecided seat shares the next place."""
        self._fill_last(idx)

    def _progress_keys(self, idx: torch.Tensor, seats: torch.Tensor) -> torch.Tensor:
        """Exact progress keys (smaller is better) of ``seats`` in games ``idx``, by the scalar
        engine on CPU (cached there by piece set)."""
        owner = self.owner[idx].cpu().numpy()
        king = self.king[idx].cpu().numpy()
        v, n, g = self.rules.variant, self.n, self.geometry
        keys = [_progress_key(v, n, s, g, owner[i], king[i]) for i, s in enumerate(seats.tolist())]
        return torch.tensor(keys, dtype=torch.long, device=self.device)

    def _reassign(self, mover: torch.Tensor, slot: torch.Tensor) -> None:
        """Update the mover's assignment after its piece in ``slot`` (B,) moved: free that row's
        column and run one Hungarian phase for the row with its new costs."""
        B = self.batch_size
        ar = torch.arange(B, device=self.device)
        u, v, match = self.asg_u[ar, mover], self.asg_v[ar, mover], self.asg_match[ar, mover]
        r = slot + 1
        col = (match[:, 1:] == r[:, None]).long().argmax(1) + 1
        match.scatter_(1, col[:, None], 0)
        king_x = torch.cat([self.king, self._false_col(B)], 1)
        rows = self._assign_rows(mover, self.pieces[ar, mover], king_x)
        self._assign_phase(rows, u, v, match, r, torch.ones(B, dtype=torch.bool, device=self.device))
        self.asg_u[ar, mover], self.asg_v[ar, mover], self.asg_match[ar, mover] = u, v, match

    def _assign_all(self) -> None:
        """Solve every seat's assignment of every game from scratch (after from_games)."""
        B, n = self.batch_size, self.n
        seat = self.t_seats.repeat(B)
        king_x = torch.cat([self.king, self._false_col(B)], 1).repeat_interleave(n, 0)
        u, v, match = self._assign_solve(seat, self.pieces.reshape(B * n, -1), king_x)
        self.asg_u, self.asg_v, self.asg_match = (x.view(B, n, -1) for x in (u, v, match))

    def _state_keys(self, idx: torch.Tensor) -> torch.Tensor:
        """(k, n) progress keys of every seat in games ``idx`` from the kept assignments."""
        n, k = self.n, idx.numel()
        seat = self.t_seats.repeat(k)
        return self._keys_of(seat, self.pieces[idx].view(k * n, -1), self.asg_u[idx].view(k * n, -1),
                             self.asg_v[idx].view(k * n, -1)).view(k, n)

    def _end_by_progress(self, idx: torch.Tensor, reason: str, end: torch.Tensor) -> None:
        """Rank the undecided seats of games ``idx`` by progress (ties share a place)."""
        n = self.n
        k = idx.numel()
        if self.rules.stall_limit is not None:  # the assignments are kept up to date
            keys = self._state_keys(idx)
        else:
            keys = torch.stack([self._progress_keys(idx, torch.full((k,), s, device=self.device))
                                for s in range(n)], 1)
        und = self.places[idx] == 0
        inf = torch.iinfo(torch.long).max
        keys = torch.where(und, keys, inf)
        better = (keys[:, None, :] < keys[:, :, None]).sum(2)  # seats strictly ahead
        self.places[idx] = torch.where(und, self.top[idx, None] + better, self.places[idx])
        end[idx] = _CODE[reason]

    def _place_rewards(self, places: torch.Tensor, status: torch.Tensor) -> torch.Tensor:
        """``rewards.place_rewards`` of every row of decided places (B, n), float32; a solitaire earns
        its +1 only by finishing (a move-limit end gives its lone seat place 1 but 0 reward, as
        ``rewards.seat_rewards`` says)."""
        n = self.n
        p = places.float()
        if n == 1:
            return (status == 1).float()
        same = (places[:, :, None] == places[:, None, :]).sum(2).float()  # seats sharing the place
        draw = (same == n).all(1, keepdim=True)
        if self.reward == "win_loss":
            r = torch.where(places == 1, 1.0, -1.0)
        else:
            r = 1.0 - 2.0 * ((p - 1.0) + (same - 1.0) / 2.0) / (n - 1)
        return torch.where(draw, 0.0, r)

    # --- conversion -------------------------------------------------------------------

    @_outside_inference_mode
    def to_games(self) -> list[Game]:
        """Scalar ``Game`` objects of the current positions (places, status, ply and stall
        counters included; the repetition history is not carried over).  The game of an ended slot
        (``auto_reset=False``) is over, with its ``end_reason``."""
        owner = self.owner.cpu().numpy()
        king = self.king.cpu().numpy()
        to_move = self.to_move.tolist()
        ply = self.ply.tolist()
        status = self.status.cpu().numpy()
        top = self.top.tolist()
        places = self.places.cpu().numpy()
        stall = self.stall.tolist()
        best = self.best.cpu().numpy()
        end = self.end_reason.tolist()
        g = self.geometry
        out = []
        # the text gives variant, seats and the seat to move (which becomes the game's first_seat)
        options = {k: v for k, v in self.rules.to_dict().items() if k not in ("variant", "num_players", "first_seat")}
        for b in range(self.batch_size):
            chars = ["."] * self.H
            for h in np.flatnonzero(owner[b] >= 0):
                s = int(owner[b, h])
                chars[h] = "ABCDEF"[s] if king[b, h] else "012345"[s]
            rows, i = [], 0
            for w in g.row_widths:
                rows.append("".join(chars[i : i + w]))
                i += w
            # the ply count set after, not read from the text: a game loaded at the largest ply a position may
            # start at (12 digits) is past it after a move, and from_position refused its own batch's game
            text = f"{self.rules.variant} {self.n} {'/'.join(rows)} {to_move[b]}"
            game = Game.from_position(text, **options)
            game.ply = ply[b]
            # from_position hands the turn on from a seat it reads as finished (the text cannot say that a
            # seat resigned, or finished under anti-blocking): in an ended game that seat can be the batch's
            game.to_move = to_move[b]
            game._places = [int(p) if p else None for p in places[b]]
            game._status = [_STATUS[st] for st in status[b]]
            game._top = top[b]
            game._bottom = self.n - int((status[b] == 2).sum())  # resigned seats took the last places
            game._stall = stall[b]
            if self.rules.stall_limit:
                game._best = [_key_tuple(int(k)) for k in best[b]]
            # the text cannot say that a seat resigned: from_position may have read a resigned
            # seat whose goal filled up as finished and ended the game there; the batch's game goes on
            # (unless it ended: auto_reset=False)
            game.end_reason = END_REASONS[end[b]] if end[b] else None
            game._initial_passes = []
            game._gen.clear()
            game._repetitions.clear()
            game._record_position()  # counted once, as _setup does for a game that goes on
            out.append(game)
        return out

    @_outside_inference_mode
    def from_games(self, games: Iterable[Game]) -> None:
        """Load ``batch_size`` scalar games (same rules but for ``first_seat``) into the batch, their
        repetition counts, stall counters, places and status included.  Games that are over are refused,
        except with ``auto_reset=False``, where their slots are loaded ended (``ended``) until reset."""
        games = list(games)
        if len(games) != self.batch_size:
            raise ValueError(f"from_games needs {self.batch_size} games, got {len(games)}")
        H, n, P = self.H, self.n, self.P
        B = self.batch_size
        owner = np.full((B, H), -1, dtype=np.int8)
        king = np.zeros((B, H), dtype=bool)
        pieces = np.full((B, n, P), H, dtype=np.int64)
        hashes = []
        rep_lists = []
        for b, game in enumerate(games):
            if not isinstance(game, Game):
                raise ValueError(f"games[{b}] is not a halma_env.Game")
            theirs, ours = game.rules.to_dict(), self.rules.to_dict()  # (not rules.replace(first_seat=ours): a
            diff = [k for k in ours if k != "first_seat" and theirs[k] != ours[k]]  # seat 2 fails a 2-seat game)
            if diff:
                given, played = (", ".join(f"{k}={d[k]!r}" for k in diff) for d in (theirs, ours))
                raise ValueError(f"games[{b}] has other rules: {given}, the batch plays {played} "
                                 "(only first_seat may differ)")
            if game.is_over and self.auto_reset:
                raise ValueError(f"games[{b}] is over ({game.end_reason}): an auto_reset batch loads games in play "
                                 "(auto_reset=False loads it as an ended game)")
            for s in range(n):
                holes = game.pieces(s)
                owner[b, holes] = s
                pieces[b, s, : len(holes)] = holes
            for h, cell in enumerate(game.board()):
                if cell is not None and cell[1]:
                    king[b, h] = True
            hashes.append(self._np_hash(owner[b], king[b], game.to_move))
            reps = []
            for (pcs, kings, tm), count in game._repetitions.items():
                o = np.full(H, -1, dtype=np.int8)
                for s, bits in enumerate(pcs):
                    o[self.geometry.holes(bits)] = s
                kk = np.zeros(H, dtype=bool)
                kk[self.geometry.holes(kings)] = True
                reps += [self._np_hash(o, kk, tm)] * count
            rep_lists.append(reps)
        dev = self.device
        self.owner = torch.as_tensor(owner, device=dev)
        self.king = torch.as_tensor(king, device=dev)
        self.pieces = torch.as_tensor(pieces, device=dev)
        self.to_move = torch.tensor([gm.to_move for gm in games], dtype=torch.long, device=dev)
        self.ply = torch.tensor([gm.ply for gm in games], dtype=torch.long, device=dev)
        self.status = torch.tensor([[_STATUS.index(s) for s in gm.status] for gm in games],
                                   dtype=torch.int8, device=dev)
        self.places = torch.tensor([[p or 0 for p in gm.places] for gm in games], dtype=torch.long, device=dev)
        self.top = torch.tensor([gm._top for gm in games], dtype=torch.long, device=dev)
        self.first_seat = torch.tensor([gm.rules.first_seat for gm in games], dtype=torch.long, device=dev)
        self.stall = torch.tensor([gm._stall for gm in games], dtype=torch.long, device=dev)
        if self.rules.stall_limit:
            self.best = torch.tensor([[k[0] * _KEY_SCALE + k[1] for k in gm._best] for gm in games],
                                     dtype=torch.long, device=dev)
        self.hash = torch.tensor(hashes, dtype=torch.long, device=dev)
        width = max(64, max(len(r) for r in rep_lists) * 2)
        hist = np.zeros((B, width if self.rules.repetition_limit else 1), dtype=np.int64)
        if self.rules.repetition_limit:
            for b, reps in enumerate(rep_lists):
                hist[b, : len(reps)] = reps
        self.hist = torch.as_tensor(hist, device=dev)
        self.hist_len = torch.tensor([len(r) if self.rules.repetition_limit else 0 for r in rep_lists],
                                     dtype=torch.long, device=dev)
        self.end_reason = torch.tensor([_CODE[gm.end_reason] if gm.end_reason else 0 for gm in games],
                                       dtype=torch.long, device=dev)
        if self.rules.stall_limit is not None:
            self._assign_all()
        self._bits, self._rows = self._legal_moves(None, self.to_move)
        ended = self.end_reason > 0
        if bool(ended.any()):  # an ended game has no moves
            self._bits[ended] = 0
            self._rows[ended] = H
        self._mask = self._dest = None


def _key_tuple(key: int) -> tuple[int, int]:
    """Int progress key back to ``Progress.key()``'s (-in_goal, distance)."""
    return (key // _KEY_SCALE, key % _KEY_SCALE)


def padded_lists(flags: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, N) bool -> the flagged columns of each row as a padded (B, M) int64 list, ascending, and its
    (B, M) validity; M is the largest count (at least 1: a row with none gets one invalid entry)."""
    counts = flags.sum(1)
    m = max(int(counts.max()) if flags.shape[0] else 0, 1)
    row, col = flags.nonzero(as_tuple=True)  # row-major: ascending columns within a row
    slot = torch.arange(row.shape[0], device=flags.device) - (torch.cumsum(counts, 0) - counts)[row]
    cols = torch.zeros((flags.shape[0], m), dtype=torch.int64, device=flags.device)
    valid = torch.zeros((flags.shape[0], m), dtype=torch.bool, device=flags.device)
    cols[row, slot] = col
    valid[row, slot] = True
    return cols, valid

