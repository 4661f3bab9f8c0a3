#!/bin/sh
# treebox egress firewall: default-deny outbound traffic, then allow only
#   - loopback, and replies on connections that are already established;
#   - DNS (port 53, UDP and TCP) to the resolvers in /etc/resolv.conf;
#   - every host and CIDR in the allowlist (one a line, `#` comments); host names are
#     resolved now, so re-apply after a restart (treebox does) to follow address changes.
#
# Usage (as root): treebox-init-firewall [ALLOWLIST | -]
#   ALLOWLIST defaults to /etc/treebox/allowlist.txt; `-` reads it from stdin. Through
#   sudo the agent may run it only without arguments.
#
# Idempotent: the rules live in a chain of their own (TREEBOX-A or TREEBOX-B), built
# whole beside the one in use and then swapped in; only the filter table's OUTPUT chain
# is touched, so the engine's own NAT rules (Docker's embedded DNS) keep working.
#
# Fails closed: any failure (an allowlist line that is neither a host nor a CIDR, a
# host that does not resolve, an iptables error) leaves all egress but loopback denied
# and exits non-zero. IPv6 is filtered the same way when the container has IPv6; if it
# has IPv6 but ip6tables does not work, that is a failure too.

set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
umask 077

ALLOWLIST=${1:-/etc/treebox/allowlist.txt}
TMP=

say() { printf 'treebox-firewall: %s\n' "$*" >&2; }

# Deny all egress but loopback, in both families, whatever state the rules are in.
lockdown() {
    for t in iptables ip6tables; do
        command -v "$t" >/dev/null 2>&1 || continue
        "$t" -w -P OUTPUT DROP 2>/dev/null
        "$t" -w -F OUTPUT 2>/dev/null
        "$t" -w -A OUTPUT -o lo -j ACCEPT 2>/dev/null
    done
}

fail() {
    say "$*"
    say "egress is denied (loopback only)"
    lockdown
    [ -n "$TMP" ] && rm -rf "$TMP"
    exit 1
}

trap 'fail "interrupted"' HUP INT TERM

[ "$(id -u)" = 0 ] || { say "must run as root"; exit 1; }
[ $# -le 1 ] || fail "usage: treebox-init-firewall [ALLOWLIST | -]"
command -v iptables >/dev/null 2>&1 || fail "iptables is not installed"
command -v getent >/dev/null 2>&1 || fail "getent is not installed"

TMP=$(mktemp -d) || fail "cannot make a temporary directory"
: >"$TMP/v4"
: >"$TMP/v6"

# Does this container have IPv6 beyond loopback?
has_v6() {
    [ -r /proc/net/if_inet6 ] || return 1
    [ "$(cat /proc/sys/net/ipv6/conf/all/disable_ipv6 2>/dev/null || echo 0)" = 1 ] && return 1
    awk '$6 != "lo" { found = 1 } END { exit !found }' /proc/net/if_inet6
}
V6=0
if has_v6; then
    command -v ip6tables >/dev/null 2>&1 || fail "the container has IPv6 but ip6tables is missing"
    V6=1
fi

is_v4_cidr() {
    printf '%s\n' "$1" | awk -F/ '
        NF > 2 { exit 1 }
        {
            n = split($1, o, ".")
            if (n != 4) exit 1
            for (i = 1; i <= 4; i++) if (o[i] !~ /^[0-9]+$/ || o[i] > 255) exit 1
            if (NF == 2 && ($2 !~ /^[0-9]+$/ || $2 > 32)) exit 1
        }'
}
is_v6_cidr() {
    printf '%s\n' "$1" | awk -F/ '
        NF > 2 { exit 1 }
        {
            if ($1 !~ /^[0-9A-Fa-f:.]+$/ || $1 !~ /:/) exit 1
            if (NF == 2 && ($2 !~ /^[0-9]+$/ || $2 > 128)) exit 1
        }'
}
is_host() {
    printf '%s\n' "$1" | awk '
        length($0) > 253 { exit 1 }
        $0 !~ /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/ { exit 1 }'
}

# The allowlist, parsed and resolved before any rule changes (DNS still works).
if [ "$ALLOWLIST" = - ]; then
    cat >"$TMP/allowlist" || fail "cannot read the allowlist from stdin"
else
    [ -f "$ALLOWLIST" ] || fail "$ALLOWLIST: no such file"
    cat "$ALLOWLIST" >"$TMP/allowlist" || fail "$ALLOWLIST: cannot read"
fi
n=0
while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    entry=$(printf '%s\n' "$line" | sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
    [ -n "$entry" ] || continue
    case "$entry" in
        *[[:space:]]*) fail "allowlist line $n: one host or CIDR per line: '$entry'" ;;
    esac
    if is_v4_cidr "$entry"; then
        echo "$entry" >>"$TMP/v4"
    elif is_v6_cidr "$entry"; then
        echo "$entry" >>"$TMP/v6"
    elif is_host "$entry"; then
        v4=$(getent ahostsv4 "$entry" 2>/dev/null | awk '{ print $1 }' | sort -u)
        v6=
        [ "$V6" = 1 ] && v6=$(getent ahostsv6 "$entry" 2>/dev/null | awk '$1 ~ /:/ && $1 !~ /^::ffff:/ { print $1 }' | sort -u)
        [ -n "$v4$v6" ] || fail "allowlist line $n: $entry does not resolve"
        [ -n "$v4" ] && printf '%s\n' "$v4" >>"$TMP/v4"
        [ -n "$v6" ] && printf '%s\n' "$v6" >>"$TMP/v6"
    else
        fail "allowlist line $n: not a host name or CIDR: '$entry'"
    fi
done <"$TMP/allowlist"

# DNS resolvers from resolv.conf (loopback ones, like Docker's 127.0.0.11, are covered
# by the loopback rule).
awk '$1 == "nameserver" && $2 !~ /:/ { print $2 }' /etc/resolv.conf 2>/dev/null | sort -u >"$TMP/dns4"
awk '$1 == "nameserver" && $2 ~ /:/ { sub(/%.*/, "", $2); print $2 }' /etc/resolv.conf 2>/dev/null | sort -u >"$TMP/dns6"

# Build the new chain for one family, then swap it in.
apply() { # $1 = iptables | ip6tables, $2 = addresses file, $3 = resolvers file
    t=$1
    # Build in whichever of the two chains OUTPUT does not use now.
    if "$t" -w -C OUTPUT -j TREEBOX-A >/dev/null 2>&1; then
        NEW=TREEBOX-B OLD=TREEBOX-A
    else
        NEW=TREEBOX-A OLD=TREEBOX-B
    fi
    "$t" -w -N "$NEW" 2>/dev/null || "$t" -w -F "$NEW" || return 1
    "$t" -w -A "$NEW" -o lo -j ACCEPT || return 1
    "$t" -w -A "$NEW" -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT || return 1
    while IFS= read -r r; do
        [ -n "$r" ] || continue
        "$t" -w -A "$NEW" -d "$r" -p udp --dport 53 -j ACCEPT || return 1
        "$t" -w -A "$NEW" -d "$r" -p tcp --dport 53 -j ACCEPT || return 1
    done <"$3"
    sort -u "$2" | while IFS= read -r a; do
        [ -n "$a" ] || continue
        "$t" -w -A "$NEW" -d "$a" -j ACCEPT || exit 1
    done || return 1
    # Refuse quickly rather than let connections hang; the DROP policy stays behind it.
    "$t" -w -A "$NEW" -j REJECT 2>/dev/null || "$t" -w -A "$NEW" -j DROP || return 1

    # Swap: deny first, then point OUTPUT at the new chain alone, then retire the old.
    "$t" -w -P OUTPUT DROP || return 1
    "$t" -w -F OUTPUT || return 1
    "$t" -w -A OUTPUT -j "$NEW" || return 1
    if "$t" -w -n -L "$OLD" >/dev/null 2>&1; then
        "$t" -w -F "$OLD" || return 1
        "$t" -w -X "$OLD" || return 1
    fi
}

apply iptables "$TMP/v4" "$TMP/dns4" || fail "iptables failed"
if [ "$V6" = 1 ]; then
    apply ip6tables "$TMP/v6" "$TMP/dns6" || fail "ip6tables failed"
elif command -v ip6tables >/dev/null 2>&1; then
    # No IPv6 here; deny it anyway where the kernel lets us (best effort: nothing to leak).
    ip6tables -w -P OUTPUT DROP 2>/dev/null || true
fi

rm -rf "$TMP"
trap - HUP INT TERM
say "applied: egress denied except loopback, DNS and the allowlist"
exit 0
