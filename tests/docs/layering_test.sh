#!/bin/bash
# Each folder includes only from the folders docs/design.md's layout table lets it use (and
# from itself): the table is the rule, so the design doc and the code cannot drift apart. Includes of
# other trees (Slurm's, system headers) are not ours and are not checked.
set -u
S=${XPART_SRCDIR:?set by make check}
rows=$(grep -E '^\| `[a-z_]+/` \|' "$S/docs/design.md")
[ -n "$rows" ] || { echo "FAIL: no layout table in docs/design.md"; exit 1; }
ours=$(sed -E 's/^\| `([a-z_]+)\/`.*/\1/' <<<"$rows" | sort -u)
failed=0
checked=0
while IFS= read -r row; do
    folder=$(sed -E 's/^\| `([a-z_]+)\/`.*/\1/' <<<"$row")
    allowed=" $folder $(awk -F'|' '{print $4}' <<<"$row" | grep -oE '[a-z_]+/' | tr -d / | tr '\n' ' ')"
    [ -d "$S/$folder" ] || { echo "FAIL: docs/design.md names $folder/, which does not exist"; failed=$((failed + 1)); continue; }
    while IFS=: read -r file line inc; do
        used=${inc%%/*}
        grep -qx "$used" <<<"$ours" || continue
        checked=$((checked + 1))
        case "$allowed " in *" $used "*) ;; *)
            echo "FAIL: ${file#"$S"/}:$line includes $inc, but $folder/ may use only:$allowed"
            failed=$((failed + 1)) ;;
        esac
    done < <(grep -rnoE '^#include "[a-z_]+/[^"]+"' "$S/$folder" --include='*.cpp' --include='*.hpp' \
                 --include='*.c' --include='*.h' | sed -E 's/:#include "/:/; s/"$//')
done <<<"$rows"
# Root's side of MPS knows the user's, never the other way (docs/design.md, mps/): nothing in
# mps/ outside mps/root/ includes mps/root/ (root's cgroups reach the user's side only as its
# DaemonHousing interface).
while IFS=: read -r file line inc; do
    echo "FAIL: ${file#"$S"/}:$line includes $inc: mps/ may not know mps/root/"
    failed=$((failed + 1))
done < <(grep -rnoE '^#include "mps/root/[^"]+"' "$S/mps" --exclude-dir=root --include='*.cpp' --include='*.hpp' |
             sed -E 's/:#include "/:/; s/"$//')
# Every source folder is in the table.
for d in "$S"/*/; do
    d=$(basename "$d")
    [ "$d" = tests ] && continue  # tests may use any folder
    ls "$S/$d"/*.cpp >/dev/null 2>&1 || continue
    grep -qx "$d" <<<"$ours" || { echo "FAIL: $d/ holds sources but has no row in docs/design.md's layout"; failed=$((failed + 1)); }
done
echo "layering: $checked includes checked, $failed violations"
[ "$checked" -gt 100 ] || { echo "FAIL: too few includes checked ($checked): the table was not read"; exit 1; }
[ "$failed" -eq 0 ]
