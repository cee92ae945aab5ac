"""scripts/mutants.py: the mutants it makes, and a real run that tells killed from surviving mutants
without touching the working tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.script_helpers import SCRIPTS, load_script

ROOT = Path(__file__).parents[1]

SOURCE = '''"""A docstring is left alone."""


def f(a, b):
    if not a and b < 2:
        raise ValueError(f"bad {a == 1}")
    for x in b:
        if x is None:
            continue
    return a + 1
'''


def test_each_kind_of_single_point_change_is_made_once_per_place() -> None:
    mutants = load_script("mutants")
    changes = [(m.line, m.change) for m in mutants.mutants(SOURCE)]
    assert changes == [
        (5, "and/or swapped: not a and b < 2"),
        (5, "not dropped: not a"),
        (5, "Lt -> LtE: b < 2"),
        (5, "2 -> 3"),
        (5, "2 -> 1"),
        (6, "raise -> pass: raise ValueError(f'bad {a == 1}')"),  # its message is left alone
        (8, "Is -> IsNot: x is None"),
        (9, "continue -> pass"),
        (10, "return -> None: return a + 1"),
        (10, "+/- swapped: a + 1"),
        (10, "1 -> 2"),
        (10, "1 -> 0"),
    ]
    by_change = {m.change: m.text for m in mutants.mutants(SOURCE)}
    assert "if (a and b < 2) and b < 2" not in by_change["not dropped: not a"]
    assert "if (a) and b < 2:" in by_change["not dropped: not a"]
    assert "        pass\n    for x in b:" in by_change["raise -> pass: raise ValueError(f'bad {a == 1}')"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPTS / "mutants.py"), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_a_run_tells_killed_from_surviving_mutants_and_leaves_the_module_alone(tmp_path: Path) -> None:
    module = ROOT / "halma_env" / "rewards.py"
    before = module.read_bytes()
    listed = run("halma_env/rewards.py", "--list").stdout.splitlines()
    wanted = ["'place' -> 'Xplace'", "raise -> pass: raise (ValueError if real", "Eq -> NotEq: n == 1"]
    # the first mutant of each kind (REWARD_SCHEMES' "place", the progress shaping's refusal, place_rewards' n == 1)
    picked = [next(line.split()[0].lstrip("#") for line in listed if w in line) for w in wanted]
    # this test compares every place row with the batched engine's rewards, for valid schemes and shaping only
    done = run("halma_env/rewards.py", "--only", *picked, "--json", str(tmp_path / "out.json"),
               "--tests", "tests/test_batched.py::test_place_rewards_match_the_shared_definition")
    assert done.returncode == 0, done.stderr
    assert "halma_env/rewards.py: 3 mutants, 2 killed, 0 timed out, 1 survived, 0 not valid python" in done.stdout
    line = next(i for i, text in enumerate(before.decode().splitlines(), 1)
                if "raise (ValueError if real" in text)
    assert f"survived #{picked[1]} line {line}: raise -> pass" in done.stdout
    assert module.read_bytes() == before
    import json

    assert [o["status"] for o in json.loads((tmp_path / "out.json").read_text())] == ["killed", "SURVIVED", "killed"]


def test_lines_and_only_select_the_mutants_listed_and_run() -> None:
    everything = run("halma_env/rewards.py", "--list").stdout.splitlines()
    lines = [int(entry.split()[2].rstrip(":")) for entry in everything]
    first, last = lines[3], lines[10]
    chosen = run("halma_env/rewards.py", "--list", "--lines", f"{first}-{last}", f"{lines[-1]}-{lines[-1]}")
    assert chosen.stdout.splitlines() == [e for e, n in zip(everything, lines) if first <= n <= last or n == lines[-1]]
    both = run("halma_env/rewards.py", "--list", "--lines", f"{first}-{last}", "--only", "0", "4", "5")
    expected = [e for e, n in zip(everything, lines) if e.split()[0] in ("#0", "#4", "#5") and first <= n <= last]
    assert both.stdout.splitlines() == expected and len(expected) == 2  # #0 lies before the range


def test_bad_arguments_are_refused() -> None:
    for args, named in ((["no/such.py"], "is not a python file of this repository"),
                        (["README.md"], "is not a python file of this repository"),
                        (["halma_env/rewards.py", "--timeout", "0"], "--timeout must be > 0"),
                        (["halma_env/rewards.py", "--lines", "9-3"], "--lines takes ranges FIRST-LAST"),
                        (["halma_env/rewards.py", "--lines", "9"], "--lines takes ranges FIRST-LAST"),
                        (["halma_env/rewards.py", "--lines", "99999-100000"], "no mutant of the module matches"),
                        (["halma_env/rewards.py", "--only", "99999"], "no mutant of the module matches"),
                        # taken before: NaN and inf, an --only index among real ones, an absolute path outside
                        (["halma_env/rewards.py", "--timeout", "nan", "--list"], "--timeout must be > 0"),
                        (["halma_env/rewards.py", "--timeout", "inf", "--list"], "--timeout must be > 0"),
                        (["halma_env/rewards.py", "--only", "0", "99999", "--list"],
                         "matches --only 99999: it has mutants #0 to"),
                        ([str(ROOT.parent / "elsewhere.py")], "is not a python file of this repository")):
        done = run(*args)
        assert done.returncode == 2 and named in done.stderr and "Traceback" not in done.stderr


PLACE_TEST = "tests/test_batched.py::test_place_rewards_match_the_shared_definition"


def eq_mutant() -> str:
    """The index of a rewards.py mutant that PLACE_TEST kills."""
    listed = run("halma_env/rewards.py", "--list").stdout.splitlines()
    return next(line.split()[0].lstrip("#") for line in listed if "Eq -> NotEq: n == 1" in line)


def test_an_absolute_module_path_mutates_the_copy_not_the_working_tree() -> None:
    """ROOT / "/abs/path" is "/abs/path": the mutant went into the working tree while the tests ran on the
    unchanged copy, and every mutant survived."""
    module = ROOT / "halma_env" / "rewards.py"
    before = module.read_bytes()
    done = run(str(module), "--only", eq_mutant(), "--tests", PLACE_TEST)
    assert done.returncode == 0, done.stderr
    assert "halma_env/rewards.py: 1 mutants, 1 killed, 0 timed out, 0 survived" in done.stdout
    assert module.read_bytes() == before


def test_tests_that_fail_without_a_mutant_are_refused() -> None:
    """A typo in --tests failed every run, so every mutant counted as killed."""
    for tests in (["tests/no_such_test_file.py"], ["-k no_such_test_name", "tests/test_mutants.py"]):
        done = run("halma_env/rewards.py", "--only", "0", "--tests", *tests)
        assert done.returncode == 2 and "the tests fail without any mutant" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and "killed" not in done.stdout


def test_a_json_file_that_cannot_be_written_is_refused_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "a_file").write_text("")
    for out, named in ((tmp_path / "a_file" / "out.json", "cannot write --json"), (tmp_path, "is a directory")):
        done = run("halma_env/rewards.py", "--only", eq_mutant(), "--json", str(out), "--tests", PLACE_TEST)
        assert done.returncode == 2 and named in done.stderr and "Traceback" not in done.stderr
        assert "mutants," not in done.stdout  # nothing ran
