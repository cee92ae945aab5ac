"""Game records: JSON round trips, atomic save/load, replay with checked outcome, named errors."""

from __future__ import annotations

import functools
import gc
import json
import os
import random
import re
import stat
from pathlib import Path

import numpy as np
import pytest
from engine_helpers import position

from halma_env import Game, GameRecord, RecordError, Rules, load_record
from halma_env.game import random_playout
from halma_env.records import FORMAT, VERSION


def _played(variant: str = "star", seats: int = 3, plies: int = 40, seed: int = 0, **options) -> Game:
    game = Game(Rules(variant, seats, **options))
    random_playout(game, random.Random(seed), plies)
    return game


def test_round_trip_and_replay() -> None:
    game = _played()
    game.resign(1)
    random_playout(game, random.Random(9), 15)
    record = GameRecord.from_game(game, players=["greedy", "random", "me"], metadata={"event": "test", "round": 2})
    assert record.start is None
    assert record.events[40] == "resign:1" and len(record.events) == 56
    text = record.to_json()
    doc = json.loads(text)
    assert doc["format"] == FORMAT and doc["version"] == VERSION
    assert doc["rules"] == Rules("star", 3).to_dict() and doc["num_players"] == 3
    assert doc["players"] == ["greedy", "random", "me"] and doc["metadata"] == {"event": "test", "round": 2}
    again = GameRecord.from_json(text)
    assert again == record
    replayed = again.replay()
    assert replayed.position() == game.position()
    assert replayed.places == game.places and replayed.end_reason == game.end_reason
    assert replayed.history == game.history, "passes are recreated by the replay"


def test_finished_game_outcome_is_stored_and_checked() -> None:
    game = Game(Rules("star", 2))
    game.play("113-104")
    game.resign(1)
    record = GameRecord.from_game(game)
    assert record.places == (1, 2) and record.end_reason == "resign"
    assert record.replay().is_over
    doc = record.to_dict()
    doc["places"] = [2, 1]
    with pytest.raises(RecordError, match="stored outcome places=\\[2, 1\\].*replay gives places=\\[1, 2\\]"):
        GameRecord.from_dict(doc).replay()
    doc = record.to_dict()
    doc["end_reason"] = "move_limit"
    with pytest.raises(RecordError, match="end_reason='move_limit'"):
        GameRecord.from_dict(doc).replay()
    doc = record.to_dict()
    doc["final_position"] = Game(Rules("star", 2)).position()
    with pytest.raises(RecordError, match="final position"):
        GameRecord.from_dict(doc).replay()


@pytest.mark.parametrize(
    ("variant", "seats", "options"),
    [("star", 1, {}), ("star", 6, {}), ("diamond", 3, {}), ("halma16", 2, {}), ("halma16", 4, {"move_limit": 30}),
     ("star", 4, {"first_seat": 2, "play_to_end": False, "stall_limit": 20, "limit_outcome": "progress"})],
)
def test_every_variant_records_and_replays(variant: str, seats: int, options: dict) -> None:
    game = _played(variant, seats, 60, seed=seats, **options)
    record = GameRecord.from_game(game)
    assert record.start is None, "the standard start (with first_seat) is not stored"
    assert GameRecord.from_json(record.to_json()).replay().position() == game.position()


def test_non_standard_start_is_stored() -> None:
    text = position("star", 2, {h: "0" for h in range(9)} | {18: "0", 100: "1"}, to_move=0, ply=12)
    game = Game.from_position(text, move_limit=40)
    game.play("18-9")
    assert game.is_over
    record = GameRecord.from_game(game)
    assert record.start == text and record.rules.move_limit == 40
    replayed = GameRecord.from_json(record.to_json()).replay()
    assert replayed.position() == game.position() and replayed.places == [1, 2] and replayed.ply == 13
    doc = record.to_dict()
    doc["start"] = "star 2 nonsense 0"
    with pytest.raises(RecordError, match="start position: board field"):
        GameRecord.from_dict(doc).replay()
    doc["start"] = Game(Rules("star", 3)).position()
    with pytest.raises(RecordError, match="start position is star with 3 seats"):
        GameRecord.from_dict(doc).replay()


def test_partial_replay_games_and_positions() -> None:
    game = _played("diamond", 2, 25, seed=4)
    record = GameRecord.from_game(game)
    games = list(record.games())
    positions = list(record.positions())
    assert len(games) == len(positions) == len(record.events) + 1
    assert games[0].position() == Game(Rules("diamond", 2)).position()
    assert games[-1].position() == game.position()
    for k in (0, 1, 7, 25):
        assert record.replay(upto=k).position() == positions[k] == games[k].position()
    games[3].play(games[3].legal_moves()[0])  # the yielded games are independent copies
    assert list(record.positions())[3] == positions[3]
    assert list(record.games(upto=2))[-1].position() == positions[2]
    for bad in (-1, 26, "3", True):
        with pytest.raises(ValueError, match="upto"):
            record.replay(upto=bad)


def test_illegal_move_names_the_first_bad_event_and_its_index() -> None:
    record = GameRecord.from_game(_played("star", 2, 10, seed=1))
    doc = record.to_dict()
    doc["events"][4] = "60-61"
    doc["events"][6] = "0-1"
    with pytest.raises(RecordError, match="event 4 \\('60-61'\\) is an illegal move: no piece on hole 60"):
        GameRecord.from_dict(doc).replay()
    # games() stops at the same event, after yielding the positions before it
    seen = []
    with pytest.raises(RecordError, match="event 4"):
        for g in GameRecord.from_dict(doc).games():
            seen.append(g)
    assert len(seen) == 5
    doc = record.to_dict()
    doc["events"][2] = "resign:1"
    doc["events"][3] = "resign:1"
    with pytest.raises(RecordError, match="event 3 \\('resign:1'\\) is an illegal resignation: the game is over"):
        GameRecord.from_dict(doc).replay()
    doc = record.to_dict()
    doc["events"].append("resign:5")
    with pytest.raises(RecordError, match="event 10 .*illegal resignation: seat must be 0..1"):
        GameRecord.from_dict(doc).replay()


def _doc() -> dict:
    return GameRecord.from_game(_played("star", 2, 6, seed=2), players=["a", "b"]).to_dict()


CORRUPT = {
    "missing key": (lambda d: d.pop("events"), "missing key\\(s\\) events"),
    "unknown key": (lambda d: d.update(moves=[]), "unknown key\\(s\\) moves"),
    "format": (lambda d: d.update(format="chess.pgn"), "format must be 'halma_env.record'"),
    "newer version": (lambda d: d.update(version=VERSION + 1), f"version {VERSION + 1} is newer"),
    "version type": (lambda d: d.update(version="1"), "version must be a positive integer"),
    "rules type": (lambda d: d.update(rules="star"), "rules: rules must be a mapping of option names"),
    "rules option": (lambda d: d["rules"].update(speed=2), "rules: unknown rule option\\(s\\): speed"),
    "rules value": (lambda d: d["rules"].update(move_limit=-2), "rules: move_limit"),
    "num_players": (lambda d: d.update(num_players=3), "num_players is 3 but the rules say 2"),
    "num_players float": (lambda d: d.update(num_players=2.0), "num_players is 2.0 but the rules say 2"),
    "rules empty": (lambda d: d.update(rules={}), "rules: missing option\\(s\\) variant, num_players, anti_blocking"),
    "rules option missing": (lambda d: d["rules"].pop("move_limit"), "rules: missing option\\(s\\) move_limit$"),
    "event newline": (lambda d: d["events"].__setitem__(0, "113-104\n"), "event 0 is '113-104\\\\n'"),
    "event spaces": (lambda d: d["events"].__setitem__(0, " 113-104"), "event 0 is ' 113-104'"),
    "event zero padded": (lambda d: d["events"].__setitem__(0, "0113-0104"), "event 0 is '0113-0104'"),
    "resign not ascii": (lambda d: d["events"].append("resign:\u0661"), "event 6 is 'resign:\u0661'"),
    "events type": (lambda d: d.update(events="113-104"), "events must be a list"),
    "event type": (lambda d: d["events"].__setitem__(1, 7), "event 1 is 7"),
    "event text": (lambda d: d["events"].__setitem__(2, "pass"), "event 2 is 'pass'"),
    "places type": (lambda d: d.update(places="1,2"), "places must be a list"),
    "places length": (lambda d: d.update(places=[None]), "places must have 2 entries"),
    "place value": (lambda d: d.update(places=[1, 3]), "a place is an integer 1..2 or null, got 3"),
    "place zero": (lambda d: d.update(places=[0, 1]), "a place is an integer 1..2 or null, got 0"),
    "place bool": (lambda d: d.update(places=[True, None]), "a place is an integer 1..2 or null, got True"),
    "end_reason": (lambda d: d.update(end_reason="checkmate"), "end_reason must be null or one of"),
    "start type": (lambda d: d.update(start=5), "start must be a position text or null"),
    "players count": (lambda d: d.update(players=["a"]), "players must be 2 names"),
    "players type": (lambda d: d.update(players="ab"), "players must be a list of names or null"),
    "metadata type": (lambda d: d.update(metadata=[1]), "metadata must be an object"),
}


@pytest.mark.parametrize("kind", sorted(CORRUPT))
def test_corrupt_record_names_the_problem(kind: str) -> None:
    change, words = CORRUPT[kind]
    doc = _doc()
    change(doc)
    with pytest.raises(RecordError, match=words):
        GameRecord.from_json(json.dumps(doc))
    assert issubclass(RecordError, ValueError)


def test_a_record_document_may_hold_its_rules_as_any_mapping() -> None:
    """``Rules.from_dict`` reads any mapping: a document built in Python whose rules are a ``MappingProxyType``
    loads (it was refused, "rules must be a dict"), and one missing an option is still refused by name, not
    filled from the defaults (the record's own check looked for a dict only)."""
    from types import MappingProxyType

    doc = _doc()
    expected = GameRecord.from_dict(doc)
    doc["rules"] = MappingProxyType(dict(doc["rules"]))
    assert GameRecord.from_dict(doc) == expected
    partial = dict(doc["rules"])
    del partial["move_limit"]
    doc["rules"] = MappingProxyType(partial)
    with pytest.raises(RecordError, match=r"rules: missing option\(s\) move_limit$"):
        GameRecord.from_dict(doc)


def test_not_json_and_not_an_object() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        GameRecord.from_json("{'format': ")
    with pytest.raises(ValueError, match="a game record is a JSON object, got list"):
        GameRecord.from_json("[1, 2]")
    with pytest.raises(ValueError, match="metadata is not JSON-serialisable"):
        GameRecord.from_game(Game(), metadata={"f": object()})
    with pytest.raises(ValueError, match="players must be 2 names"):
        GameRecord.from_game(Game(), players=["only one"])
    # JSON would write the key 1 as "1" and read back a different record: keys must be strings
    with pytest.raises(RecordError, match="metadata must be an object with string keys"):
        GameRecord.from_game(Game(), metadata={1: "one"})


def test_duplicate_keys_are_refused() -> None:
    text = json.dumps(_doc())
    with pytest.raises(RecordError, match="key 'events' appears twice"):
        GameRecord.from_json(text[:-1] + ', "events": []}')
    with pytest.raises(RecordError, match="key 'move_limit' appears twice"):
        GameRecord.from_json(text.replace('"move_limit": null', '"move_limit": null, "move_limit": 5'))


def test_a_number_too_long_for_int_is_a_record_error() -> None:
    """Python's int() refuses more than 4300 digits with a plain ValueError: the record names it."""
    text = json.dumps(_doc()).replace('"version": 1', '"version": ' + "9" * 5000)
    with pytest.raises(RecordError, match="a number in it is far too long"):
        GameRecord.from_json(text)


def test_start_must_agree_with_first_seat() -> None:
    seat1 = Game(Rules("star", 2)).position().split(" ")
    seat1[3] = "1"
    doc = GameRecord.from_game(Game(Rules("star", 2))).to_dict()
    doc["start"] = " ".join(seat1)
    doc["final_position"] = None
    with pytest.raises(RecordError, match="start position has seat 1 to move, but rules.first_seat is 0"):
        GameRecord.from_dict(doc).replay()
    # a game loaded with seat 1 to move has first_seat 1: its record replays
    game = Game.from_position(" ".join(seat1[:3] + ["1", "5"]))
    game.play("7-16")
    record = GameRecord.from_json(GameRecord.from_game(game).to_json())
    assert record.rules.first_seat == 1 and record.replay().position() == game.position()


def test_load_record_file_errors_are_record_errors(tmp_path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(RecordError, match="^" + re.escape(f"game record '{missing}' cannot be read: No such file or "
                                                          "directory") + "$"):
        load_record(missing)
    with pytest.raises(RecordError, match="^" + re.escape(f"game record '{tmp_path}' is not a regular file") + "$"):
        load_record(tmp_path)
    # a FIFO (opening it would wait for a writer) and a device (/dev/zero would fill the memory)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for special in (fifo, Path("/dev/zero")):
        with pytest.raises(RecordError, match="^" + re.escape(f"game record '{special}' is not a regular file") + "$"):
            load_record(special)
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(json.dumps(_doc() | {"players": ["Jos\u00e9", "b"]}, ensure_ascii=False).encode("latin-1"))
    with pytest.raises(RecordError, match="^" + re.escape(f"game record '{latin1}' is not UTF-8 text: 'utf-8' codec")):
        load_record(latin1)
    # a name with a control character is shown escaped (an escape sequence would reach the terminal)
    escaped = tmp_path / "a\x1b[31mb.json"
    with pytest.raises(RecordError, match=r"^game record '.*/a\\x1b\[31mb\.json' cannot be read: No such file"):
        load_record(escaped)
    with pytest.raises(RecordError, match=r"^game record '.*/missing\.json' cannot be read: No such file"):
        load_record(bytes(missing))  # a bytes path, as os functions take (shown decoded)


def test_save_errors_name_the_path_asked_for(tmp_path) -> None:
    record = GameRecord.from_game(Game())
    with pytest.raises(FileNotFoundError, match=re.escape(f"no directory to save in: '{tmp_path / 'nope'}'")):
        record.save(tmp_path / "nope" / "g.json")
    with pytest.raises(IsADirectoryError, match=re.escape(f"cannot save over a directory: '{tmp_path}'")):
        record.save(tmp_path)
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind
    # a FIFO (or, as root, /dev/null: a fuzzing review's `save /dev/null` made it a regular file) is left as it is
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match=re.escape(f"game record: it is a FIFO, not a regular file, and saving would "
                                                f"replace it: '{fifo}'")):
        record.save(fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and [p.name for p in tmp_path.iterdir()] == ["pipe.json"]


def test_save_is_atomic_and_load_reads_it_back(tmp_path) -> None:
    record = GameRecord.from_game(_played("halma16", 2, 30, seed=3), players=["x", "y"], metadata={"k": [1, 2]})
    path = tmp_path / "game.json"
    path.write_text("old contents")
    record.save(path)
    assert load_record(path) == record
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.json"], "no temporary file left behind"
    record.save(str(path))
    assert load_record(str(path)).replay().position() == record.final_position
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(RecordError, match="bad.json.*not valid JSON"):
        load_record(bad)
    with pytest.raises(OSError):
        record.save(tmp_path / "missing-dir" / "g.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "game.json"]


def test_start_with_automatic_passes_replays_them() -> None:
    """Seat 1 cannot move in the loaded position: the record keeps seat 1 to move, so the replay
    has the same opening pass."""
    pieces = {0: "1", 1: "0", 2: "0", 3: "0", 5: "0", 60: "0"}
    text = position("star", 2, pieces, to_move=1)
    game = Game.from_position(text)
    game.play("60-61")
    record = GameRecord.from_game(game)
    assert record.start == text + " 0"
    replayed = record.replay()
    assert replayed.history == game.history and replayed.position() == game.position()


def test_pathological_json_and_overlong_numbers_are_record_errors() -> None:
    """Deeply nested JSON (Python's decoder recurses) and a resigning seat of more digits than
    int() converts are RecordErrors like any other corrupt record."""
    with pytest.raises(RecordError, match="not valid JSON"):
        GameRecord.from_json("[" * 100_000 + "]" * 100_000)
    doc = _doc()
    doc["events"].append("resign:" + "9" * 5000)
    with pytest.raises(RecordError, match="event 6 .* is an illegal resignation: seat"):
        GameRecord.from_dict(doc).replay()
    doc = _doc()
    doc["events"].append("9" * 5000 + "-1")
    with pytest.raises(RecordError, match="event 6 .* is an illegal move: a move's hole number is far too long"):
        GameRecord.from_dict(doc).replay()


def test_records_are_strict_json() -> None:
    """NaN and infinities are not JSON (other readers refuse them): metadata holding them is refused
    when the record is made, so that to_json() always writes standard JSON."""
    for bad in (float("nan"), float("inf"), [1.0, float("-inf")]):
        with pytest.raises(RecordError, match="metadata is not JSON-serialisable"):
            GameRecord.from_game(Game(), metadata={"score": bad})
    text = json.dumps(_doc() | {"metadata": {"score": float("nan")}})
    assert "NaN" in text
    with pytest.raises(RecordError, match="metadata is not JSON-serialisable"):
        GameRecord.from_json(text)
    record = GameRecord.from_game(Game(), metadata={"score": 0.5})
    assert json.loads(record.to_json(), parse_constant=lambda c: pytest.fail(c)) == record.to_dict()


def _ended_games() -> dict[str, Game]:
    """One game ended in each way the engine ends a game (docs/rules.md), by its end reason."""
    from halma_env.board import star_tip

    games = {}
    finished = Game.from_position(position("star", 2, {h: "0" for h in range(9)} | {18: "0", 100: "1"}))
    finished.play("18-9")
    games["finished"] = finished
    # a loaded position in which seat 0 already meets its goal: over at once without play_to_end
    games["first_finish"] = Game.from_position(
        position("star", 3, {**{h: "0" for h in range(10)}, 60: "1", 110: "1", 61: "2"}, to_move=1),
        play_to_end=False,
    )
    resign = Game(Rules("star", 2))
    resign.resign(0)
    games["resign"] = resign
    move_limit = Game(Rules("star", 2, move_limit=3))
    stall = Game(Rules("star", 2, stall_limit=4))
    repetition = Game(Rules("halma16", 2))
    for m in ("113-104", "7-16", "104-113"):
        move_limit.play(m)
    for m in ("113-104", "7-16", "104-113", "16-7", "113-104", "7-16"):
        stall.play(m)
    for m in ["190-173", "2-36", "173-190", "36-2"] * 2:
        repetition.play(m)
    games.update(move_limit=move_limit, stall_limit=stall, repetition=repetition)
    games["no_moves"] = Game.from_position(position("diamond", 2, {star_tip(1): "0", 0: "1"}))
    return games


def test_every_end_reason_is_recorded_and_replayed() -> None:
    """A record keeps each end reason the engine gives (docs/rules.md): a game ended in any way
    saves, loads and replays to the same outcome."""
    games = _ended_games()
    assert set(games) == {"finished", "first_finish", "resign", "move_limit", "stall_limit", "repetition", "no_moves"}
    for reason, game in games.items():
        assert game.is_over and game.end_reason == reason, reason
        record = GameRecord.from_json(GameRecord.from_game(game).to_json())
        assert record.end_reason == reason and record.places == tuple(game.places)
        replayed = record.replay()
        assert replayed.end_reason == reason and replayed.position() == game.position(), reason


def test_record_document_is_version_1_and_later_versions_are_refused() -> None:
    """The record format of the module docstring: "format": "halma_env.record", "version": 1."""
    doc = _doc()
    assert (doc["format"], doc["version"]) == ("halma_env.record", 1)
    assert GameRecord.from_dict(doc).to_dict() == doc
    for newer in (2, 10):
        with pytest.raises(RecordError, match=f"version {newer} is newer than this halma_env reads \\(1\\)"):
            GameRecord.from_dict(doc | {"version": newer})
    for bad in (0, -1, True, 1.0):
        with pytest.raises(RecordError, match="version must be a positive integer"):
            GameRecord.from_dict(doc | {"version": bad})


def test_a_long_value_in_a_record_is_shown_short_in_its_error() -> None:
    """A record with ``"version": [0] * 100000`` made a 300,053-character RecordError; texts were cut already."""
    doc = _doc()
    with pytest.raises(RecordError) as error:
        GameRecord.from_dict(doc | {"version": [0] * 100_000})
    assert str(error.value) == "game record: version must be a positive integer, got [0, 0, 0, 0, 0, 0, 0, 0, 0, " \
                               "0, 0, 0, 0, 0, 0, 0, 0... (list)"
    with pytest.raises(RecordError, match=r"players must be 2 names \(strings\), got \[1, 1, .*\.\.\. \(list\)$"):
        GameRecord.from_dict(doc | {"players": [1] * 100_000})
    with pytest.raises(RecordError) as error:
        GameRecord.from_dict(doc | {"events": [{"move": [1] * 50_000}]})
    assert str(error.value).startswith("game record: event 0 is {'move': [1, 1, 1") and len(str(error.value)) < 300


def test_records_are_frozen() -> None:
    record = GameRecord.from_game(_played("star", 2, 4))
    with pytest.raises(AttributeError):
        record.events = ()  # type: ignore[misc]


def test_json_text_is_indented_utf8_and_strict() -> None:
    """to_json: one space of indent by default (None: one line), names written as they are (not
    \\u escapes), and never NaN: metadata changed after the record was made is refused when written."""
    record = GameRecord.from_game(_played("star", 2, 4), players=["José", "李"], metadata={"note": "ü"})
    text = record.to_json()
    assert text == json.dumps(record.to_dict(), indent=1, ensure_ascii=False)
    assert '\n "format": "halma_env.record",\n' in text and '"players": [\n  "José",\n  "李"\n ]' in text
    assert "\n" not in record.to_json(indent=None) and '"note": "ü"' in record.to_json(indent=None)
    assert GameRecord.from_json(text.encode("utf-8")) == record
    record.metadata["score"] = float("nan")  # the dict itself can still be changed
    with pytest.raises(ValueError, match="JSON compliant"):
        record.to_json()


def test_save_in_an_unwritable_directory_names_the_path_asked_for(tmp_path, monkeypatch) -> None:
    """When the temporary file cannot be made, the error is the OSError's own type, naming the record's
    path (not the temporary file) and the reason."""
    import errno
    import os

    real_open = os.open

    def refuse(file, *args, **kwargs):
        if os.path.basename(file).startswith(".g.json."):  # the temporary file beside it
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    path = tmp_path / "g.json"
    with pytest.raises(PermissionError) as info:
        GameRecord.from_game(Game()).save(path)
    assert info.value.errno == errno.EACCES and info.value.filename == str(path)
    assert str(info.value) == f"[Errno 13] game record: Permission denied: {str(path)!r}"
    assert list(tmp_path.iterdir()) == []


def test_a_saved_record_gets_the_permissions_a_new_file_gets(tmp_path) -> None:
    """Records were written through mkstemp, always 0600 (an arena's games/ beside its 0644 results, a
    shared 0644 record made private by a save over it); now as open() gives: 0o666 less the umask for a new
    file, and a record saved over keeps its mode."""
    import os

    path = tmp_path / "g.json"
    for mask in (0o022, 0o077, 0o002):
        path.unlink(missing_ok=True)
        previous = os.umask(mask)
        try:
            GameRecord.from_game(Game()).save(path)
            new_mode = path.stat().st_mode & 0o777
            path.chmod(0o640)
            GameRecord.from_game(Game()).save(path)  # over it: the mode it has
        finally:
            os.umask(previous)
        assert (new_mode, path.stat().st_mode & 0o777) == (0o666 & ~mask, 0o640)


def test_failed_save_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path, monkeypatch) -> None:
    """save is atomic: when writing fails, the error comes through, the file saved before is intact
    and the temporary file is removed."""
    import os

    path = tmp_path / "g.json"
    record = GameRecord.from_game(_played("star", 2, 4))
    record.save(path)
    before = path.read_text()

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="No space left"):
        GameRecord.from_game(_played("star", 2, 8)).save(path)
    assert path.read_text() == before and [p.name for p in tmp_path.iterdir()] == ["g.json"]


@pytest.mark.parametrize(("args", "error", "match"), [
    (("not a game",), TypeError, "needs a halma_env.Game, got str"),
    ((None, "abc"), TypeError, "players must be a list of names"),
    ((None, 5), TypeError, "players must be a list of names"),
    ((None, None, [("a", 1)]), TypeError, "metadata must be a dict, got list"),
])
def test_from_game_refuses_arguments_of_the_wrong_kind(args, error, match) -> None:
    game = _played(seats=3, plies=4)
    args = (game if args[0] is None else args[0], *args[1:])
    with pytest.raises(error, match=match):
        GameRecord.from_game(*args)


def test_a_game_whose_start_places_the_notation_cannot_hold_is_not_recorded() -> None:
    """A loaded position gives every seat that has already finished the top place (docs/rules.md);
    a game whose start carries a finishing order (here set as BatchedGame.to_games does) would be
    written as a record that its own replay refuses, so from_game refuses it."""
    game = Game.from_position(position("star", 4, {60: "2", 62: "3", 10: "0", 111: "1"}))
    game._places[:2] = [1, 2]
    game._status[:2] = ["finished", "finished"]
    with pytest.raises(ValueError, match=r"cannot be recorded: at its start seats already had places \[1, 2, None"):
        GameRecord.from_game(game)


def test_a_game_whose_start_carries_a_running_stall_count_is_not_recorded() -> None:
    """``BatchedGame.to_games`` carries the stall count, which a position's text cannot hold: from_game wrote a
    record whose replay refused it (the original ended by stall_limit at ply 8, the replay ran on). The count is
    set here as to_games sets it."""
    game = Game(Rules("star", 2, stall_limit=4))
    game._stall = 2
    game.play("113-104")
    with pytest.raises(ValueError, match=r"cannot be recorded: at its start 2 plies had passed without progress "
                                         r"\(stall_limit 4; .*loaded from it: 0, "):
        GameRecord.from_game(game)
    fresh = Game(Rules("star", 2, stall_limit=4))  # a game begun at its start records and replays
    fresh.play("113-104")
    assert GameRecord.from_game(fresh).replay().position() == fresh.position()


def test_a_record_that_spells_out_the_standard_start_is_read_and_rerecorded_with_null() -> None:
    """docs/rules.md: a writer may give the standard start as text; from_game of the replayed game writes null."""
    game = Game(Rules("star", 2))
    game.play("113-104")
    document = GameRecord.from_game(game).to_dict()
    document["start"] = Game(Rules("star", 2)).position()
    record = GameRecord.from_dict(document)
    assert record.start == document["start"] and record.to_dict() == document  # loaded as written
    assert record.replay().position() == game.position() and GameRecord.from_game(record.replay()).start is None


def test_replay_takes_numpy_integers_for_upto() -> None:
    record = GameRecord.from_game(_played(plies=6))
    assert record.replay(upto=np.int64(3)).ply == record.replay(upto=3).ply == 3
    for bad in (np.float64(3), 2.5, True, "3"):  # (the wrong type: a TypeError, still a ValueError)
        with pytest.raises(TypeError, match="upto must be an event count"):
            record.replay(upto=bad)
        with pytest.raises(TypeError, match="upto must be an event count"):
            list(record.positions(upto=bad))
    with pytest.raises(ValueError, match=r"upto must be an event count 0\.\.6, got 7") as caught:
        record.replay(upto=7)
    assert not isinstance(caught.value, TypeError)


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: d["events"].append("resign:" + "9" * 5000),
     "event 6 ('resign:99999999999999999999999'... (5007 characters)) is an illegal resignation: seat must be "
     "0..1, got a 5000-digit number"),
    (lambda d: d["events"].append("9" * 4000 + "-1"),  # int() converts it: the engine's error would echo it
     f"event 6 ({'9' * 30!r}... (4002 characters)) is an illegal move: a move's hole number is far too long "
     "(4000 digits)"),
    (lambda d: d["events"].__setitem__(0, "x" * 5000), f"event 0 is {'x' * 30!r}... (5000 characters); expected"),
    (lambda d: d.update(format="f" * 5000), f"format must be 'halma_env.record', got {'f' * 30!r}... (5000 "),
    (lambda d: d.update(end_reason="e" * 5000), f"got {'e' * 30!r}... (5000 characters)"),
], ids=["resignation", "move", "event", "format", "end_reason"])
def test_long_texts_in_a_record_are_cut_short_in_its_errors(change, words: str) -> None:
    """A record's texts are echoed in its errors as notation echoes a position's fields (``quoted``): a long
    one by its first characters and its length."""
    doc = _doc()
    change(doc)
    with pytest.raises(RecordError) as info:
        GameRecord.from_dict(doc).replay()
    assert words in str(info.value) and len(str(info.value)) < 250, str(info.value)[:300]


def test_a_key_given_twice_is_cut_short_in_the_error() -> None:
    key = "k" * 5000
    with pytest.raises(RecordError) as info:
        GameRecord.from_json(f'{{"{key}": 1, "{key}": 2}}')
    assert str(info.value) == f"game record: key {'k' * 30!r}... (5000 characters) appears twice in one object"


def test_a_record_file_over_the_size_a_record_may_have_is_refused_unread(tmp_path, monkeypatch) -> None:
    import halma_env.records

    path = tmp_path / "g.json"
    GameRecord.from_game(Game()).save(path)
    monkeypatch.setattr(halma_env.records, "MAX_RECORD_BYTES", path.stat().st_size - 1)
    with pytest.raises(RecordError, match="^" + re.escape(f"game record '{path}' holds more than the "
                                                    f"{path.stat().st_size - 1} bytes a record may") + "$"):
        load_record(path)
    monkeypatch.setattr(halma_env.records, "MAX_RECORD_BYTES", path.stat().st_size)
    assert load_record(path) == GameRecord.from_game(Game())


def test_a_record_hashes_as_it_compares() -> None:
    """GameRecord is a frozen dataclass, yet hash() raised on its metadata dict: records could not go in a set."""
    game = _played("star", 2, 6, seed=1)
    one, two = GameRecord.from_game(game, metadata={"site": "x"}), GameRecord.from_game(game, metadata={"site": "x"})
    assert one == two and hash(one) == hash(two) and len({one, two}) == 1
    other = GameRecord.from_game(game, metadata={"site": "y"})
    assert other != one and len({one, other}) == 2  # equal hashes, told apart by ==


def _start_doc() -> tuple[dict, str]:
    """A record whose start is not the standard start, and that start's text."""
    text = position("star", 2, {h: "0" for h in range(9)} | {18: "0", 100: "1"}, to_move=0, ply=12)
    game = Game.from_position(text)
    game.play("18-9")
    return GameRecord.from_game(game).to_dict(), text


@pytest.mark.parametrize(
    ("change", "fault"),
    [
        (lambda t: "  " + t, "spaces or line breaks around it"),
        (lambda t: t + "\n", "spaces or line breaks around it"),
        (lambda t: t.rsplit(" ", 1)[0], "no ply field"),
        (lambda t: "  " + t.rsplit(" ", 1)[0] + "\n", "spaces or line breaks around it and no ply field"),
    ],
)
def test_a_non_canonical_start_is_refused_on_load(change, fault: str, tmp_path) -> None:
    """The position parser reads one text per position, but a record kept a start with spaces around it
    or without its ply as written (review_fuzz rec_start_noncanonical.json): refused, naming the field."""
    doc, text = _start_doc()
    doc["start"] = change(text)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    for load in (lambda: GameRecord.from_dict(doc), lambda: load_record(path)):
        with pytest.raises(RecordError, match=f"game record( '.*game.json')?: start position '.* is not written as "
                                              f"Game.position\\(\\) writes it: {fault}$"):
            load()


def test_a_non_canonical_final_position_is_refused_on_load() -> None:
    doc, _ = _start_doc()
    doc["final_position"] += "\n"
    with pytest.raises(RecordError, match="final_position '.* is not written as .*: spaces or line breaks around it$"):
        GameRecord.from_dict(doc)
    doc["final_position"] = "star 2 nonsense 0"
    with pytest.raises(RecordError, match="game record: final_position: board field"):
        GameRecord.from_dict(doc)


def test_records_with_a_start_round_trip_to_the_identical_document(tmp_path) -> None:
    """A record saved then loaded is the document saved, start text included."""
    doc, text = _start_doc()
    assert doc["start"] == text
    path = tmp_path / "game.json"
    GameRecord.from_dict(doc).save(path)
    assert json.loads(path.read_text(encoding="utf-8")) == doc
    assert load_record(path).to_dict() == doc


_FIELDS = ("events", "places", "end_reason", "start", "final_position", "players", "metadata")


def _fields(doc: dict) -> dict:
    """The constructor's arguments for a record document, its lists left as lists."""
    return {"rules": Rules.from_dict(doc["rules"])} | {k: doc[k] for k in _FIELDS}


def test_a_record_built_directly_is_the_record_from_dict_gives() -> None:
    """GameRecord(...) with lists (as a JSON document holds them) stored the lists: hash() raised, and the
    record was unequal to the same one loaded from its document.  The constructor stores tuples."""
    doc = _doc()
    built = GameRecord(**_fields(doc))
    loaded = GameRecord.from_dict(doc)
    assert built == loaded and hash(built) == hash(loaded) and len({built, loaded}) == 1
    assert type(built.events) is type(built.places) is type(built.players) is tuple
    assert built.to_dict() == doc
    assert GameRecord(**_fields(doc) | {"metadata": None}) == loaded  # None metadata read as {}, as from_dict does
    assert GameRecord(**_fields(doc) | {"players": None}).players is None
    # dataclasses.replace goes through the constructor too
    import dataclasses
    assert dataclasses.replace(loaded, events=list(loaded.events)) == loaded


@pytest.mark.parametrize("kind", sorted(k for k in CORRUPT if k.split(" ")[0] in ("event", "events", "places", "place",
                                                                                 "end_reason", "start", "players",
                                                                                 "metadata")))
def test_a_record_built_directly_with_a_bad_field_raises_as_from_dict(kind: str) -> None:
    """A bad field given to the constructor raises the RecordError from_dict raises for it (a str of events was
    taken apart into one event per character, a list of places was stored unchecked)."""
    change, words = CORRUPT[kind]
    doc = _doc()
    change(doc)
    with pytest.raises(RecordError) as loading:
        GameRecord.from_dict(doc)
    with pytest.raises(RecordError, match=words) as building:
        GameRecord(**_fields(doc))
    assert str(building.value) == str(loading.value)


def test_a_record_built_directly_needs_rules() -> None:
    doc = _doc()
    with pytest.raises(RecordError, match="rules must be a halma_env.Rules .*got dict"):
        GameRecord(**_fields(doc) | {"rules": doc["rules"]})


@functools.cache
def _long_game() -> Game:
    """A three-seat game of 6,001 plies: random moves, a resignation at ply 3,000 (seat 1's turns
    are skipped from there on), random moves again.  Shared: callers must not change it."""
    game = Game(Rules("star", 3))
    random_playout(game, random.Random(5), 3000)
    game.resign(1)
    random_playout(game, random.Random(6), 3000)
    assert not game.is_over and game.ply == 6000
    return game


def test_a_long_record_round_trips_and_replays_exactly(tmp_path) -> None:
    """A record of thousands of plies saves, loads and replays to the very game: every event (passes
    recreated), the position, the outcome; recorded again it is the same record."""
    game = _long_game()
    record = GameRecord.from_game(game, players=["a", "b", "c"])
    assert len(record.events) == 6001 and record.events[3000] == "resign:1"
    record.save(tmp_path / "long.json")
    loaded = load_record(tmp_path / "long.json")
    assert loaded == record
    replayed = loaded.replay()
    assert replayed.history == game.history and replayed.position() == game.position()
    assert (replayed.places, replayed.status, replayed.end_reason) == (game.places, game.status, game.end_reason)
    assert GameRecord.from_game(replayed, players=["a", "b", "c"]) == record
    assert loaded.replay(upto=4500).position() == list(loaded.positions(upto=4500))[-1]


def _bad_moves(game: Game) -> dict[str, tuple[str, str]]:
    """Illegal moves in ``game``'s position, by kind: the move and the engine's reason."""
    seat = game.to_move
    own = game.pieces(seat)
    empty = [h for h, cell in enumerate(game.board()) if cell is None]
    other = next(h for h, cell in enumerate(game.board()) if cell is not None and cell[0] != seat)
    blocked = next(f"{src}-{dst}" for src in own for dst in game.geometry.neighbours[src] if game.piece_at(dst))
    unreachable = next(f"{src}-{dst}" for src in own for dst in empty if dst not in game.legal_destinations(src))
    blocked_dst = blocked.split("-")[1]
    unreachable_src, unreachable_dst = unreachable.split("-")
    last = game.geometry.num_holes - 1
    return {
        "no piece": (f"{empty[0]}-{empty[1]}", f"no piece on hole {empty[0]}"),
        "another seat's piece": (f"{other}-{empty[0]}", f"hole {other} holds a piece of seat"),
        "step onto a piece": (blocked, f"hole {blocked_dst} is occupied"),
        "unreachable": (unreachable, f"hole {unreachable_dst} cannot be reached from {unreachable_src}"),
        "off the board": (f"{last + 1}-{own[0]}", f"source hole must be a hole number 0..{last}, got {last + 1}"),
    }


@pytest.mark.parametrize("index", [1, 2999, 3001, 6000])
def test_an_illegal_move_deep_in_a_long_record_is_refused_naming_its_number(index: int) -> None:
    """Each event is checked in its own position however long the record: an illegal move thousands of
    plies in is refused by replay (and load's and halma play's replay), naming its number and why, and
    the moves before it stay played (replay up to it still works)."""
    record = GameRecord.from_game(_long_game())
    before = record.replay(upto=index)
    for kind, (move, reason) in _bad_moves(before).items():
        doc = record.to_dict()
        doc["events"][index] = move
        bad = GameRecord.from_dict(doc)
        with pytest.raises(RecordError, match=re.escape(f"event {index} ('{move}') is an illegal move: {reason}")):
            bad.replay()
        assert bad.replay(upto=index).position() == before.position(), kind
    # two moves swapped: the first of them is the next seat's move, played on the turn before
    doc = record.to_dict()
    events = doc["events"]
    if not events[index - 1].startswith("resign") and not events[index].startswith("resign"):
        events[index - 1], events[index] = events[index], events[index - 1]
        match = f"event {index - 1} .* is an illegal move: hole .* holds a piece of seat"
        with pytest.raises(RecordError, match=match):
            GameRecord.from_dict(doc).replay()


def test_an_altered_outcome_of_a_long_record_is_refused() -> None:
    """The stored outcome and final position of a long record are compared with its replay's."""
    record = GameRecord.from_game(_long_game())
    doc = record.to_dict()
    doc["final_position"] = list(record.positions(upto=5999))[-1]
    with pytest.raises(RecordError, match="stored final position"):
        GameRecord.from_dict(doc).replay()
    doc = record.to_dict()
    doc["events"] = doc["events"][:-1]  # one move fewer: its position, not the stored one
    with pytest.raises(RecordError, match="stored final position"):
        GameRecord.from_dict(doc).replay()
    doc = record.to_dict()
    doc["places"] = [None, 2, 1]
    with pytest.raises(RecordError, match="stored outcome places=\\[None, 2, 1\\]"):
        GameRecord.from_dict(doc).replay()


def test_only_a_long_replay_holds_the_collector_off(monkeypatch) -> None:
    """Replays of a game site's records, back to back in threads, kept the collector off for the whole
    process (it pays from about 20,000 plies on): a shorter replay leaves it alone."""
    import halma_env.records

    record = GameRecord.from_game(_played("star", 2, 30, seed=3))
    paused: list[bool] = []
    monkeypatch.setattr(halma_env.records.gc, "disable", lambda: paused.append(True))
    record.replay()
    assert paused == []
    monkeypatch.setattr(halma_env.records, "LONG_REPLAY_EVENTS", 30)
    record.replay(upto=29)
    assert paused == []
    record.replay()
    assert paused == [True]


def test_replays_overlapping_in_threads_turn_the_collector_back_on_when_the_last_ends() -> None:
    """Each replay saved and restored the switch on its own: the first to end turned the collector on under
    the other, and one that read the switch while another held it off never turned it back on."""
    from halma_env.records import _gc_paused

    was_on = gc.isenabled()
    try:
        gc.enable()
        first, second = _gc_paused(), _gc_paused()
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)  # (another thread's replay ends first)
        assert not gc.isenabled()
        second.__exit__(None, None, None)
        assert gc.isenabled()
    finally:
        if not was_on:
            gc.disable()


def test_replay_leaves_the_garbage_collector_as_it_found_it(monkeypatch) -> None:
    """replay holds the cyclic garbage collector off while it plays a long record (a long history's objects
    made it pass over them again and again): it is back on afterwards, after a refused record too, and a
    collector the caller had turned off stays off."""
    import halma_env.records

    monkeypatch.setattr(halma_env.records, "LONG_REPLAY_EVENTS", 10)  # these 30 plies count as long
    record = GameRecord.from_game(_played("star", 2, 30, seed=3))
    doc = record.to_dict()
    doc["events"][20] = "0-1"
    bad = GameRecord.from_dict(doc)
    was_on = gc.isenabled()
    try:
        gc.enable()
        assert record.replay().position() == _played("star", 2, 30, seed=3).position()
        assert gc.isenabled()
        with pytest.raises(RecordError, match="event 20"):
            bad.replay()
        assert gc.isenabled()
        gc.disable()
        record.replay()
        with pytest.raises(RecordError, match="event 20"):
            bad.replay()
        assert not gc.isenabled()
    finally:
        if was_on:
            gc.enable()
        else:
            gc.disable()


def test_a_game_started_at_the_largest_ply_count_is_recorded_and_replays() -> None:
    """A position may start at ply 999,999,999,999 (12 digits, SPEC §3); after a move the game writes a ply count of
    13 digits, and its record was refused for the final position the game wrote itself ("a ply count of 13 digits
    is far too long").  A record's final position is read up to 18 digits; its start still up to 12."""
    start = Game(Rules("star", 2)).position().rsplit(" ", 1)[0] + " 999999999999"
    game = Game.from_position(start)
    game.play(game.legal_moves()[0])
    game.play(game.legal_moves()[0])
    record = GameRecord.from_game(game)
    assert record.final_position is not None and record.final_position.endswith(" 1000000000001")
    again = GameRecord.from_json(record.to_json())
    assert again == record and again.replay().position() == game.position()
    data = record.to_dict()
    data["start"] = start.rsplit(" ", 1)[0] + " 1000000000000"  # a start past 12 digits is still refused
    with pytest.raises(RecordError, match="start position: ply field: a ply count of 13 digits"):
        GameRecord.from_dict(data)
