#!/bin/bash
# Every option, subcommand and environment variable the built programs' --help shows must be in
# their man page, and every xpart.conf key the parser accepts in xpart.conf.5 and in the
# shipped etc/xpart.conf. Walks the subcommand tree from the help output itself, so a new
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
keys=$(grep -oE 'key == "[a-z]+"' "$S/libxpart/xpart_conf.cpp" | cut -d'"' -f2 | sort -u)
check "keys found in libxpart/xpart_conf.cpp" test "$(wc -w <<<"$keys")" -ge 6
for key in $keys; do
    check "xpart.conf key $key missing from man/xpart.conf.5" \
        grep -qiE "^\.(B|BI|TP).*(^|[^a-z])$key=" <<<"$conf_man"
    check "xpart.conf key $key missing from etc/xpart.conf" \
        grep -qiE "^#?$key=" "$S/etc/xpart.conf"
done

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
