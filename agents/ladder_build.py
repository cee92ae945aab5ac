"""Building the difficulty ladder: ``halma ladder`` rates candidate players in a tournament and picks
separated levels for one game's entry of the ladder file (agents/ladder.py reads it; docs/export.md).

``build_entry`` exports ``.pt`` candidates (``_prepare_candidates``), plays the arena's tournament among
all candidates, and gives the levels to candidates that are clearly stronger than the level below
(``separated``, ``pick_levels``); the chosen models are copied next to the ladder file, their manifests
stamped with level and rating.  The command (``add_arguments``, ``run``) rebuilds an entry, or prints
the ladder without candidates (``print_ladder``).  Sites and players that only read the ladder import
agents.ladder, which never imports this module.  Nothing here imports torch, except exporting a ``.pt``
candidate.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import itertools
import json
import math
import os
import shlex
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from agents.ladder import (
    DEFAULT_LADDER,
    LEVELS,
    LadderError,
    _model_file,
    entry_player,
    format_ladder,
    game_key,
    ladder_path,
    load_ladder,
    printable,
    save_ladder,
)
from halma_env import Rules
from halma_env.files import write_atomic
from halma_env.rules import SEAT_COUNTS, VARIANTS, game_name

# "clearly stronger": adjacent levels' openskill mu differ by at least this many combined sigmas,
# sqrt(sigma_lower^2 + sigma_upper^2) (about 98% one-sided if the ratings were normal and independent)
SEPARATION = 2.0


# --- building an entry -----------------------------------------------------------------------


def candidate_player(name: str, seed: int | None = None) -> Any:
    """Tournament factory: bot specs through the registry, ``.onnx`` (with options) through
    ``load_opponent``.  Module level, so spawned arena workers can unpickle it."""
    return entry_player(name, seed=seed)


def separation(lower: Mapping[str, Any], upper: Mapping[str, Any]) -> float:
    """How many combined sigmas ``upper``'s mu lies above ``lower``'s: (mu_u - mu_l) / sqrt(s_l^2 + s_u^2).

    Both are openskill ratings of the same tournament (dicts with ``mu`` and ``sigma``)."""
    combined = math.hypot(lower["sigma"], upper["sigma"])
    diff = upper["mu"] - lower["mu"]
    return diff / combined if combined > 0 else (math.inf if diff > 0 else -math.inf)


def separated(lower: Mapping[str, Any], upper: Mapping[str, Any], min_separation: float = SEPARATION) -> bool:
    """Is ``upper`` clearly stronger than ``lower``: its mu at least ``min_separation`` combined sigmas
    higher (``separation``), and its ordinal (mu - 3 sigma, what leaderboards sort by) higher too."""
    ordinal = lower["mu"] - 3 * lower["sigma"] < upper["mu"] - 3 * upper["sigma"]
    return ordinal and separation(lower, upper) >= min_separation


def pick_levels(ratings: list[dict[str, float]], count: int, min_separation: float = SEPARATION) -> list[int]:
    """Indices (into ``ratings``, dicts with ``mu`` and ``sigma``) of the candidates for up to ``count``
    levels, weakest first, every one ``separated`` from the one below.

    The most levels possible (at most ``count``; fewer when the tournament does not separate that
    many candidates); among those, the choice whose closest adjacent pair is separated best, then
    the widest span of mu, then the weakest candidates (the first choice in order of mu, a tie in mu to the
    candidate given first).  Never empty for a non-empty list."""
    k = len(ratings)
    if count < 1:
        raise ValueError("a ladder needs at least one level")
    if k < 1:
        raise ValueError("no candidates to pick levels from")
    if min_separation < 0:
        raise ValueError(f"min_separation must be >= 0, got {min_separation!r}")
    order = sorted(range(k), key=lambda i: (ratings[i]["mu"], i))
    for size in range(min(count, k), 0, -1):
        best: tuple | None = None
        for combo in itertools.combinations(order, size):
            pairs = list(zip(combo, combo[1:]))
            if not all(separated(ratings[a], ratings[b], min_separation) for a, b in pairs):
                continue
            closest = min((separation(ratings[a], ratings[b]) for a, b in pairs), default=math.inf)
            span = ratings[combo[-1]]["mu"] - ratings[combo[0]]["mu"]
            key = (closest, span)
            if best is None or key > best[0]:
                best = (key, list(combo))
        if best is not None:
            return best[1]
    raise AssertionError("unreachable: one candidate is always a ladder")


RUN_FOLDERS = ("checkpoints", "snapshots")  # a run directory's folders of .pt files (docs/training.md)


def _export_stem(checkpoint: str) -> str:
    """The level a ``.pt`` candidate is exported as (its model: ``VARIANT-SEATS-STEM.onnx``): the file's
    stem, after its run's name when the stem is one that runs write (``last``, ``update_NNNNNN``,
    ``snap_NNNNNN``), the conventional hand-kept ``best``, or starts with a digit: runs/NAME/checkpoints/last.pt ->
    NAME-last, a run's snapshots/snap_000100.pt -> NAME-snap_000100, kept/5m.pt -> kept-5m.  A file named
    by its author keeps its name wherever it lies (agents/checkpoints/star2.pt -> star2)."""
    src = Path(checkpoint).resolve()
    stem = src.stem
    written_by_a_run = stem in ("last", "best") or stem[:1].isdigit() or (
        stem.partition("_")[0] in ("update", "snap") and stem.partition("_")[2].isdigit())
    if written_by_a_run:
        run_dir = next((q.name for q in src.parents if q.name not in RUN_FOLDERS), "")
        return f"{run_dir}-{stem}"
    return stem


class Written:
    """The files a build writes (exports, copies next to the ladder, stamped manifests), so that a build whose
    ladder file is not written changes nothing: the ladder file is the commit point.  ``undo`` removes the
    files it added and the folders it made, puts back the old bytes (and permissions) of the files it rewrote
    and the symbolic links it replaced.  Each file is kept under one name (``_absolute``), however the build
    spelt it: a relative ``--models-dir`` and the ladder's resolved folder name one file twice."""

    def __init__(self) -> None:
        self.added: list[Path] = []
        self.old: dict[Path, tuple[bytes, int]] = {}  # a rewritten file -> its bytes and permission bits
        self.links: dict[Path, str] = {}  # a replaced symbolic link -> what it pointed to
        self.folders: list[list[Path]] = []  # each as folders_to_make lists them, deepest first

    def before_writing(self, path: Path) -> None:
        """Call before ``path`` is written: keeps its bytes (a regular file) or its target (a link, which is
        replaced rather than written through), or marks it as added (nothing there)."""
        path = _absolute(path)
        if path in self.old or path in self.links or path in self.added:
            return
        if path.is_symlink():
            self.links[path] = os.readlink(path)
        elif _is_regular_file(path):
            try:
                self.old[path] = (path.read_bytes(), stat.S_IMODE(os.lstat(path).st_mode))
            except OSError as e:  # (a file we could not put back must not be replaced)
                raise LadderError(f"cannot read {str(path)!r} to keep it until the ladder file is written: "
                                  f"{e.strerror or e}") from None
        else:
            self.added.append(path)

    def before_making(self, folder: Path) -> None:
        from agents.files import folders_to_make

        self.folders.append(folders_to_make(folder))

    @contextlib.contextmanager
    def undone_on_failure(self) -> Iterator[Written]:
        try:
            yield self
        except BaseException:
            self.undo()
            raise

    def undo(self) -> None:
        """Best effort (it runs while another error is on its way): each file on its own."""
        from agents.files import remove_empty_folders

        for path in reversed(self.added):
            with contextlib.suppress(OSError):
                path.unlink()
        for path, (data, mode) in self.old.items():
            with contextlib.suppress(OSError):
                write_atomic(path, data)
                os.chmod(path, mode)  # (write_atomic gives a new file the default permissions)
        for path, target in self.links.items():
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
                os.symlink(target, path)
        for folders in reversed(self.folders):
            remove_empty_folders(folders)
        self.commit()

    def commit(self) -> None:
        """The ladder file is written and names the files: nothing to undo any more."""
        self.added, self.old, self.links, self.folders = [], {}, {}, []


def _absolute(path: Path) -> Path:
    """``path`` made absolute with its folder's links resolved but not its own name's: one name per file for
    ``Written``, and a link in the ladder's folder stays a name in that folder (``_ladder_name``)."""
    return path.parent.resolve() / path.name


def _is_regular_file(path: Path) -> bool:
    """A regular file at ``path`` itself (a link is not: a link planted at a name is replaced, never followed)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def _sha256(path: Path, what: str) -> str:
    from agents.opponent import file_sha256

    try:
        return file_sha256(path)
    except OSError as e:
        raise LadderError(f"cannot read {what} {str(path)!r}: {e.strerror or e}") from None


def _check_export_target(checkpoint: str, model: Path) -> None:
    """Refuse to export ``checkpoint`` over another model (or a manifest without one) at ``model``, as
    ``halma export`` refuses without ``--force`` (``agents.export.replace_problem``): before any game."""
    from agents.export import replace_problem

    if problem := replace_problem(model, checkpoint, _sha256(Path(checkpoint), "checkpoint")):
        raise LadderError(f"candidate {checkpoint!r} would be exported as {str(model)!r}, but {problem}: rename or "
                          "remove that file, or export into another folder with --models-dir DIR")


def _checkpoint_of(model: Path) -> str | None:
    """The ``source.checkpoint_sha256`` of ``model``'s manifest (None without a readable, matching one): two
    exports of one checkpoint are one model, though torch may write their bytes differently."""
    from agents.opponent import OpponentError, read_manifest

    with contextlib.suppress(OpponentError):  # (no readable manifest: not a model this build may replace)
        source = read_manifest(model).get("source")
        if isinstance(source, dict) and isinstance(source.get("checkpoint_sha256"), str):
            return source["checkpoint_sha256"]
    return None


def _check_copies(specs: list[str], base: Path) -> None:
    """Before any game: a model outside the ladder's folder, copied there if it becomes a level, must not
    replace a different model (or a manifest without one), nor another candidate's copy."""
    from agents.opponent import manifest_path, parse_opponent_spec

    planned: dict[Path, tuple[str, str]] = {}  # copy -> (candidate, its model's sha256)
    for c in specs:
        if ".onnx" not in c.lower():
            continue
        given = Path(parse_opponent_spec(c).path)
        if _beside_ladder(given, base) is not None:
            continue
        src = given.resolve()
        target = base / src.name
        digest = _sha256(src, "candidate model")
        if target in planned:
            if planned[target][1] != digest:
                raise LadderError(f"candidates {planned[target][0]!r} and {c!r} would both be copied next to the "
                                  f"ladder as {str(target)!r}: export one under another name first "
                                  "(halma export CHECKPOINT --name NAME)")
            continue
        planned[target] = (c, digest)
        there = _is_regular_file(target)  # (a link planted there is replaced, never followed: write_atomic)
        if (there or _is_regular_file(manifest_path(target))) and not (there and _same_model(target, src, digest)):
            what = ("that file holds another model" if there
                    else f"its manifest {str(manifest_path(target))!r} is there without it")
            raise LadderError(f"candidate {c!r} would be copied next to the ladder as {str(target)!r}, but {what}: "
                              "rename or remove one of them (halma export CHECKPOINT --name NAME exports under "
                              "another name), or build the ladder in another folder (--ladder)")


def _check_each_model_once(candidates: list[str]) -> None:
    """Refuse one model named twice: one file spelt two ways (with the same options), or a checkpoint beside an
    export of it.  It would take two levels, and the export or the copy next to the ladder of one would replace
    the file of the other after the games (the file the ladder names would not be the one that played)."""
    from agents.opponent import parse_opponent_spec

    files: dict[tuple[Path, str], str] = {}  # (resolved file, options) -> candidate
    checkpoints: dict[str, tuple[str, str]] = {}  # checkpoint sha256 -> (candidate, its kind)
    for c in candidates:
        kind = "pt" if c.lower().endswith(".pt") else "onnx" if ".onnx" in c.lower() else None
        if kind is None:  # a bot: the same name twice is refused once the candidates are made
            continue
        path = c if kind == "pt" else parse_opponent_spec(c).path
        key = (Path(path).resolve(), c[len(path):])
        if key in files:
            raise LadderError(f"candidates {files[key]!r} and {c!r} are one model file: name it once")
        files[key] = c
        checkpoint = _sha256(Path(path), "checkpoint") if kind == "pt" else _checkpoint_of(Path(path))
        if checkpoint is None:
            continue
        other, other_kind = checkpoints.setdefault(checkpoint, (c, kind))
        if other_kind != kind:  # (two identical checkpoints, or two exports, are exported or copied apart)
            raise LadderError(f"candidates {other!r} and {c!r} are one model (a checkpoint and an export of it): "
                              "name the export alone (with options, if the ladder should hold it twice)")


def _same_model(target: Path, src: Path, digest: str) -> bool:
    """Is the file at ``target`` the model ``src`` (whose sha256 is ``digest``): the same bytes, or an export of
    the same checkpoint (a rebuild re-exports it into --models-dir, and torch may write other bytes)."""
    if _sha256(target, "model") == digest:
        return True
    checkpoint = _checkpoint_of(target)
    return checkpoint is not None and checkpoint == _checkpoint_of(src)


def _beside_ladder(model: Path, base: Path) -> Path | None:
    """The name in the ladder's folder ``base`` (resolved) of a candidate ``model`` that lies there already,
    else None (it is copied there).  A link in that folder to a file inside it keeps its own name (the loader
    accepts it; resolved, its name would be the link's own target's, and copying onto the link refused);
    one pointing outside is copied, as the loader would refuse it."""
    path = _absolute(model)
    if path.parent == base and path.resolve().is_relative_to(base):
        return path
    resolved = model.resolve()
    return resolved if resolved.parent == base else None


def _prepare_candidates(candidates: list[str], variant: str, seats: int, models_dir: Path, games: int,
                        written: Written | None = None, *, levels: tuple[str, ...] = (),
                        check_dir: Path | None = None) -> list[str]:
    """Export ``.pt`` candidates into ``models_dir`` and check every candidate can play the game, plays in
    ``games`` games, and that there are as many candidates as ``levels``; what the exports write is recorded
    in ``written``.  ``check_dir`` (default ``models_dir``) is the folder whose models an export must not
    replace: a dry run exports into a temporary folder but is refused what the real run would be.

    Every candidate is checked before anything is exported: a bad one leaves no file behind, and neither
    does a bad count (reported after the candidates' own problems).  An export never replaces another
    model: only a file exported from the same checkpoint (``_check_export_target``)."""
    from agents.export import check_level_name, model_file_stem
    from agents.opponent import OnnxPolicy, manifest_path, parse_opponent_spec

    candidates = [c.strip() for c in candidates]
    exported_as: dict[str, str] = {}  # export stem -> its checkpoint
    for c in candidates:
        game = None
        if c.lower().endswith(".pt"):
            from agents.checkpoint import load_checkpoint  # (torch: only a checkpoint candidate needs it)

            data = load_checkpoint(c)
            game = (data["variant"], data["num_players"])
            try:
                stem = check_level_name(_export_stem(c), f"candidate {c!r}: the exported model's level")
                # and the model's whole name, now: export_checkpoint would refuse it after the others were exported
                check_level_name(model_file_stem(variant, seats, stem), f"candidate {c!r}: the exported model's name")
            except ValueError as e:  # (a run name with a space, say): a name of your own goes through halma export
                raise ValueError(f"{e}; export it under a plain name first (halma export CHECKPOINT --level NAME) "
                                 "and give the .onnx") from None
            if stem in exported_as:  # two runs' files of one name must not become one model
                raise LadderError(f"candidates {exported_as[stem]!r} and {c!r} would both be exported as "
                                  f"{model_file_stem(variant, seats, stem)}.onnx: export one under another name first "
                                  "(halma export CHECKPOINT --name NAME)")
            exported_as[stem] = c
        elif ".onnx" in c.lower():
            policy = OnnxPolicy(parse_opponent_spec(c).path)
            game = (policy.variant, policy.num_players)
        if game is not None and game != (variant, seats):
            raise LadderError(f"candidate {c!r} plays {game_name(*game)}, not {variant} with {seats}")
        if c.lower().endswith(".pt"):
            target = check_dir if check_dir is not None else models_dir
            _check_export_target(c, target / f"{model_file_stem(variant, seats, _export_stem(c))}.onnx")
        else:
            candidate_player(c, 0)  # a bad spec or file fails before any game (a .pt's once exported)
    _check_each_model_once(candidates)  # (after each file's own problem: a missing one is named as such)
    if len(candidates) < len(levels):  # after each candidate's own problem: fixing that one comes first
        raise LadderError(f"{len(levels)} levels need at least {len(levels)} candidates, got {len(candidates)} "
                          f"(or name fewer with --levels, e.g. --levels {','.join(levels[:len(candidates)])})")
    _check_everyone_plays(candidates, seats, games)
    written = written if written is not None else Written()
    out = []
    for c in candidates:
        if c.lower().endswith(".pt"):
            from agents.export import export_checkpoint

            stem = _export_stem(c)
            name = model_file_stem(variant, seats, stem)
            written.before_making(models_dir)
            for p in (models_dir / f"{name}.onnx", manifest_path(models_dir / f"{name}.onnx")):
                written.before_writing(p)
            path = export_checkpoint(c, stem, models_dir, name=name)
            print(f"exported {c} -> {path}", file=sys.stderr)
            c = str(path)
            candidate_player(c, 0)
        out.append(c)
    if len(set(out)) != len(out):
        raise LadderError(f"candidates must be distinct, got {out}")
    return out


def _ladder_name(candidate: str, base: Path, copy: bool = True, written: Written | None = None) -> str:
    """How the ladder file refers to a candidate: a model is copied next to the ladder (with its
    manifest) unless it is there already, and named relative to it (``copy=False``: the name it
    would get, nothing copied).  What the copy writes is recorded in ``written``; ``_check_copies``
    made sure before the games that it replaces no other model."""
    from agents.opponent import manifest_path, parse_opponent_spec

    if ".onnx" not in candidate.lower():
        return candidate
    spec = parse_opponent_spec(candidate)
    here = _beside_ladder(Path(spec.path), base)
    if here is None:
        src = Path(spec.path).resolve()
        if copy:  # read, then written through a new temporary file: a link planted at the name is not followed
            written = written if written is not None else Written()
            try:
                blobs = {base / src.name: src.read_bytes(),
                         manifest_path(base / src.name): manifest_path(src).read_bytes()}
            except OSError as e:  # (a read: not the ladder folder's fault)
                raise LadderError(f"cannot read the candidate model {str(e.filename or src)!r} to copy it next to "
                                  f"the ladder: {e.strerror or e}") from None
            written.before_making(base)
            try:
                base.mkdir(parents=True, exist_ok=True)
                for target, data in blobs.items():
                    written.before_writing(target)
                    write_atomic(target, data)
            except OSError as e:  # (a full disk: write_atomic names the file)
                raise _write_failure(e, base) from None
        here = base / src.name
    rest = candidate[len(spec.path):]
    return os.path.relpath(here, base) + rest


def _check_everyone_plays(candidates: list[str], seats: int, games: int) -> None:
    """A candidate without a game has no score (NaN, which no ladder file can hold): refused before the
    tournament, not after it."""
    from agents.arena import cycle_length, schedule

    needed = games_seating_everyone(len(candidates), seats)
    if games < needed:
        left_out = sorted({*range(len(candidates))} - {p for lineup in schedule(len(candidates), seats, games)
                                                         for p in lineup.seats})
        raise LadderError(f"--games {games} leaves {printable(candidates[left_out[0]])} without a game: the schedule "
                          f"seats every one of {len(candidates)} candidates in its first {needed} games; play at "
                          f"least that many (a multiple of {cycle_length(len(candidates), seats)} balances seats "
                          "and starts)")


def games_seating_everyone(players: int, seats: int) -> int:
    """The fewest games of the arena's schedule in which every one of ``players`` plays."""
    from agents.arena import iter_schedule

    seen: set[int] = set()
    for g, lineup in enumerate(iter_schedule(players, seats)):  # a cycle seats everyone: this ends
        seen.update(lineup.seats)
        if len(seen) == players:
            return g + 1
    raise AssertionError("unreachable: the schedule has no end")


def build_entry(candidates: list[str], variant: str, seats: int, games: int, *, seed: int = 0,
                workers: int | None = 1, levels: tuple[str, ...] = LEVELS, path: str | Path | None = None,
                models_dir: str | Path | None = None, time_budget: float | None = None,
                progress: bool = False, status_every: float | None = None, command: str | None = None,
                min_separation: float = SEPARATION, write_models: bool = True,
                written: Written | None = None) -> dict[str, Any]:
    """Play the tournament among ``candidates`` and return the ladder entry (not saved).

    With ``write_models`` the chosen models are copied next to the ladder file and their manifests
    stamped with level and rating; without it (``--dry-run``) nothing outside a temporary
    directory is written: ``.pt`` candidates are exported there, the entry names models as they
    would be named.  No file of another model is replaced: such a name is refused before any game.
    What the build writes is recorded in ``written`` (the caller undoes it if its ladder file cannot
    be written); a build that fails or is interrupted undoes it itself.

    The levels go to candidates that are ``separated`` (``pick_levels``), weakest first.  When the
    tournament separates fewer candidates than ``levels`` names, the entry has only the lowest
    names (easy, medium, ...) and lists the rest under ``missing``: asking for a missing level
    then fails with a LadderError that says so (rebuild with stronger candidates or more games)."""
    from agents.arena import CAP_PER_SEAT, run_tournament

    key = game_key(variant, seats)
    if seats < 2:  # one seat has no opponent: every candidate would rate the same
        raise LadderError(f"a ladder ranks players in matches of 2+ seats, not {seats}; the 1-seat star is the "
                          "solitaire: measure it with halma eval --solo AGENT")
    file = ladder_path(path)
    base = file.resolve().parent
    if file.is_symlink() and base != file.absolute().parent.resolve():
        # the rebuilt file replaces the link (a planted link is never written through), so it would stand in the
        # link's folder while its models, and the other games' entries, name files beside the link's target
        raise LadderError(f"the ladder file {str(file)!r} is a link to {str(file.resolve())!r} in another folder: "
                          "give that file itself as --ladder")
    written = written if written is not None else Written()
    with written.undone_on_failure():  # an error, Ctrl-C or SIGTERM before the entry: nothing it wrote is left
        # --dry-run: .pt candidates are exported to a scratch directory that goes away with the entry
        scratch = contextlib.nullcontext(None) if write_models else tempfile.TemporaryDirectory()
        with scratch as scratch_dir:
            models = Path(models_dir if models_dir is not None else base)
            specs = _prepare_candidates(candidates, variant, seats, Path(scratch_dir or models), games, written,
                                        levels=levels, check_dir=models)  # (a dry run refuses what a run would)
            _check_copies(specs, base)  # before the games, not when a copy would replace a file after them
            rules = Rules(variant, seats)
            max_plies = CAP_PER_SEAT * seats
            # what the games rate: each model's file as it is now (the ladder refuses the level once it changes)
            records = [model_record(spec) for spec in specs]
            result = run_tournament(specs, rules, games, seed=seed, workers=workers, time_budget=time_budget,
                                    max_plies=max_plies, cap_outcome="progress", progress=progress,
                                    factory=candidate_player, status_every=status_every, label="halma ladder")
        ratings = result.ratings()
        stats = result.player_stats()
        rows = []
        for i, spec in enumerate(specs):
            st = stats[i]
            rows.append({"player": spec, "rating": round(ratings[i].ordinal, 3), "mu": round(ratings[i].mu, 3),
                         "sigma": round(ratings[i].sigma, 3), "score": round(st["score"], 3),
                         "mean_place": round(st["mean_place"], 3), "ms_per_move": round(st["ms_per_move"], 2),
                         **records[i]})
        # pick on the unrounded ratings; the file keeps 3 decimals
        exact = [{"mu": r.mu, "sigma": r.sigma} for r in ratings]
        chosen = pick_levels(exact, len(levels), min_separation)
        level_rows = []
        for j, (level, i) in enumerate(zip(levels, chosen)):
            name = _ladder_name(rows[i]["player"], base, copy=write_models, written=written)
            rows[i]["level"] = level
            row = {"level": level, **{k: v for k, v in rows[i].items() if k != "level"}, "player": name}
            if j:
                row["separation"] = round(separation(exact[chosen[j - 1]], exact[i]), 2)
            level_rows.append(row)
            if write_models and ".onnx" in name.lower():
                _stamp_manifest(base, name, level, rows[i]["rating"], key, written)
        summary = result.summary()
        entry = {
            "variant": variant,
            "seats": seats,
            "levels": level_rows,
            "missing": list(levels[len(chosen):]),
            "candidates": sorted(rows, key=lambda r: r["rating"]),
            "tournament": {"games": games, "seed": seed, "rules": rules.to_dict(), "max_plies": max_plies,
                           "cap_outcome": "progress", "time_per_move": time_budget,
                           "finish_rate": round(summary["finish_rate"], 3),
                           "mean_plies": round(summary["mean_plies"], 1),
                           "elapsed_s": round(summary["elapsed_s"], 1), "rating": "openskill Plackett-Luce ordinal "
                           "(mu - 3 sigma), as halma eval prints it",
                           "separation": f"adjacent levels: mu at least {min_separation:g} x sqrt(sigma_lower^2 + "
                           "sigma_upper^2) apart, ordinals increasing"},
            "command": command or "",
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        if not entry["missing"]:
            del entry["missing"]
        return entry


def model_record(candidate: str) -> dict[str, str]:
    """What a ladder row records of a candidate that is an exported model (``agents.ladder.MODEL_RECORD``): the
    sha256 of its file and the ``source.checkpoint_sha256`` of its manifest, when it names one; nothing for a bot.
    ``agents.ladder.check_rated_model`` compares them with the model a level loads."""
    from agents.opponent import is_sha256

    model = _model_file(candidate)
    if model is None:
        return {}
    record = {"model_sha256": _sha256(Path(model), "candidate model")}
    checkpoint = _checkpoint_of(Path(model))
    if checkpoint is not None and is_sha256(checkpoint):  # (what a ladder file may hold)
        record["checkpoint_sha256"] = checkpoint
    return record


def _stamp_manifest(base: Path, name: str, level: str, rating: float, key: str,
                    written: Written | None = None) -> None:
    """Record the ladder's level and rating in an exported model's manifest (its old bytes kept in ``written``)."""
    from agents.export import LADDER_RATING_SOURCE  # (what a re-export of the same checkpoint keeps)
    from agents.opponent import manifest_path, parse_opponent_spec, read_manifest, write_manifest

    p = base / parse_opponent_spec(name).path
    m = read_manifest(p)
    m.update(level=level, rating=rating,
             rating_source=f"{LADDER_RATING_SOURCE} ({key}, {dt.date.today().isoformat()})")
    if written is not None:
        written.before_writing(manifest_path(p))
    try:
        write_manifest(p, m)  # (through write_atomic: never through a link planted in the ladder's folder)
    except OSError as e:
        raise _write_failure(e, manifest_path(p)) from None


def _write_failure(e: OSError, path: Path) -> LadderError:
    """A build's model or manifest that could not be written (``path`` unless the error names the file): the
    build takes back what it wrote (``build_entry``), and no entry is written."""
    where = Path(e.filename) if e.filename else path
    return LadderError(f"cannot write {str(where)!r} in the folder {str(where.parent)!r}: {e.strerror or e} (no "
                       "ladder entry was written; the files this build wrote were taken back)")


# --- the command -----------------------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("candidates", nargs="*", metavar="CANDIDATE",
                   help="bot specs (greedy:noise=0.25, search:depth=2,time=none), checkpoints (.pt, exported "
                        "first) and exported models (.onnx, options after ':'); none: print the ladder")
    # None = not given: printing the ladder (no candidates) refuses the tournament's flags instead of ignoring them
    p.add_argument("--variant", default=None, choices=VARIANTS,
                   help="the game of the tournament (default star); without candidates, print only its entries")
    p.add_argument("--seats", type=int, default=None,
                   help="seats of the tournament (default 2); without candidates, print only that seat count")
    p.add_argument("--games", type=int, default=None,
                   help="tournament games (default: two full seat/start cycles of the arena schedule)")
    p.add_argument("--levels", default=None,
                   help=f"level names, weakest first (default {','.join(LEVELS)})")
    p.add_argument("--seed", type=int, default=None, help="tournament seed (default 0)")
    p.add_argument("--workers", type=int, default=None, help="parallel game processes (default 1)")
    p.add_argument("--time-per-move", type=float, default=None, metavar="SECONDS",
                   help="per-move budget given to the players (default: their own settings)")
    p.add_argument("--ladder", default=None, metavar="FILE",
                   help=f"ladder file (default $HALMA_LADDER or the shipped {DEFAULT_LADDER.name})")
    p.add_argument("--models-dir", default=None, metavar="DIR",
                   help="where .pt candidates are exported (default: next to the ladder file)")
    p.add_argument("--separation", type=float, default=None, metavar="Z",
                   help=f"adjacent levels' mu must differ by Z combined sigmas (default {SEPARATION:g}); levels "
                        "that no candidate fills clearly are left out and reported")
    p.add_argument("--dry-run", action="store_true",
                   help="print the new entry; write nothing (neither the ladder nor models next to it)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress: no bar on a terminal, no line a minute where stderr is not one")
    p.add_argument("--json", action="store_true",
                   help="print JSON instead of tables: the new entry (as the ladder file stores it) after a "
                        "tournament, or the ladder file's document (its entries of --variant/--seats) without one")


def check_writable(path: Path) -> None:
    """Raise ``LadderError`` unless the ladder file ``path`` can be written (before the tournament).

    The shipped ladder is rebuilt only in the source tree: in an installed package a rebuild would
    change what every user of that environment plays, a reinstall would undo it, and ``pip uninstall``
    would leave the models it wrote behind."""
    from agents.files import from_source_checkout, output_problem

    if path.resolve() == DEFAULT_LADDER and not from_source_checkout():
        raise LadderError(f"the shipped ladder {str(path)!r} is part of the installed package; write a ladder of "
                          "your own with --ladder FILE (its models go next to it) and play it with "
                          "HALMA_LADDER=FILE (halma play, halma eval and the environments read it)")
    problem = output_problem(path, "the ladder file")
    if problem is not None:
        raise LadderError(problem)


TOURNAMENT_FLAGS = ("games", "levels", "seed", "workers", "time_per_move", "models_dir", "separation", "dry_run")
TOURNAMENT_DEFAULTS = {"variant": "star", "seats": 2, "levels": ",".join(LEVELS), "seed": 0, "workers": 1,
                       "separation": SEPARATION}


def print_ladder(args: argparse.Namespace, path: Path, data: dict[str, Any]) -> None:
    """``halma ladder`` without candidates: the ladder, or the entries of ``--variant``/``--seats``."""
    from agents.cli import flags_given

    given = flags_given(args, TOURNAMENT_FLAGS)
    if given:
        several = len(given) > 1
        raise LadderError(f"{', '.join(given)} only appl{'y' if several else 'ies'} to a tournament: name the "
                          f"CANDIDATEs to rate, or drop {'them' if several else 'it'} to print the ladder")
    games = data["games"]
    if args.variant is not None or args.seats is not None:
        if args.variant is not None and args.seats is not None:
            game_key(args.variant, args.seats)
        elif args.seats is not None and not any(args.seats in counts for counts in SEAT_COUNTS.values()):
            counts = "; ".join(f"{v} {', '.join(map(str, c))}" for v, c in SEAT_COUNTS.items())
            raise LadderError(f"--seats {args.seats}: no game is played by {args.seats} seats ({counts})")
        games = {key: entry for key, entry in games.items()
                 if (args.variant is None or key.rsplit("-", 1)[0] == args.variant)
                 and (args.seats is None or key.rsplit("-", 1)[1] == str(args.seats))}
        if not games:
            wanted = (f"{args.seats}-seat" if args.variant is None else
                      args.variant if args.seats is None else f"{args.variant}-{args.seats}")
            have = ", ".join(data["games"]) or "none"
            raise LadderError(f"ladder {str(path)!r} has no {wanted} entry; it has {have}")
    if args.json:
        print(json.dumps({**data, "games": games}, indent=2))
        return
    print(f"ladder {path}: ratings are openskill ordinals within each game\n")
    print(format_ladder({**data, "games": games}))


def run(args: argparse.Namespace) -> int:
    from agents import files
    from agents.arena import MAX_GAMES, STATUS_EVERY, cycle_length

    written = Written()  # what the build writes: undone unless the ladder file is written (the commit point)
    try:
        path = ladder_path(args.ladder)
        data = load_ladder(args.ladder, missing_ok=bool(args.candidates))  # a rebuild may start a new file
        if not args.candidates:
            print_ladder(args, path, data)
            return 0
        for name, default in TOURNAMENT_DEFAULTS.items():
            if getattr(args, name) is None:
                setattr(args, name, default)
        from agents.export import check_level_name
        from agents.player import check_time

        game_key(args.variant, args.seats)
        levels = tuple(x.strip() for x in args.levels.split(","))
        for level in levels:
            check_level_name(level, f"--levels {args.levels!r}: a level")  # it names files and opponents
        if len(set(levels)) != len(levels):
            raise LadderError(f"--levels must name distinct levels, got {args.levels!r}")
        if args.time_per_move is not None:
            check_time("--time-per-move", args.time_per_move)
        games = args.games if args.games is not None else 2 * cycle_length(len(args.candidates), args.seats)
        if not 1 <= games <= MAX_GAMES:
            raise LadderError(f"--games must be 1..{MAX_GAMES:,}, got {games}")
        if args.workers < 1:
            raise LadderError(f"--workers must be >= 1, got {args.workers}")
        if not (math.isfinite(args.separation) and args.separation >= 0):  # inf: no level could ever be placed
            raise LadderError(f"--separation must be a finite number >= 0, got {args.separation}")
        if not args.dry_run:
            check_writable(path)  # before the tournament, not after it
        command = "halma ladder " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if sys.argv[1:2] == ["ladder"] \
            else f"halma ladder --variant {args.variant} --seats {args.seats} --games {games} --seed {args.seed} " \
                 + " ".join(shlex.quote(c) for c in args.candidates)
        entry = build_entry(args.candidates, args.variant, args.seats, games, seed=args.seed, workers=args.workers,
                            levels=levels, path=args.ladder, models_dir=args.models_dir,
                            time_budget=args.time_per_move, progress=not args.quiet and files.stderr_is_terminal(),
                            status_every=None if args.quiet or files.stderr_is_terminal() else STATUS_EVERY,
                            command=command,
                            min_separation=args.separation, write_models=not args.dry_run, written=written)
    except ValueError as e:  # LadderError, OpponentError, CheckpointError (build_entry took back what it wrote)
        print(f"halma ladder: error: {e}", file=sys.stderr)
        return 2
    status = 1
    try:
        status = _save(args, path, entry, levels, games, written)
    finally:
        # no ladder file written (an error, Ctrl-C): the models it would name go too; but a signal that lands
        # between the file's rename and the commit must not take back what the file on disk now names
        if status != 0 and not _holds_entry(args.ladder, game_key(args.variant, args.seats), entry):
            written.undo()
    return status


def _holds_entry(ladder: str | None, key: str, entry: dict[str, Any]) -> bool:
    """Whether the ladder file on disk holds ``entry`` as its ``key`` game's (the build's commit point)."""
    try:
        return load_ladder(ladder, missing_ok=True)["games"].get(key) == json.loads(json.dumps(entry))
    except (LadderError, ValueError, OSError):
        return False


def _save(args: argparse.Namespace, path: Path, entry: dict[str, Any], levels: tuple[str, ...], games: int,
          written: Written) -> int:
    """Write the new entry into the ladder file, then print it: ``run``'s part after the tournament, whose
    failure (the caller then undoes the build's files) is an error naming the file, and its status 2.  The file
    is written before anything is printed, so a failing stdout (a closed pipe, a full disk) loses no tournament."""
    key = game_key(args.variant, args.seats)
    problem = None if args.dry_run else _write_entry(args, path, key, entry, written)
    if args.json:
        print(json.dumps(entry, indent=2))
    else:
        print(format_tournament(key, entry, games, args.seed))
    if entry.get("missing"):
        print(f"\nonly {len(entry['levels'])} of {len(levels)} levels are clearly separated (mu {args.separation:g} "
              f"combined sigmas apart); missing: {', '.join(entry['missing'])}.  Add a stronger or weaker "
              "candidate, or play more games.", file=sys.stderr)
    if args.dry_run:
        if not args.json:  # --json printed it already
            print("\n" + json.dumps(entry, indent=2))
        return 0
    if problem:
        print(f"halma ladder: error: {problem}", file=sys.stderr)
        return 2
    print(f"\nwrote the {key} entry to {ladder_path(args.ladder)}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _write_entry(args: argparse.Namespace, path: Path, key: str, entry: dict[str, Any], written: Written) -> str | None:
    """Write ``entry`` as the ladder file's ``key`` game and commit the build's files; -> None, or why nothing
    was written."""
    try:
        data = load_ladder(args.ladder, missing_ok=True)  # again: another rebuild may have written meanwhile
    except LadderError as e:  # (someone else's write made it unreadable: it is theirs to fix, not ours to replace)
        return f"{e}; it changed during the tournament, so the {key} entry was not written"
    data = {**data, "games": {**data["games"], key: entry}}
    try:
        save_ladder(data, args.ladder)
    except OSError as e:
        return f"cannot write the ladder file {str(path)!r}: {e.strerror or e}"
    except ValueError as e:  # a LadderError from the check, or a number JSON cannot hold: nothing was written
        return f"cannot write the ladder file {str(path)!r}: {e}"
    written.commit()  # (a failure to print what follows must not take back the models the file now names)
    return None


def format_tournament(key: str, entry: dict[str, Any], games: int, seed: int) -> str:
    """A new ladder entry's tournament as a markdown table, strongest candidate first."""
    lines = [f"### {key}: {games} games, seed {seed}\n",
             "| candidate | rating | mu ± sigma | score | mean place | ms/move | level | separation |",
             "|---|---|---|---|---|---|---|---|"]
    sep = {lv["level"]: lv.get("separation") for lv in entry["levels"]}
    for r in reversed(entry["candidates"]):
        z = sep.get(r.get("level"))
        lines.append(f"| {r['player']} | {r['rating']:.2f} | {r['mu']:.2f} ± {r['sigma']:.2f} | {r['score']:.2f} | "
                     f"{r['mean_place']:.2f} | {r['ms_per_move']:.1f} | {r.get('level') or ''} | "
                     f"{'' if z is None else f'{z:.2f}'} |")
    return "\n".join(lines)
