#!/usr/bin/env bash
# Interleaved A/B of bench trials: two builds of loadgen alternating trial by
# trial, 3 rounds (the host's drift hits both alike). Usage:
#   benchmarks/ab-trials.sh OUT.jsonl BEFORE_TRIAL_JS AFTER_TRIAL_JS
# e.g. a worktree of the old commit's dist/bench-trial.js and this checkout's
# dist/bench/trial.js; then node benchmarks/ab-report.mjs OUT.jsonl.
out=$1
before_trial=$2
after_trial=$3
: > $out
specs=(
'{"kind":"server","sut":"null-native","targetQps":10000,"durationMs":3000,"targetLatencyNs":10000000}'
'{"kind":"server","sut":"wake","targetQps":10000,"durationMs":3000,"targetLatencyNs":10000000}'
'{"kind":"server","sut":"poll","targetQps":10000,"durationMs":3000,"targetLatencyNs":10000000}'
'{"kind":"server","sut":"worker","targetQps":10000,"durationMs":3000,"targetLatencyNs":10000000}'
'{"kind":"server","sut":"wake","targetQps":100000,"durationMs":3000,"targetLatencyNs":10000000}'
'{"kind":"single-stream","sut":"null-native","durationMs":2000}'
'{"kind":"single-stream","sut":"wake","durationMs":2000}'
'{"kind":"single-stream","sut":"poll","durationMs":2000}'
'{"kind":"single-stream","sut":"worker","durationMs":2000}'
'{"kind":"offline","sut":"null-native","samples":1000000}'
'{"kind":"offline","sut":"wake","samples":1000000}'
'{"kind":"offline","sut":"poll","samples":1000000}'
'{"kind":"offline","sut":"worker","samples":1000000}'
'{"kind":"server","sut":"poll","targetQps":100000,"durationMs":3000,"targetLatencyNs":10000000}'
# The object path (issueQuery) measured on its own where a build has both (a build without `path` ignores it).
'{"kind":"single-stream","sut":"wake","durationMs":2000,"path":"objects"}'
'{"kind":"offline","sut":"wake","samples":1000000,"path":"objects"}'
'{"kind":"offline","sut":"poll","samples":1000000,"path":"objects"}'
'{"kind":"offline","sut":"worker","samples":1000000,"path":"objects"}'
)
for round in 1 2 3; do
  for spec in "${specs[@]}"; do
    for v in base main; do
      if [ $v = base ]; then T=$before_trial; else T=$after_trial; fi
      r=$(node $T "$spec" | tail -1)
      echo "{\"v\":\"$v\",\"round\":$round,\"spec\":$spec,\"r\":$r}" >> $out
    done
  done
done
