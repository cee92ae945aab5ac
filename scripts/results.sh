#!/usr/bin/env bash
# Re-measure the README's main benchmarks and evaluations in one go.  Takes about an hour on 2 cores.
# Some game counts and settings differ from the README's tables (bench train --seconds 20, 36 games
# of 3-6 seats, 24 of diamond and halma16): each table's own command is the one given next to it.
#
#   scripts/results.sh [OUT]    (from any folder; OUT defaults to ./results and must be new or empty)
#
# Each command prints its own table; everything also lands in OUT: the bench tables as
# OUT/bench_*.md (add --json to the bench commands for machine-readable figures), every `halma eval`
# as OUT/<name>/ (results.md, results.json or solo.md, solo.json, and the game records), the
# quickstart run in OUT/runs/quickstart/, the ladder rebuilt in OUT/ladder.json.  The first command
# that fails stops the script (set -e).
set -euo pipefail
usage="usage: scripts/results.sh [OUT]    (OUT: a new or empty folder, default ./results)"
# every argument checked before any work: an option or a second word is not taken for OUT or dropped
if [ $# -eq 1 ] && { [ "$1" = -h ] || [ "$1" = --help ]; }; then
  echo "$usage"
  exit 0
fi
if [ $# -gt 1 ]; then
  echo "results.sh: one OUT folder at most, got $#: $*" >&2
  echo "$usage" >&2
  exit 2
fi
out=${1-results}
if [ -z "$out" ] || [ "${out#-}" != "$out" ]; then
  echo "results.sh: OUT must be a folder name, got '$out'" >&2
  echo "$usage" >&2
  exit 2
fi
if [ -e "$out" ] && [ ! -d "$out" ]; then
  echo "results.sh: $out is not a folder; give a new folder (scripts/results.sh OUT)" >&2
  exit 2
fi
# halma eval refuses an --out folder that already holds results, so a rerun into the same OUT would
# stop at its first eval, after the benchmarks: refuse it now
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "results.sh: $out is not empty; give a new folder (scripts/results.sh OUT)" >&2
  exit 2
fi
if ! mkdir -p "$out" 2>/dev/null || [ ! -w "$out" ]; then
  echo "results.sh: cannot make or write the folder $out" >&2
  exit 2
fi
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."  # the configs and checkpoints below are named from the repository root

halma bench engine --seconds 2 | tee "$out/bench_engine.md"
halma bench env --seconds 2 | tee "$out/bench_env.md"
halma bench opponent --seconds 2 | tee "$out/bench_opponent.md"
halma bench train --seconds 20 | tee "$out/bench_train.md"

# bots (issue 4): star 2 seats, 3/4/6 seats decided, diamond and halma16 finish, solitaire
halma eval greedy random --games 200 --variant star --seats 2 --out "$out/greedy-random"
halma eval search greedy --games 60 --variant star --seats 2 --out "$out/search-greedy"
for seats in 3 4 6; do
  halma eval greedy search mcts --seats "$seats" --games 36 --workers 1 --out "$out/star-$seats"
done
for game in "diamond 2" "diamond 3" "halma16 2" "halma16 4"; do
  set -- $game
  halma eval greedy search mcts --variant "$1" --seats "$2" --games 24 --workers 1 --out "$out/$1-$2"
done
halma eval --solo greedy --games 10 --out "$out/solo-greedy"
halma eval --solo search --games 3 --out "$out/solo-search"
halma eval --solo crossing:width=3000 --out "$out/solo-crossing"
halma eval crossing:width=3,depth=3 greedy --variant halma16 --games 40 --workers 1 --out "$out/crossing-halma16"

# training (issue 5): the quickstart run and its agent against the bots
halma train configs/quickstart.yaml --runs-dir "$out/runs"
halma eval "$out/runs/quickstart/checkpoints/last.pt" random greedy --seats 2 --games 60 --out "$out/quickstart-eval"

# the shipped checkpoints (issue 5), policy alone
halma eval agents/checkpoints/star2.pt greedy --games 100 --workers 1 --out "$out/star2-greedy"
# the search bot is time-limited (0.2 s per move): run it on an otherwise idle machine, a core per worker
halma eval agents/checkpoints/star2.pt search --games 20 --workers 2 --out "$out/star2-search"
for seed in 1 2 3 4 5 6 7; do
  halma eval agents/checkpoints/star2.pt search --games 20 --workers 2 --seed "$seed" --out "$out/star2-search-seed$seed"
done
halma eval --solo agents/checkpoints/star2.pt --out "$out/solo-star2"
halma eval agents/checkpoints/star3.pt greedy greedy --seats 3 --games 90 --workers 1 --out "$out/star3-greedy"
halma eval agents/checkpoints/star4.pt greedy greedy greedy --seats 4 --games 144 --workers 1 --out "$out/star4-greedy"
halma eval agents/checkpoints/star6.pt greedy greedy greedy greedy greedy --seats 6 --games 216 --seed 1 --workers 2 --out "$out/star6-greedy"
halma eval agents/checkpoints/diamond2.pt greedy --variant diamond --seats 2 --games 100 --workers 1 \
  --out "$out/diamond2-greedy"
halma eval agents/checkpoints/diamond3.pt greedy greedy --variant diamond --seats 3 --games 90 --workers 1 \
  --out "$out/diamond3-greedy"
halma eval agents/checkpoints/halma16_2.pt greedy --variant halma16 --seats 2 --games 100 --workers 1 \
  --out "$out/halma16_2-greedy"

# the ladder (issue 4): rebuild one entry into a copy, not the shipped file
cp agents/ladder/ladder.json "$out/ladder.json"
halma ladder --ladder "$out/ladder.json" --quiet --workers 1 --variant star --seats 3 --games 180 \
  greedy:noise=0.5 greedy:noise=0.25,temperature=1.0 greedy:noise=0.25 greedy greedy:lookahead=1.5 \
  search:depth=3,time=none
echo "results.sh: everything is in $out"
