#!/bin/bash
# Each folder includes only from the folders docs/design.md's layout table lets it use (and
# from itself): the table is the rule, so the design doc and the code cannot drift apart. Includes of
# other trees (Slurm's, system headers) are not ours and are not checked.
set -u
S=${XPART_SRCDIR:?set by make check}
rows=$(grep -E '^\| `[a-z_/]+/` \|' "$S/docs/design.md")
[ -n "$rows" ] || { echo "FAIL: no layout table in docs/design.md"; exit 1; }
ours=$(sed -E 's/^\| `([a-z_/]+)\/`.*/\1/' <<<"$rows" | sort -u)
declare -A may_use namespace_of
failed=0
while IFS= read -r row; do
    folder=$(sed -E 's/^\| `([a-z_/]+)\/`.*/\1/' <<<"$row")
    may_use[$folder]=$(awk -F'|' '{print $4}' <<<"$row" | grep -oE '[a-z_/]+/' | sed 's|/$||' | tr '\n' ' ')
    namespace_of[$folder]=$(awk -F'|' '{print $5}' <<<"$row" | grep -oE '[a-z_:]+' | head -n1)
    [ -n "${namespace_of[$folder]}" ] || { echo "FAIL: docs/design.md's row of $folder/ names no namespace"; failed=$((failed + 1)); }
    [ -d "$S/$folder" ] || { echo "FAIL: docs/design.md names $folder/, which does not exist"; failed=$((failed + 1)); }
done <<<"$rows"
# The row a path belongs to: the longest row folder it lies in ("" when none, not ours).
row_of() {
    local best="" r
    for r in $ours; do
        case "$1" in "$r"/*) [ ${#r} -gt ${#best} ] && best=$r ;; esac
    done
    echo "$best"
}
# A folder sees a row it names whole, subfolders included, from outside it (cli/ names
# libxpart/); inside a folder each subfolder's row names exactly which of its siblings it uses.
allowed() {  # allowed OWNER USED
    local a
    [ "$2" = "$1" ] && return 0
    for a in ${may_use[$1]}; do
        [ "$2" = "$a" ] && return 0
        case "$2/" in "$a"/*) case "$1/" in "$a"/*) ;; *) return 0 ;; esac ;; esac
    done
    return 1
}
checked=0
for top in $(sed 's|/.*||' <<<"$ours" | sort -u); do
    while IFS=: read -r file line inc; do
        rel=${file#"$S"/}
        owner=$(row_of "$rel")
        used=$(row_of "$inc")
        [ -n "$used" ] || continue
        checked=$((checked + 1))
        allowed "$owner" "$used" || {
            echo "FAIL: $rel:$line includes $inc, but $owner/ may use only: $owner ${may_use[$owner]}"
            failed=$((failed + 1))
        }
    done < <(grep -rnoE '^#include "[a-z_]+/[^"]+"' "$S/$top" --include='*.cpp' --include='*.hpp' \
                 --include='*.c' --include='*.h' | sed -E 's/:#include "/:/; s/"$//')
done
# Root's side of MPS knows the user's, never the other way (docs/design.md, mps/): nothing in
# mps/ outside mps/root/ includes mps/root/ (root's cgroups reach the user's side only as its
# DaemonHousing interface).
while IFS=: read -r file line inc; do
    echo "FAIL: ${file#"$S"/}:$line includes $inc: mps/ may not know mps/root/"
    failed=$((failed + 1))
done < <(grep -rnoE '^#include "mps/root/[^"]+"' "$S/mps" --exclude-dir=root --include='*.cpp' --include='*.hpp' |
             sed -E 's/:#include "/:/; s/"$//')
# The namespace says the folder: each named namespace a file opens is its row's (or one inside
# it, as xpart::nvml in libxpart/nvidia/); anonymous ones and aliases are not names.
namespaces=0
while IFS=: read -r file line ns; do
    rel=${file#"$S"/}
    owner=$(row_of "$rel")
    [ -n "$owner" ] || continue
    namespaces=$((namespaces + 1))
    want=${namespace_of[$owner]}
    [ "$ns" = "$want" ] || [[ "$ns" == "$want"::* ]] || {
        echo "FAIL: $rel:$line opens namespace $ns, but $owner/'s is $want (docs/design.md)"
        failed=$((failed + 1))
    }
done < <(grep -rnoE '^namespace [a-z_:]+ \{' "$S" --include='*.cpp' --include='*.hpp' --include='*.h' \
             --exclude-dir=tests --exclude-dir=.git | sed -E 's/:namespace ([a-z_:]+) \{$/:\1/')
echo "namespaces: $namespaces openings checked"
[ "$namespaces" -gt 100 ] || { echo "FAIL: too few namespaces checked ($namespaces)"; failed=$((failed + 1)); }
# Every source folder is in the table.
for d in "$S"/*/; do
    d=$(basename "$d")
    [ "$d" = tests ] && continue  # tests may use any folder
    ls "$S/$d"/*.cpp >/dev/null 2>&1 || continue
    grep -q "^$d\(/\|$\)" <<<"$ours" || { echo "FAIL: $d/ holds sources but has no row in docs/design.md's layout"; failed=$((failed + 1)); }
done
echo "layering: $checked includes checked, $failed violations"
[ "$checked" -gt 100 ] || { echo "FAIL: too few includes checked ($checked): the table was not read"; exit 1; }
[ "$failed" -eq 0 ]
