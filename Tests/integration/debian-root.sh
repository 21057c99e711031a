#!/usr/bin/env bash
# Makes (or reuses) a Debian root for tests of today's desktops: debootstrap --variant=minbase of
# SUITE from the Debian archive this machine's apt uses, then the packages listed in LIST
# (one a line, # comments), installed without Recommends inside a private mount namespace.
#   Tests/integration/debian-root.sh SUITE LIST ROOT
# The root is kept between runs: it is made anew only when LIST (or this script) changed since it
# was made, recorded in ROOT/.qactd-packages. It is built in ROOT.new and renamed when complete,
# so an interrupted run never leaves a half-made root in use. Prints ROOT.
# Exit status: 0 ready, 1 failed, 77 cannot be made here (needs root, debootstrap, unshare and
# the archive; under CI=true that is a failure instead).
set -euo pipefail

suite=${1:?usage: $0 SUITE LIST ROOT}
list=$(realpath "${2:?usage: $0 SUITE LIST ROOT}")
root=${3:?usage: $0 SUITE LIST ROOT}
name="debian-root ($suite)"

skip() {
    if [[ "${CI:-}" == "true" ]]; then
        echo "$name: FAIL: cannot make the root, and CI=true does not allow a skip: $*" >&2
        exit 1
    fi
    echo "$name: SKIP: $*" >&2
    exit 77
}

stamp=$( (cat "$list"; cat "$0") | sha256sum | cut -d' ' -f1)
if [[ -f "$root/.qactd-packages" && "$(cat "$root/.qactd-packages")" == "$stamp" ]]; then
    echo "$root"
    exit 0
fi

[[ $(id -u) -eq 0 ]] || skip "needs root for debootstrap and chroot"
command -v debootstrap >/dev/null || skip "debootstrap is not installed (scripts/install-deps --test)"
command -v unshare >/dev/null || skip "unshare is not installed"
if ! problem=$(unshare -m true 2>&1); then skip "unshare -m is not permitted here: $problem"; fi

# The mirror this machine's apt already reaches (Debian's archive: the first deb.debian.org-like URI).
mirror=$(grep -hoE '^(URIs:|deb) *https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
    grep -oE 'https?://[^ ]+' | head -n1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
mapfile -t packages < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list" | tr -s ' \t' '\n' | sed '/^$/d')

started=$SECONDS
building=$root.new
rm -rf "$building" "$root.old"
mkdir -p "$(dirname "$root")"
log=$(dirname "$root")/$(basename "$root").log
echo "$name: debootstrap --variant=minbase $suite from $mirror into $building (log: $log)" >&2
if ! debootstrap --variant=minbase "$suite" "$building" "$mirror" >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    grep -qiE 'Failed getting release file|Couldn.t download|Temporary failure' "$log" && skip "Debian's archive ($mirror) is not reachable"
    echo "$name: FAIL: debootstrap failed (above)" >&2
    exit 1
fi
echo "$name: debootstrap took $((SECONDS - started)) s" >&2
installing=$SECONDS
# Inside a private mount namespace, so the root's /proc, /dev and /sys go with it.
if ! unshare -m --propagation private -- bash -euo pipefail -c '
    root=$1; shift
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount --rbind /sys "$root/sys"
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    chroot "$root" env DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 apt-get update -q
    chroot "$root" env DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 \
        apt-get install -y -q --no-install-recommends "$@"
    chroot "$root" apt-get clean
' bash "$building" "${packages[@]}" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "$name: FAIL: installing the packages of '$list' failed (above)" >&2
    exit 1
fi
echo "$name: the packages took $((SECONDS - installing)) s; $(du -sm "$building" | cut -f1) MiB in all" >&2
echo "$stamp" >"$building/.qactd-packages"
[[ -e "$root" ]] && mv "$root" "$root.old"
mv "$building" "$root"
rm -rf "$root.old"
echo "$root"
