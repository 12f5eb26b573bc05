#!/bin/bash
# Interleaved, on loopback against benchmarks/stamp-server.c on CPU 1 (clients on CPU 0):
# the client share at 1k and 10k requests/s with the server sleeping or spinning in
# epoll, for dispatch poll and wake; then wake vs poll at fixed rates (10-s Server runs).
# Usage (after npm run build:ts): benchmarks/net-dispatch-ab.sh [OUT.jsonl]
cd "$(dirname "$0")/.."
out=${1:-benchmarks/net-dispatch.jsonl}
server=$(mktemp -d)/stamp-server
cc -O2 -o $server benchmarks/stamp-server.c || exit 1
: > $out
start_server() { # $1: mode (sleep|spin)
  coproc SRV { $server 1 $1; }
  read -r line <&${SRV[0]}; port=${line#PORT }; url=http://127.0.0.1:$port
}
stop_server() { kill $SRV_PID 2>/dev/null; wait $SRV_PID 2>/dev/null; }
for round in 1 2; do
  for smode in sleep spin; do
    start_server $smode
    for d in poll wake; do
      for qps in 1000 10000; do
        spec="{\"kind\":\"net-server\",\"url\":\"$url\",\"dispatch\":\"$d\",\"targetQps\":$qps,\"durationMs\":5000,\"targetLatencyNs\":10000000,\"connections\":32,\"warmupMs\":2000,\"clientShare\":true}"
        r=$(taskset -c 0 node dist/bench/trial.js "$spec" | tail -1)
        echo "{\"exp\":\"share\",\"server\":\"$smode\",\"round\":$round,\"dispatch\":\"$d\",\"qps\":$qps,\"r\":$r}" >> $out
      done
    done
    stop_server
  done
done
start_server sleep
for round in 1 2; do
  for qps in 6000 9000 12000; do
    for d in wake poll; do
      spec="{\"kind\":\"net-server\",\"url\":\"$url\",\"dispatch\":\"$d\",\"targetQps\":$qps,\"durationMs\":10000,\"targetLatencyNs\":10000000,\"connections\":32,\"warmupMs\":2000,\"clientShare\":false}"
      r=$(taskset -c 0 node dist/bench/trial.js "$spec" | tail -1)
      echo "{\"exp\":\"rate\",\"server\":\"sleep\",\"round\":$round,\"dispatch\":\"$d\",\"qps\":$qps,\"r\":$r}" >> $out
    done
  done
done
stop_server
echo done
