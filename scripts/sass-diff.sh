#!/usr/bin/env bash
# Compares the CUDA machine code (SASS) of every kernel between a base git
# ref and the working tree: scripts/sass-diff.sh BASE_REF [ARCH]
#
# Each backend-cuda/*.cu of both trees is compiled to a cubin with the flags
# of the Release build (ARCH defaults to 90, i.e. sm_90), disassembled with
# cuobjdump -sass, split per function and normalised (addresses, encodings,
# comments, and the hash and source file name in anonymous-namespace names
# dropped, so kernels compare across renamed files), then diffed.
# Per kernel it prints "same" or the instruction and register counts before
# and after. Needs nvcc and cuobjdump, not a GPU. The per-kernel listings
# stay in $SASS_DIFF_DIR (default: a temporary folder, printed at the end).
#
# CUOBJDUMP names the disassembler (default: cuobjdump on PATH; without a
# full toolkit, `pip install nvidia-cuda-cuobjdump` ships one under
# nvidia/cu13/bin/). NVCC_EXTRA adds flags to both compiles (say an extra -I when the include
# layout moved between the two trees). Exit status: 0 when every kernel of
# both trees is the same, 1 when some differ, 2 on errors.
set -euo pipefail

base_ref=${1:?usage: scripts/sass-diff.sh BASE_REF [ARCH]}
arch=${2:-90}
root=$(git rev-parse --show-toplevel)
cuobjdump=${CUOBJDUMP:-cuobjdump}
out=${SASS_DIFF_DIR:-$(mktemp -d /tmp/sass-diff.XXXXXX)}
mkdir -p "$out/base-src" "$out/base" "$out/work"
git -C "$root" archive "$base_ref" | tar -x -C "$out/base-src"

flags=(-O3 -DNDEBUG -D_GNU_SOURCE -std=c++17 -Xcompiler=-Wall,-Wextra
       "--generate-code=arch=compute_$arch,code=sm_$arch" -cubin)
# shellcheck disable=SC2206
extra=(${NVCC_EXTRA:-})

# Compiles tree $1's backend-cuda/*.cu into $2/<name>.cubin, then splits the
# SASS into $2/<kernel>.sass and the resource usage into $2/<kernel>.res.
build() {
    local tree=$1 dst=$2 cu name
    for cu in "$tree"/backend-cuda/*.cu; do
        name=$(basename "$cu" .cu)
        nvcc "${flags[@]}" "${extra[@]}" -I"$tree" -I"$tree/core/backend_support" \
            -o "$dst/$name.cubin" "$cu"
        "$cuobjdump" -sass "$dst/$name.cubin" | awk -v dst="$dst" '
            function norm(s, z, pad) { # the per-build hash of anonymous namespaces, same length
                while (match(s, /_(INTERNAL_|GLOBAL__N__)[0-9a-f]+_/)) {
                    z = substr(s, RSTART, RLENGTH); sub(/_[0-9a-f]+_$/, "", z)
                    pad = sprintf("%*s", RLENGTH - length(z) - 2, ""); gsub(/ /, "Z", pad)
                    s = substr(s, 1, RSTART - 1) z "_" pad "_" substr(s, RSTART + RLENGTH)
                }
                # an anonymous namespace names its source file: drop it, so a renamed .cu
                # compares (12_GLOBAL__N_1 still demangles as the anonymous namespace)
                gsub(/[0-9]+_GLOBAL__N__Z+_[0-9]+_[A-Za-z0-9_]+_cu_[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]/, "12_GLOBAL__N_1", s)
                return s }
            /Function : / { f = norm($3); file = dst "/" f ".sass"; next }
            file != "" && /\/\*[0-9a-f]+\*\// {
                line = $0
                sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)  # address
                sub(/[ \t]*\/\* 0x[0-9a-f]+ \*\/[ \t]*$/, "", line) # encoding
                gsub(/[ \t]+/, " ", line)
                print norm(line) >> file
            }'
        "$cuobjdump" -res-usage "$dst/$name.cubin" | awk -v dst="$dst" '
            function norm(s, z, pad) { # the per-build hash of anonymous namespaces, same length
                while (match(s, /_(INTERNAL_|GLOBAL__N__)[0-9a-f]+_/)) {
                    z = substr(s, RSTART, RLENGTH); sub(/_[0-9a-f]+_$/, "", z)
                    pad = sprintf("%*s", RLENGTH - length(z) - 2, ""); gsub(/ /, "Z", pad)
                    s = substr(s, 1, RSTART - 1) z "_" pad "_" substr(s, RSTART + RLENGTH)
                }
                # an anonymous namespace names its source file: drop it, so a renamed .cu
                # compares (12_GLOBAL__N_1 still demangles as the anonymous namespace)
                gsub(/[0-9]+_GLOBAL__N__Z+_[0-9]+_[A-Za-z0-9_]+_cu_[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]/, "12_GLOBAL__N_1", s)
                return s }
            /Function / { f = norm($2); sub(/:$/, "", f); next }
            f != "" && /REG:/ { match($0, /REG:[0-9]+/); print substr($0, RSTART + 4, RLENGTH - 4) > (dst "/" f ".res"); f = "" }'
    done
}

echo "compiling $base_ref ..." >&2
build "$out/base-src" "$out/base"
echo "compiling the working tree ..." >&2
build "$root" "$out/work"

status=0
count() { grep -cv '^NOP$' "$1"; }
regs() { cat "${1%.sass}.res" 2>/dev/null || echo "?"; }
demangle() { if command -v c++filt >/dev/null; then c++filt "$1"; else echo "$1"; fi; }
for f in $( (cd "$out/base" && ls ./*.sass; cd "$out/work" && ls ./*.sass) 2>/dev/null | sort -u); do
    f=${f#./}
    k=${f%.sass}
    pretty=$(demangle "$k")
    if [[ ! -f $out/base/$f ]]; then
        echo "new      $pretty: $(count "$out/work/$f") instructions, $(regs "$out/work/$f") registers"
        status=1
    elif [[ ! -f $out/work/$f ]]; then
        echo "gone     $pretty"
        status=1
    elif cmp -s "$out/base/$f" "$out/work/$f"; then
        echo "same     $pretty ($(count "$out/work/$f") instructions, $(regs "$out/work/$f") registers)"
    else
        echo "DIFFERS  $pretty: $(count "$out/base/$f") -> $(count "$out/work/$f") instructions," \
             "$(regs "$out/base/$f") -> $(regs "$out/work/$f") registers" \
             "(diff $out/base/$f $out/work/$f)"
        status=1
    fi
done
echo "listings: $out" >&2
exit $status
