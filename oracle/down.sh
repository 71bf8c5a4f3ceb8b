#!/usr/bin/env bash
# Stops the processes oracle/up.sh started, by their saved pids, and nothing else.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${ORACLE_DIR:-$(cd "$here/.." && pwd)/.oracle}
for name in kube-apiserver etcd; do
  pidfile=$dir/$name.pid
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "oracle: stopped $name (pid $pid)"
  fi
  rm -f "$pidfile"
done
