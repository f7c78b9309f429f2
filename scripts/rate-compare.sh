#!/usr/bin/env bash
# Compares the benchmark rates of two lode binaries on this machine's GPUs:
#   scripts/rate-compare.sh OLD_LODE NEW_LODE [SECONDS] [ROUNDS]
# For each device (DEVICES, default "cuda:0 opencl:0") and algorithm
# (ALGOS, default "sha256d scrypt momentum") it runs `lode --benchmark` of
# the old and the new binary in turn, ROUNDS times (default 2), SECONDS each
# (default 8), and prints per pair the best rate of each and new/old. A
# restructure that changes no kernel should print ratios within 1% of 1.
# Trial factoring: TF="EXPONENT LOW HIGH" (default "66362159 70 71"; TF=""
# skips it) is run by both binaries on the first device, and the candidates
# per second of their summaries compared.
set -u
old=${1:?usage: scripts/rate-compare.sh OLD_LODE NEW_LODE [SECONDS] [ROUNDS]}
new=${2:?usage: scripts/rate-compare.sh OLD_LODE NEW_LODE [SECONDS] [ROUNDS]}
# Absolute paths: the trial-factoring runs start in a folder of their own.
old=$(realpath "$old")
new=$(realpath "$new")
secs=${3:-8}
rounds=${4:-2}
devices=${DEVICES:-cuda:0 opencl:0}
algos=${ALGOS:-sha256d scrypt momentum}
work=$(mktemp -d)
rows=()

bench_rate() { # bench_rate LODE DEV ALGO: the total rate the benchmark prints
    "$1" -a "$3" -d "$2" --benchmark --time-limit "$secs" -q 2>/dev/null | awk '/ total /{print $3}'
}
tf_rate() { # tf_rate LODE DEV: the candidates per second of its summary line
    local dir="$work/tf-$RANDOM"
    mkdir -p "$dir"
    read -r exponent low high <<<"${TF:-66362159 70 71}"
    (cd "$dir" && "$1" tf "$exponent" "$low" "$high" -d "$2" --no-checkpoints --no-color 2>&1) |
        awk -v dev="$2:" '$0 ~ "summary: " dev {
            for (i = 1; i < NF; i++) if ($(i + 1) ~ /^candidates\/s/ || $(i + 2) ~ /^candidates\/s/) {
                m = $(i + 1) == "G" ? 1e9 : $(i + 1) == "M" ? 1e6 : $(i + 1) == "k" ? 1e3 : 1
                printf "%.0f\n", $i * m; exit } }'
}
best() { sort -g | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a > 0) printf "%.4f", b/a; else print "n/a" }'; }

for dev in $devices; do
    for algo in $algos; do
        : >"$work/old" && : >"$work/new"
        for ((i = 0; i < rounds; i++)); do
            bench_rate "$old" "$dev" "$algo" >>"$work/old"
            bench_rate "$new" "$dev" "$algo" >>"$work/new"
        done
        o=$(best <"$work/old"); n=$(best <"$work/new")
        rows+=("$(printf '%-10s %-9s %16s %16s %8s' "$dev" "$algo" "${o:-0}" "${n:-0}" "$(ratio "${o:-0}" "${n:-0}")")")
    done
done
first=${devices%% *}
if [ -n "${TF-default}" ]; then
    : >"$work/old" && : >"$work/new"
    for ((i = 0; i < rounds; i++)); do
        tf_rate "$old" "$first" >>"$work/old"
        tf_rate "$new" "$first" >>"$work/new"
    done
    o=$(best <"$work/old"); n=$(best <"$work/new")
    rows+=("$(printf '%-10s %-9s %16s %16s %8s' "$first" "tf" "$o" "$n" "$(ratio "$o" "$n")")")
fi
rm -rf "$work"
printf '%-10s %-9s %16s %16s %8s\n' device algo old new new/old
printf '%s\n' "${rows[@]}"
