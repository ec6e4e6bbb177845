#!/usr/bin/env bash
# The figures of "near the floor" in one run, by hand (release build; a quiet machine gives
# figures worth comparing; compare only figures of one run):
#
#   benches/floor.sh
#
# - lead_latency: append → transcript event (p50/p99), 100 idle in-process teammates (memory,
#   spawn, /quit);
# - store_append: 1/8/32 writer processes into one inbox (p99 wait, messages per second);
# - pane_spawn: own teammate spawn → first idle, idle RSS of one teammate process (tmux);
# - the counted budgets (tests/budget: heap per idle teammate, allocations per delivery), which
#   CI also checks against tests/budget/budgets.toml.
set -euo pipefail
cd "$(dirname "$0")/.."

benches=(lead_latency store_append pane_spawn)
# pane_spawn starts the release binary in its panes: built here too, so it is never stale.
cargo build --release --quiet --bin teamlead
for b in "${benches[@]}"; do
  cargo build --release --quiet --bench "$b"
done
target="${CARGO_TARGET_DIR:-target}"
for b in "${benches[@]}"; do
  bin=$(ls -t "$target"/release/deps/"$b"-* | grep -v '\.d$' | head -1)
  echo "== $b"
  "$bin" --bench
  echo
done
echo "== budget (counted; debug build, as CI runs it)"
cargo test --quiet --test budget
