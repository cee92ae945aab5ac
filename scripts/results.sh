#!/usr/bin/env bash
# Re-measure every table of the README.  Takes about an hour on 2 cores; each command prints its
# own table (add --json to the bench commands for machine-readable figures).
set -euo pipefail
out=${1:-results}
mkdir -p "$out"

halma bench engine --seconds 2 | tee "$out/bench_engine.md"
halma bench env --seconds 2 | tee "$out/bench_env.md"
halma bench opponent --seconds 2 | tee "$out/bench_opponent.md"
halma bench train --seconds 20 | tee "$out/bench_train.md"

# bots (issue 4): star 2 seats, 3/4/6 seats decided, diamond and halma16 finish, solitaire
halma eval greedy random --games 200 --variant star --seats 2 --out "$out/greedy-random"
halma eval search greedy --games 60 --variant star --seats 2 --out "$out/search-greedy"
for seats in 3 4 6; do
  halma eval greedy search mcts --seats "$seats" --games 36 --out "$out/star-$seats"
done
for game in "diamond 2" "diamond 3" "halma16 2" "halma16 4"; do
  set -- $game
  halma eval greedy search mcts --variant "$1" --seats "$2" --games 24 --out "$out/$1-$2"
done
halma eval --solo greedy --games 10
halma eval --solo search --games 3

# training (issue 5): the quickstart run and its agent against the bots
halma train configs/quickstart.yaml --runs-dir "$out/runs"
halma eval "$out/runs/quickstart/checkpoints/last.pt" random greedy --games 60 --out "$out/quickstart-eval"
