#!/usr/bin/env bash
# Runs a command with the clock of its whole process tree shifted so that it reads AT (UTC) now and goes on from
# there, with libfaketime (Debian's `faketime` package). For the tests' date and hour edges, e.g.:
#   AT='2026-12-01 00:10:00' test/support/run-at.sh node --import tsx --test $(find test -name '*.test.ts' | sort)
# The children the tests start get the same clock (test/support/child-env.ts passes LD_PRELOAD and FAKETIME* on).
# PostgreSQL's own clock is not shifted; nothing the engine or the tests store or compare comes from it.
# Chromium does not run under libfaketime: leave test/console/console.test.ts out of such a run.
set -euo pipefail
: "${AT:?AT=<UTC instant>, e.g. AT='2026-12-01 00:10:00'}"
command -v faketime >/dev/null || { echo "run-at.sh: needs faketime (apt-get install -y faketime)" >&2; exit 2; }
offset=$(($(date -u -d "$AT" +%s) - $(date -u +%s)))
export FAKETIME_DONT_FAKE_MONOTONIC=1
exec faketime -f "$([ "$offset" -ge 0 ] && echo +)${offset}s" "$@"
