#!/usr/bin/env bash
# Makes the README's pictures from the real binary in a real terminal: `teamlead demo` runs
# in a private tmux server (`tmux -L <unique> -f /dev/null`, 100×30), each scene is captured
# with its escapes (`capture-pane -e -p`) and rendered to SVG by examples/ansi_svg.rs. Run it
# by hand after a change to the UI:
#
#   assets/make-screenshots.sh        # writes assets/lead.svg, assets/teams.svg, assets/permission.svg
#
# Needs tmux and a Rust toolchain; no network. The demo runs in a temporary home and a
# temporary directory under /tmp (shown in the pictures, so no path of yours is), both removed
# by the demo when it quits; no config file of yours is read.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v tmux >/dev/null || { echo "make-screenshots: tmux is needed" >&2; exit 1; }
cargo build --quiet --bin teamlead --example ansi_svg
target="${CARGO_TARGET_DIR:-target}"
bin="$(cd "$target/debug" && pwd)/teamlead"
render="$(cd "$target/debug/examples" && pwd)/ansi_svg"

work="$(mktemp -d "${TMPDIR:-/tmp}/teamlead-shots-XXXXXX")"
socket="teamlead-shots-$$"
cleanup() {
  tmux -L "$socket" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

t() { tmux -L "$socket" "$@"; }
screen() { t capture-pane -p -t shots; }

# Waits (at most 60 s) until the screen shows $1.
wait_for() {
  local deadline=$((SECONDS + 60))
  until screen | grep -qF -- "$1"; do
    if ((SECONDS > deadline)); then
      echo "make-screenshots: timed out waiting for '$1'; the screen was:" >&2
      screen >&2
      exit 1
    fi
    sleep 0.1
  done
}

# Waits (at most 60 s) until the screen no longer shows $1.
wait_gone() {
  local deadline=$((SECONDS + 60))
  while screen | grep -qF -- "$1"; do
    if ((SECONDS > deadline)); then
      echo "make-screenshots: '$1' did not go away" >&2
      exit 1
    fi
    sleep 0.1
  done
}

shoot() { # NAME TITLE
  t capture-pane -e -p -t shots | "$render" "$2" > "assets/$1.svg"
  echo "wrote assets/$1.svg"
}

mkdir -p "$work/project"
t -f /dev/null new-session -d -s shots -x 100 -y 30 -c "$work/project" \
  -e TMPDIR=/tmp -e TEAMLEAD_CONFIG="$work/no-config.toml" -e COLORTERM=truecolor \
  -e TEAMLEAD_LOG_DIR="$work/logs" -e HOME="$work" \
  "env -u TEAMLEAD_HOME -u CLAUDE_CONFIG_DIR -u TMUX -u NO_COLOR '$bin' demo"

# The permission dialog: the first Bash request, opened with Ctrl+P.
wait_for "approval"
until screen | grep -qF "needs permission"; do t send-keys -t shots C-p; sleep 0.3; done
sleep 0.6 # the dialog's grace period: the picture shows it ready for an answer
shoot permission "teamlead — a permission request"

# Approve requests and the reviewer's plan until three tasks are done.
deadline=$((SECONDS + 90))
until screen | grep -qE "tasks [3-6]/6"; do
  ((SECONDS < deadline)) || { echo "make-screenshots: the demo did not progress" >&2; screen >&2; exit 1; }
  if screen | grep -qE "needs permission|wants to|approval waiting|approvals waiting"; then
    t send-keys -t shots C-p; sleep 0.6; t send-keys -t shots y
  fi
  sleep 0.2
done

# The lead with its team: a message being typed keeps every new request behind the banner.
t send-keys -t shots C-p; sleep 0.6; t send-keys -t shots Escape
wait_gone "needs permission"
t send-keys -t shots -l "@counter please also count the characters"
wait_for "count the characters"
sleep 0.3
shoot lead "teamlead demo — the lead and its team"

# The teams dialog: clear the line (Ctrl+U), ↓ selects the team badge, Enter opens it.
t send-keys -t shots C-u Down Enter
wait_for "Team demo"
shoot teams "teamlead — the teams dialog"

# Quit: Esc closes the dialog, Ctrl+C twice ends the demo (it removes what it made).
t send-keys -t shots Escape
wait_gone "Team demo"
t send-keys -t shots C-c
wait_for "again to quit"
t send-keys -t shots C-c
deadline=$((SECONDS + 30))
while t has-session -t shots 2>/dev/null; do
  if ((SECONDS > deadline)); then
    echo "make-screenshots: the demo did not quit; the screen was:" >&2
    screen >&2
    exit 1
  fi
  sleep 0.2
done
