#!/usr/bin/env bash
# Starts a private Docker daemon for claw's sandbox tests and benchmarks (CI and local runs),
# or reuses the one already answering on the same socket. Needs root and `dockerd`.
#
#   eval "$(scripts/start-dockerd.sh)"     # prints: export DOCKER_HOST=unix://…
#
# Everything lives under CLAW_DOCKERD_DIR (default /tmp/claw-dockerd): data, exec state,
# socket, pid file and log, so it never touches a system daemon's /var/lib/docker. No
# bridge, no iptables: sandbox containers run with network "none", and machines like CI
# runners often forbid changing the host's firewall.
set -euo pipefail

dir="${CLAW_DOCKERD_DIR:-/tmp/claw-dockerd}"
sock="$dir/docker.sock"
host="unix://$sock"
log="$dir/dockerd.log"

say() { echo "start-dockerd: $*" >&2; }

if DOCKER_HOST="$host" docker info >/dev/null 2>&1; then
  say "reusing the daemon on $sock"
  echo "export DOCKER_HOST=$host"
  exit 0
fi

command -v dockerd >/dev/null || { say "dockerd is not installed (apt-get install -y docker.io)"; exit 1; }
[ "$(id -u)" = 0 ] || { say "dockerd must be started as root"; exit 1; }

mkdir -p "$dir/data" "$dir/exec"
chmod 700 "$dir"
# A daemon that died uncleanly leaves its pid file and socket behind; dockerd refuses both.
if [ -f "$dir/dockerd.pid" ] && ! kill -0 "$(cat "$dir/dockerd.pid")" 2>/dev/null; then
  rm -f "$dir/dockerd.pid"
fi
rm -f "$sock"

# setsid: the daemon outlives the shell that started it (CI step, test run).
setsid dockerd \
  --iptables=false --ip-masq=false --bridge=none \
  --data-root "$dir/data" --exec-root "$dir/exec" \
  -H "$host" --pidfile "$dir/dockerd.pid" \
  >"$log" 2>&1 </dev/null &

for _ in $(seq 1 120); do
  if DOCKER_HOST="$host" docker info >/dev/null 2>&1; then
    say "dockerd ready on $sock (log: $log)"
    echo "export DOCKER_HOST=$host"
    exit 0
  fi
  sleep 0.5
done
say "dockerd did not answer within 60 s; last log lines:"
tail -n 20 "$log" >&2 || true
exit 1
