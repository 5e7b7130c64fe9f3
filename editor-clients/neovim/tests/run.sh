#!/bin/sh
# Run the Neovim client's tests in a real headless Neovim against the real `redraft serve`.
#   NVIM=/path/to/nvim REDRAFT_CMD=/path/to/redraft tests/run.sh [name-filter]
# NVIM defaults to `nvim` on PATH, REDRAFT_CMD to `redraft` on PATH (then the repository's
# .venv). The last line is always "N passed, N failed"; the exit code is non-zero on failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

# Inside Neovim's :terminal, $NVIM is the parent's socket, not a binary: only use it if executable.
if [ -n "${NVIM:-}" ] && [ -f "$NVIM" ] && [ -x "$NVIM" ]; then
  nvim=$NVIM
else
  nvim=$(command -v nvim || true)
fi
if [ -z "$nvim" ]; then
  echo "nvim not found: set NVIM=/path/to/nvim"
  echo "0 passed, 1 failed"
  exit 1
fi
if [ -z "${REDRAFT_CMD:-}" ]; then
  REDRAFT_CMD=$(command -v redraft || true)
  [ -z "$REDRAFT_CMD" ] && [ -x "$repo/.venv/bin/redraft" ] && REDRAFT_CMD=$repo/.venv/bin/redraft
fi
if [ -z "$REDRAFT_CMD" ]; then
  echo "redraft not found: set REDRAFT_CMD=/path/to/redraft or put it on PATH"
  echo "0 passed, 1 failed"
  exit 1
fi
export REDRAFT_CMD
command -v tmux >/dev/null 2>&1 || echo "note: tmux not installed, the screen test will be skipped"
"$nvim" --version | head -n 1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
cd "$here/.." || exit 1
# A hard limit in case a child Neovim or the server hangs; each wait inside has its own.
if command -v timeout >/dev/null 2>&1; then limit="timeout 900"; else limit=""; fi
$limit "$nvim" --headless -u NONE -i NONE -l tests/run.lua "$@" 2>&1 | tee "$log"
status=$(tail -n 1 "$log")
case $status in
  *" passed, 0 failed") exit 0 ;;
  *" passed, "*" failed") exit 1 ;;
  *) echo "0 passed, 1 failed"; exit 1 ;;  # the runner died before its summary
esac
