#!/bin/bash
# Every option, subcommand and environment variable the built programs' --help shows must be in
# their man page, every xpart.conf key the parser accepts in xpart.conf.5 and in the shipped
# etc/xpart.conf, and every SPANK option and plugstack.conf key in xpart-spank.8 (the keys also
# in etc/plugstack.conf). Walks the subcommand tree from the help output itself, so a new
# option or subcommand without documentation fails here.
set -u
S=${XPART_SRCDIR:?set by make check}
B=${XPART_BUILDDIR:?set by make check}
pass=0
failed=0

check() {  # check <what> <condition command...>
    local what=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $what"
    fi
}

# The man page as plain text: roff escapes \- and font changes \fB... removed.
plain_man() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\e/\\/g' "$1"; }

# Is the long option (e.g. --gres-conf) in the text as a whole word?
has_option() { grep -qE -- "(^|[^a-zA-Z0-9-])$2([^a-zA-Z0-9-]|\$)" <<<"$1"; }
# Is the subcommand name a word on a roff macro line (.SS, .TP, .B headings)?
has_command() { grep -E '^\.' <<<"$1" | grep -qE -- "(^|[^a-zA-Z0-9-])$2([^a-zA-Z0-9-]|\$)"; }
has_word() { grep -qwF -- "$2" <<<"$1"; }

# walk <program> <man page text> <subcommand words...>: checks this level, then recurses.
walk() {
    local prog=$1 man=$2
    shift 2
    local where="$(basename "$prog")${*:+ $*}"
    visited+=("$where")
    local help
    if ! help=$("$prog" "$@" --help 2>&1); then
        check "$where --help exits 0" false
        return
    fi
    local opt env sub
    for opt in $(grep -oE -- '--[a-zA-Z][a-zA-Z0-9-]*' <<<"$help" | sort -u); do
        check "$where: option $opt missing from the man page" has_option "$man" "$opt"
    done
    for env in $(grep -oE 'Env:[A-Z_][A-Z0-9_]*' <<<"$help" | cut -d: -f2 | sort -u); do
        check "$where: environment variable $env missing from the man page" has_word "$man" "$env"
    done
    for sub in $(awk 'tolower($0) ~ /^subcommands:/ {on = 1; next}
                      on && /^$/ {on = 0}
                      on && /^  [a-z]/ {print $1}' <<<"$help"); do
        check "$where: subcommand '$sub' missing from the man page" has_command "$man" "$sub"
        walk "$prog" "$man" "$@" "$sub"
    done
}

xpart_man=$(plain_man "$S/man/xpart.1")
sim_man=$(plain_man "$S/man/xpart-sim.1")
conf_man=$(plain_man "$S/man/xpart.conf.5")

visited=()
walk "$B/xpart" "$xpart_man"
walk "$B/xpart-sim" "$sim_man"
# The walk must reach the leaves: a changed help layout must not pass vacuously.
for expected in "xpart discover" "xpart cgroup apply" "xpart cgroup show" "xpart cgroup clear" \
    "xpart launch" "xpart mps start" "xpart mps stop" "xpart mps status" "xpart mps cleanup" \
    "xpart-sim build" "xpart-sim check"; do
    check "the --help walk reached '$expected'" \
        grep -qxF "$expected" < <(printf '%s\n' "${visited[@]}")
done

# Every key the parser accepts (its `key == "..."` branches), case-insensitively as Key=.
keys=$(grep -oE 'key == "[a-z]+"' "$S/libxpart/gres/xpart_conf.cpp" | cut -d'"' -f2 | sort -u)
check "keys found in libxpart/gres/xpart_conf.cpp" test "$(wc -w <<<"$keys")" -ge 6
for key in $keys; do
    check "xpart.conf key $key missing from man/xpart.conf.5" \
        grep -qiE "^\.(B|BI|TP).*(^|[^a-z])$key=" <<<"$conf_man"
    check "xpart.conf key $key missing from etc/xpart.conf" \
        grep -qiE "^#?$key=" "$S/etc/xpart.conf"
done

# The SPANK plugin: every option of its table (spank_plugin/xpart_spank.cpp) in xpart-spank.8,
# and every plugstack.conf key step_options.cpp accepts there (as a .B/.BI/.BR/.TP key= line)
# and in the shipped etc/plugstack.conf (as a commented key= word).
spank_man=$(plain_man "$S/man/xpart-spank.8")
spank_options=$(grep -oE 'const_cast<char\*>\("xpart-[a-z-]+"\)' "$S/spank_plugin/xpart_spank.cpp" |
    cut -d'"' -f2 | sort -u)
check "SPANK options found in spank_plugin/xpart_spank.cpp" test "$(wc -w <<<"$spank_options")" -ge 3
for opt in $spank_options; do
    check "SPANK option --$opt missing from man/xpart-spank.8" has_option "$spank_man" "--$opt"
done
spank_keys=$(grep -oE 'key == "[a-z_]+"' "$S/spank_plugin/step_options.cpp" | cut -d'"' -f2 | sort -u)
check "plugstack.conf keys found in spank_plugin/step_options.cpp" test "$(wc -w <<<"$spank_keys")" -ge 6
for key in $spank_keys; do
    check "plugstack.conf key $key missing from man/xpart-spank.8" \
        grep -qE "^\.(B|BI|BR|TP).*(^|[^a-z_])$key=" <<<"$spank_man"
    check "plugstack.conf key $key missing from etc/plugstack.conf" \
        grep -qE "^#.* $key=" "$S/etc/plugstack.conf"
done

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
