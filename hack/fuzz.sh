#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (make fuzz), found
# in the test files so that a new target is never left out, and prints one
# line per target and a summary; exits 1 if any target failed.
#
# A target fails when go test writes a failing input for it (under the
# package's testdata/fuzz/<target>/, which go test then replays as a seed),
# or fails otherwise twice in a row. Go 1.26's fuzzing coordinator can end a run
# bounded by time with "context deadline exceeded" and no input written
# (golang/go#75804, fixed in Go 1.27): that found nothing, so such a run is
# repeated once before it counts.
#
#   FUZZTIME=1m hack/fuzz.sh              every target, a minute each
#   hack/fuzz.sh FuzzPatch FuzzParse      only these targets
set -uo pipefail

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-20s}
cd "$(dirname "$0")/.."

# dir<TAB>target for every "func FuzzX(f *testing.F)" in a test file of the
# module's packages (go list: not oracle/, a module of its own, nor testdata).
module=$("$GO" list -m -f '{{.Dir}}')
targets=$("$GO" list -f '{{.Dir}}' ./... | while read -r dir; do
	rel=${dir#"$module"/}
	[ "$dir" = "$module" ] && rel=.
	for fn in $(cat "$dir"/*_test.go 2>/dev/null | sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/p'); do
		printf '%s\t%s\n' "$rel" "$fn"
	done
done | sort -u)
if [ $# -gt 0 ]; then
	want=" $* "
	targets=$(printf '%s\n' "$targets" | while IFS=$'\t' read -r dir fn; do
		case "$want" in *" $fn "*) printf '%s\t%s\n' "$dir" "$fn" ;; esac
	done)
fi
for name in "$@"; do
	if ! printf '%s\n' "$targets" | cut -f2 | grep -qx "$name"; then
		echo "fuzz: no fuzz target named $name" >&2
		exit 2
	fi
done
if [ -z "$targets" ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 2
fi

inputs() { ls "$1/testdata/fuzz/$2" 2>/dev/null | sort; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
passed=0 failed=0 retried=0
while IFS=$'\t' read -r dir fn; do
	before=$(inputs "$dir" "$fn")
	for attempt in 1 2; do
		if "$GO" test -run '^$' -fuzz "^$fn\$" -fuzztime "$FUZZTIME" "./$dir" >"$log" 2>&1; then
			echo "ok    $dir $fn"
			passed=$((passed + 1))
			break
		fi
		new=$(comm -13 <(printf '%s\n' "$before") <(inputs "$dir" "$fn") | sed '/^$/d')
		if [ -z "$new" ] && [ "$attempt" = 1 ] && grep -q 'context deadline exceeded' "$log"; then
			echo "again $dir $fn: ended with \"context deadline exceeded\" and no failing input (golang/go#75804)"
			retried=$((retried + 1))
			continue
		fi
		echo "FAIL  $dir $fn"
		for f in $new; do
			echo "      failing input: $dir/testdata/fuzz/$fn/$f"
		done
		sed 's/^/      /' "$log" | tail -40
		failed=$((failed + 1))
		break
	done
done <<<"$targets"

echo "fuzz: $passed passed, $failed failed, $retried repeated after the coordinator's deadline race (FUZZTIME=$FUZZTIME each)"
[ "$failed" -eq 0 ]
