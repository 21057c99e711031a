#!/usr/bin/env bash
# Runs the installed qactd units under a real systemd user manager and journald,
# each started by hand inside a private mount namespace so nothing of
# the host's /run is touched. The manager runs as the unprivileged user
# "nobody", as a real user's manager would, so the unit's sandboxing settings
# are tested where they must work: without privileges. The namespace is shaped like a
# booted Debian system where the sandbox depends on it: /run is a mount point, the
# user's runtime folder is /run/user/UID and the home folder is under /home, not /tmp.
#   Tests/integration/systemd-user-manager.sh BUILDDIR
#   Tests/integration/systemd-user-manager.sh --deb PACKAGE.deb
# The first installs BUILDDIR's products with `make install PREFIX=~/.local` and puts the
# units through their paces. The second installs the Debian package as a user would
# (`dpkg -i`, over copy-on-write copies of /usr, /etc and /var in the namespace, with the
# Swift toolchain hidden), runs it from /usr/lib/systemd/user, then removes and purges it.
# Exit status: 0 passed, 1 failed, 77 skipped (needs root and unshare; under
# CI=true a skip is a failure instead).
set -euo pipefail

repository=$(cd "$(dirname "$0")/../.." && pwd)
usage="usage: $0 BUILDDIR | $0 --deb PACKAGE.deb"
package=
builddir=
if [[ "${1:-}" == --deb ]]; then
    package=$(realpath "${2:?$usage}")
    name=debian-package
else
    builddir=$(cd "${1:?$usage}" && pwd)
    name=systemd-user-manager
fi

skip() {
    if [[ "${CI:-}" == "true" ]]; then
        echo "$name: FAIL: cannot run, and CI=true does not allow a skip: $*" >&2
        exit 1
    fi
    echo "$name: SKIP: $*" >&2
    exit 77
}

if [[ "${QACTD_IN_PRIVATE_NAMESPACE:-}" != 1 ]]; then
    [[ $(id -u) -eq 0 ]] || skip "needs root to mount tmpfs on /run/systemd in a private mount namespace"
    # make only installs BUILDDIR's products; the package needs none of it.
    tools=(unshare setpriv mount journalctl systemctl python3)
    [[ -z "$package" ]] && tools+=(make)
    for tool in "${tools[@]}"; do
        command -v "$tool" >/dev/null || skip "'$tool' is not installed"
    done
    for program in /lib/systemd/systemd /lib/systemd/systemd-journald; do
        [[ -x "$program" ]] || skip "'$program' is not installed (Debian package systemd)"
    done
    if [[ -n "$package" ]]; then
        [[ -f "$package" ]] || { echo "$name: FAIL: '$package' does not exist" >&2; exit 1; }
        for tool in dpkg dpkg-deb dpkg-query ldd; do
            command -v "$tool" >/dev/null || skip "'$tool' is not installed"
        done
        grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || true
        grep -qw overlay /proc/filesystems || skip "the kernel has no overlayfs for copy-on-write copies of /usr, /etc and /var"
    else
        for product in qactd qactl; do
            [[ -x "$builddir/$product" ]] || { echo "$name: FAIL: '$builddir/$product' is not built" >&2; exit 1; }
        done
    fi
    if ! problem=$(unshare -m true 2>&1); then skip "unshare -m is not permitted here: $problem"; fi
    # The user manager needs a cgroup of its own; some containers mount cgroupfs read-only.
    probe=/sys/fs/cgroup/qactd-probe-$$
    [[ -d /sys/fs/cgroup/systemd ]] && probe=/sys/fs/cgroup/systemd/qactd-probe-$$
    if ! problem=$(mkdir "$probe" 2>&1); then skip "cannot create a cgroup for the user manager: $problem"; fi
    rmdir "$probe"
    export QACTD_IN_PRIVATE_NAMESPACE=1
    exec unshare -m --propagation private -- "$0" "$@"
fi

# ---------------------------------------------------------------- inside the namespace
started=$SECONDS
uid=$(id -u nobody)
gid=$(id -g nobody)
scratch=$(mktemp -d /tmp/qactd-systemd.XXXXXX)
chmod 0755 "$scratch"
# Not under /tmp, which PrivateTmp=yes replaces, and not $scratch/run: systemd 252 takes the
# nodes it mounts over inaccessible paths from /run/user/UID/systemd/inaccessible.
home=/home/qactd-test
runtime=/run/user/$uid
# Writable by anyone, outside /home, /run and /tmp: where the sandbox probe tries ProtectSystem=.
open_folder=/mnt
journal=/run/log/journal
manager_pid=
journald_pid=
# The manager must own a cgroup (a user's manager gets one delegated by
# user@.service). cgroupfs is not per mount namespace, so these are the host's:
# named after this run and removed at the end.
cgroup=qactd-test-$$
cgroup_hierarchies=()
for hierarchy in systemd unified; do
    [[ -d /sys/fs/cgroup/$hierarchy ]] && cgroup_hierarchies+=("/sys/fs/cgroup/$hierarchy")
done
((${#cgroup_hierarchies[@]})) || cgroup_hierarchies=(/sys/fs/cgroup)
daemon_pids=()

fail() {
    echo "$name: FAIL: $*" >&2
    exit 1
}

step() { echo "$name: [$((SECONDS - started))s] $*" >&2; }

# The user's side of everything: its uid, a clean environment, no pager or colour.
as_user() {
    setpriv --reuid="$uid" --regid="$gid" --clear-groups -- env -i HOME="$home" XDG_RUNTIME_DIR="$runtime" \
        PATH="$home/.local/bin:/usr/bin:/bin" LANG=C.UTF-8 NO_COLOR=1 SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"
}
sctl() { timeout 20 setpriv --reuid="$uid" --regid="$gid" --clear-groups -- env -i HOME="$home" \
    XDG_RUNTIME_DIR="$runtime" PATH=/usr/bin:/bin SYSTEMD_PAGER= SYSTEMD_COLORS=0 systemctl --user "$@"; }
property() { sctl show -p "$2" --value "$1"; }
qactl_path=$home/.local/bin/qactl
[[ -n "$package" ]] && qactl_path=/usr/bin/qactl
qactl() { as_user timeout 20 "$qactl_path" "$@"; }

# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds, failing after SECONDS.
wait_for() {
    local limit=$1 what=$2
    shift 2
    local deadline=$(($(date +%s%N) + limit * 1000000000))
    until "$@" >/dev/null 2>&1; do
        (($(date +%s%N) < deadline)) || fail "timed out after ${limit}s waiting for: $what"
        sleep 0.1
    done
}

manager_up() {
    [[ $(sctl is-system-running) =~ ^(running|degraded)$ ]]
}
service_running() {
    [[ $(property qactd.service ActiveState) == active && $(property qactd.service SubState) == running ]]
}
main_pid_is_new() {  # main_pid_is_new OLDPID: running under another main PID
    local pid
    pid=$(property qactd.service MainPID)
    [[ "$pid" != 0 && "$pid" != "$1" ]] && service_running
}
remember_main_pid() {
    local pid
    pid=$(property qactd.service MainPID)
    daemon_pids+=("$pid")
    echo "$pid"
}
# journal_count PYTHON-CONDITION-ON-entry: how many journal entries satisfy it.
journal_count() {
    journalctl -D "$journal" -o json --all --no-pager 2>/dev/null | python3 -c '
import json, sys
condition = compile(sys.argv[1], "condition", "eval")
count = 0
# Bytes: a backtrace may hold invalid UTF-8.
for line in sys.stdin.buffer.read().splitlines():
    try:
        entry = json.loads(line)
    except ValueError:
        continue
    if eval(condition, {}, {"entry": entry}):
        count += 1
print(count)' "$1"
}
journal_has() { (($(journal_count "$1") > 0)); }
# manager_got PID TEXT: the manager logged (at debug level) a notification from PID that starts with TEXT.
manager_got() {
    journal_has "str(entry.get(\"MESSAGE\", \"\")).startswith(\"qactd.service: Got notification message from PID $1 ($2\")"
}
# ready_count_is PID N: PID has sent READY=1 exactly N times.
ready_count_is() {
    (($(journal_count "str(entry.get(\"MESSAGE\", \"\")).startswith(\"qactd.service: Got notification message from PID $1 (READY=1\")") == $2))
}
# pinged_at_least PID N: PID has sent WATCHDOG=1 at least N times.
pinged_at_least() {
    (($(journal_count "entry.get(\"MESSAGE\") == \"qactd.service: Got notification message from PID $1 (WATCHDOG=1)\"") >= $2))
}
generation() {
    qactl status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["generation"])'
}

cleanup() {
    local status=$?
    set +e
    trap - EXIT
    # A reader that went away must not stop the clean-up half way.
    trap '' PIPE
    if [[ -n "$manager_pid" ]] && kill -0 "$manager_pid" 2>/dev/null; then
        if ((status != 0)); then
            echo "$name: ---- systemctl --user status" >&2
            sctl status --no-pager --full -n 30 qactd.service qactd.socket 'qactd@*' >&2
            ls -l /run/systemd/journal >&2
        fi
        sctl stop qactd.socket qactd.service 'qactd@*' >/dev/null 2>&1
        kill -TERM "$manager_pid"
        for _ in $(seq 50); do kill -0 "$manager_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$manager_pid" 2>/dev/null
        wait "$manager_pid" 2>/dev/null
    fi
    # Should the manager have died first, nothing it started may outlive the test.
    for pid in "${daemon_pids[@]}"; do
        [[ "$pid" =~ ^[1-9][0-9]*$ ]] && kill -KILL "$pid" 2>/dev/null
    done
    for hierarchy in "${cgroup_hierarchies[@]}"; do
        [[ -d "$hierarchy/$cgroup" ]] || continue
        find "$hierarchy/$cgroup" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null
    done
    if ((status != 0)); then
        echo "$name: ---- manager output" >&2
        tail -n 40 "$scratch/manager.log" >&2
        echo "$name: ---- journal" >&2
        journalctl -D "$journal" --no-pager -o short-monotonic | grep -v -e ' kernel: ' -e '\[ra\]' | tail -n 60 >&2
    fi
    for hierarchy in "${cgroup_hierarchies[@]}"; do
        [[ -d "$hierarchy/$cgroup" ]] && find "$hierarchy/$cgroup" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    if [[ -n "$journald_pid" ]]; then
        kill -TERM "$journald_pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$journald_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$journald_pid" 2>/dev/null
        wait "$journald_pid" 2>/dev/null
    fi
    # The package's copy-on-write layers: detached, so their mount point can go too.
    [[ -n "$package" ]] && umount -l "$scratch/layers" 2>/dev/null
    rm -rf "$scratch"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

step "private /run/systemd, /run/log, /run/user and /home; journald"
# On a booted system /run is a tmpfs of its own. Where it is not a mount point (a container
# without systemd as PID 1), MountAPIVFS= (implied by ProtectKernelTunables= and
# ProtectControlGroups=) mounts an empty tmpfs over the service's /run, which hides the
# notification socket: the daemon would answer calls but never become ready.
mountpoint -q /run || mount --bind /run /run
mount -t tmpfs -o mode=0755 tmpfs /run/systemd
# Made by PID 1 at boot: where a service's mount namespace is assembled (unit-root for
# systemd 252, mount-rootfs for later ones such as Debian 13's 257).
mkdir -p /run/systemd/system /run/systemd/unit-root /run/systemd/mount-rootfs /run/log /run/user /home "$open_folder"
mount -t tmpfs -o mode=0755 tmpfs /run/log
mount -t tmpfs -o mode=0755 tmpfs /run/user
mount -t tmpfs -o mode=0755 tmpfs /home
mount -t tmpfs -o mode=1777 tmpfs "$open_folder"
# journald reads drop-ins from /run/systemd, which is ours: keep the journal in
# /run/log only, and leave the kernel log and syslog out of it.
mkdir -p /run/systemd/journald.conf.d
printf '[Journal]\nStorage=volatile\nReadKMsg=no\nForwardToSyslog=no\nForwardToKMsg=no\nForwardToConsole=no\nForwardToWall=no\n' \
    >/run/systemd/journald.conf.d/qactd-test.conf
/lib/systemd/systemd-journald >"$scratch/journald.log" 2>&1 &
journald_pid=$!
wait_for 10 "journald's sockets" test -S /run/systemd/journal/socket -a -S /run/systemd/journal/stdout

install -d -o "$uid" -g "$gid" -m 0700 "$runtime"
install -d -o "$uid" -g "$gid" -m 0755 "$home"
if [[ -n "$package" ]]; then
    # shellcheck source=Tests/integration/debian-package.sh
    source "$repository/Tests/integration/debian-package.sh"
    install_package
else
    step "install into $home/.local (make install SKIP_BUILD=1)"
    HOME=$home make -C "$repository" --no-print-directory install SKIP_BUILD=1 BUILDDIR="$builddir" \
        PREFIX="$home/.local" >"$scratch/install.log" 2>&1 || { cat "$scratch/install.log" >&2; fail "make install failed"; }
    unit=$home/.local/share/systemd/user/qactd.service
    [[ -f "$unit" ]] || fail "make install PREFIX=~/.local put no qactd.service in ~/.local/share/systemd/user"
    grep -qx "ExecStart=$home/.local/bin/qactd" "$unit" || fail "ExecStart= in '$unit' is not the installed binary"
fi
# Folders every desktop session has; the sandbox makes them writable only when they exist.
mkdir -p "$home/.local/share/contacts" "$home/.local/share/applications" "$home/.config/qactd"
cp -R "$repository/etc/qactd/contacts/." "$home/.local/share/contacts/"
chown -R "$uid:$gid" "$home"

step "user manager (as nobody)"
for hierarchy in "${cgroup_hierarchies[@]}"; do
    mkdir "$hierarchy/$cgroup"
    chown -R "$uid:$gid" "$hierarchy/$cgroup"
done
# Real-time scheduling allowed (RLIMIT_RTPRIO 1) where this machine lets root raise the limit,
# so that only RestrictRealtime= refuses it to the sandbox probe.
realtime=()
prlimit --rtprio=1:1 true 2>/dev/null && realtime=(prlimit --rtprio=1:1 --)
# As a login starts it: a clean environment, which its environment generators complete. It
# logs at debug level so the journal shows every sd_notify message it got.
start_user_manager() {
    (
        for hierarchy in "${cgroup_hierarchies[@]}"; do echo "$BASHPID" >"$hierarchy/$cgroup/cgroup.procs"; done
        exec "${realtime[@]}" setpriv --reuid="$uid" --regid="$gid" --clear-groups -- env -i HOME="$home" XDG_RUNTIME_DIR="$runtime" \
            PATH=/usr/bin:/bin LANG=C.UTF-8 /lib/systemd/systemd --user --log-target=journal --log-level=debug
    ) >>"$scratch/manager.log" 2>&1 &
    manager_pid=$!
    wait_for 15 "the user manager's private socket" test -S "$runtime/systemd/private"
    wait_for 15 "the user manager to finish starting up" manager_up
}
# As a logout ends it: every unit stopped, then the manager.
stop_user_manager() {
    kill -TERM "$manager_pid"
    local deadline=$((SECONDS + 20))
    while kill -0 "$manager_pid" 2>/dev/null; do
        ((SECONDS < deadline)) || fail "the user manager did not exit within 20 s of SIGTERM"
        sleep 0.1
    done
    wait "$manager_pid" 2>/dev/null || true
    manager_pid=
    rm -f "$runtime/systemd/private"
}
start_user_manager
socket_active() { [[ $(property qactd.socket ActiveState) == active ]]; }
service_inactive() { [[ $(property qactd.service ActiveState) == inactive ]]; }
quicklist_on() { [[ $(qactl status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["quicklist"]["state"])') == on ]]; }
# exported_with APP NAME: qactd's copy of APP's entry offers NAME as one of its actions.
exported_with() { grep -qx "Name=$2" "$home/.local/share/qactd/exports/share/applications/$1"; }

# The first login after installing, with nothing run by the person: the units are enabled by the
# installation (make install, or the package's postinst for every user). A login without a
# desktop (ssh) gets the socket only; a desktop session starts the daemon, as GNOME's and
# Plasma's do: it imports its environment into the user manager, then starts a target of its own
# that binds graphical-session.target (gnome-session-wayland@.target, plasma-workspace.target;
# here a stand-in with the same dependencies). No client connects: the daemon alone exports the
# default mail app's entry with the favorite, and stops when the session ends.
first_login() {
    step "the first login: a login without a desktop starts no daemon; the desktop session starts it, and the mail app offers the favorite with no client"
    local share=$home/.local/share/qactd-first-login app=org.example.FirstMail.desktop
    mkdir -p "$share/applications" "$home/.local/share/contacts/first-login" "$home/.config"
    printf '[Desktop Entry]\nType=Application\nName=First Mail\nExec=/bin/true --compose %%u\nMimeType=x-scheme-handler/mailto;\n' \
        >"$share/applications/$app"
    printf '[Default Applications]\nx-scheme-handler/mailto=%s;\n' "$app" >"$home/.config/mimeapps.list"
    printf 'BEGIN:VCARD\nVERSION:4.0\nUID:first-login-favorite\nFN:Aafje First-Login\nEMAIL:first@example.org\nCATEGORIES:starred\nEND:VCARD\n' \
        >"$home/.local/share/contacts/first-login/favorite.vcf"
    chown -R "$uid:$gid" "$share" "$home/.local/share/contacts" "$home/.config"
    wait_for 10 "qactd.socket, enabled, to listen" socket_active
    [[ $(property qactd.service UnitFileState) == enabled ]] || fail "qactd.service is '$(property qactd.service UnitFileState)' after the installation, not enabled"
    [[ $(property qactd.service ActiveState) == inactive ]] || fail "qactd.service runs in a login without a desktop"
    mkdir -p /run/systemd/user
    printf '[Unit]\nDescription=A desktop session, as gnome-session and plasma-workspace start one\nBindsTo=graphical-session.target\nWants=graphical-session-pre.target\nAfter=graphical-session-pre.target\n' \
        >/run/systemd/user/qactd-test-desktop.target
    sctl daemon-reload
    sctl set-environment XDG_DATA_DIRS="$home/.local/share/qactd/exports/share:$share:/usr/local/share:/usr/share" XDG_CURRENT_DESKTOP=GNOME
    local login=$SECONDS
    sctl start --no-block qactd-test-desktop.target || fail "the desktop session's target did not start"
    wait_for 10 "qactd.service to run with the desktop session" service_running
    remember_main_pid >/dev/null
    wait_for $((10 - (SECONDS - login))) "the mail app's entry offering the favorite within 10 s of the login" exported_with "$app" "Aafje First-Login"
    [[ $(qactl status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["appConnected"])') == False ]] \
        || fail "an app or client connected: the test proves nothing"
    # The live quicklist is on the session bus for a dock or the shell extension to read.
    wait_for 10 "the quicklist on the session bus" quicklist_on
    sctl stop qactd-test-desktop.target
    wait_for 10 "qactd.service to stop with the desktop session" service_inactive
    sctl unset-environment XDG_DATA_DIRS XDG_CURRENT_DESKTOP
    rm -rf "$share" "$home/.local/share/contacts/first-login" "$home/.config/mimeapps.list" /run/systemd/user/qactd-test-desktop.target
    sctl daemon-reload
}

if [[ -n "$package" ]]; then
    socket_enabled_for_every_user
    first_login
    use_package
    export_and_pin
    remove_package
    log_in_again
    step "passed in $((SECONDS - started))s"
    exit 0
fi

first_login
# The contacts as they were: the state the first login left would rank its favorite.
rm -f "$home/.local/state/qactd/state.json"

step "qactd.socket listens; the first qactl call activates qactd.service"
sctl start qactd.socket
[[ $(stat -c %a "$runtime/qactd/qactd.sock") == 600 ]] || fail "the socket is not mode 0600"
[[ $(stat -c %a "$runtime/qactd") == 700 ]] || fail "the socket's folder is not mode 0700"
[[ $(property qactd.service ActiveState) == inactive ]] || fail "qactd.service started before any client"
qactl status >/dev/null || fail "the first qactl status failed"
wait_for 10 "qactd.service to run" service_running
first_pid=$(remember_main_pid)
wait_for 5 "READY=1 with a STATUS= from the daemon" manager_got "$first_pid" "READY=1, STATUS="
status_text=$(property qactd.service StatusText)
[[ "$status_text" =~ ^[0-9]+\ contacts,\ [0-9]+\ favorites,\ generation\ [0-9]+$ ]] \
    || fail "StatusText is '$status_text', not the daemon's status line"
[[ $(property qactd.service NRestarts) == 0 ]] || fail "the daemon restarted during start-up"
# The sandbox is in force, not silently skipped: seccomp filters, and a user and a mount
# namespace of its own (without them systemd ignores every file-system setting). Each setting
# is tried from inside the sandbox at the end.
grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$first_pid/status" || fail "NoNewPrivileges= is not in effect"
grep -q '^Seccomp:[[:space:]]*2$' "/proc/$first_pid/status" || fail "no seccomp filter (SystemCallFilter= etc.)"
for namespace in user mnt; do
    [[ "$(readlink "/proc/$first_pid/ns/$namespace")" != "$(readlink "/proc/$manager_pid/ns/$namespace")" ]] \
        || fail "the daemon shares the manager's $namespace namespace: PrivateUsers=, ProtectSystem= and friends are not in effect"
done
# (ExecStartPre=+, which runs outside the sandbox on purpose, gets that message too.)
journal_has "entry.get(\"_PID\") == \"$first_pid\" and \"assuming containerized execution\" in str(entry.get(\"MESSAGE\", \"\"))" \
    && fail "the manager could not set up the daemon's namespaces and ignored the sandbox"

step "resign-active bumps the generation; STATUS= follows it"
qactl resign-active >/dev/null || fail "qactl resign-active failed"
saved_generation=$(generation)
((saved_generation > 0)) || fail "resign-active left generation $saved_generation"
wait_for 5 "StatusText to show generation $saved_generation" \
    bash -c '[[ "$1" == *"generation $2" ]]' _ "$(property qactd.service StatusText)" "$saved_generation"

step "systemctl --user reload"
sctl reload qactd.service || fail "systemctl --user reload qactd.service failed"
# systemctl returns once ExecReload= (kill -HUP) has run; the daemon's RELOADING=1 may come
# after that and hold "reloading" until its READY=1, so wait for it rather than look once.
wait_for 10 "qactd.service to run after a reload" service_running
[[ $(property qactd.service MainPID) == "$first_pid" ]] || fail "a reload replaced the daemon's process"
wait_for 5 "RELOADING=1 with MONOTONIC_USEC= (for Type=notify-reload)" manager_got "$first_pid" "RELOADING=1, MONOTONIC_USEC="
wait_for 5 "READY=1 again after the reload" ready_count_is "$first_pid" 2
wait_for 5 "the reload in the journal" journal_has 'entry.get("SYSLOG_IDENTIFIER") == "qactd" and entry.get("MESSAGE", "").startswith("Reloaded")'

step "kill -9: Restart=on-failure brings it back with its state"
kill -KILL "$first_pid"
wait_for 15 "a new qactd process after kill -9" main_pid_is_new "$first_pid"
second_pid=$(remember_main_pid)
[[ $(property qactd.service NRestarts) == 1 ]] || fail "NRestarts is not 1 after kill -9"
[[ $(generation) == "$saved_generation" ]] || fail "the restarted daemon lost generation $saved_generation"

step "watchdog (WatchdogSec=2s, --log-level=notice): a healthy daemon lives, a SIGSTOPped one is restarted"
mkdir -p "$home/.config/systemd/user/qactd.service.d"
# --log-level=notice too: the info lines of this daemon must then stay out of the journal.
printf '[Service]\nWatchdogSec=2s\nExecStart=\nExecStart=%s --log-level=notice\n' "$home/.local/bin/qactd" \
    >"$home/.config/systemd/user/qactd.service.d/watchdog.conf"
chown -R "$uid:$gid" "$home/.config"
sctl daemon-reload
sctl restart qactd.service
wait_for 10 "qactd.service to run again" main_pid_is_new "$second_pid"
watched_pid=$(remember_main_pid)
restarts=$(property qactd.service NRestarts)
[[ $(property qactd.service WatchdogUSec) == 2s ]] || fail "the drop-in's WatchdogSec=2s is not in effect"
# A healthy daemon must outlive twice the timeout: it pings every WatchdogSec/2 = 1s, so five
# pings from this one process span at least four seconds. Their arrival is the event to wait
# for (journald may lag a little behind); a daemon the watchdog killed could not send them.
wait_for 15 "five WATCHDOG=1 pings from one process" pinged_at_least "$watched_pid" 5
[[ $(property qactd.service MainPID) == "$watched_pid" ]] || fail "the watchdog killed a healthy daemon"
[[ $(property qactd.service NRestarts) == "$restarts" ]] || fail "the watchdog restarted a healthy daemon"
own_entries="entry.get(\"_PID\") == \"$watched_pid\" and entry.get(\"_TRANSPORT\") == \"journal\""
journal_has "$own_entries and entry.get(\"PRIORITY\") == \"5\"" || fail "no notice from the daemon run with --log-level=notice"
(($(journal_count "$own_entries and entry.get(\"PRIORITY\") == \"6\"") == 0)) || fail "--log-level=notice let info lines through"
journal_has "entry.get(\"_PID\") == \"$first_pid\" and entry.get(\"PRIORITY\") == \"6\"" || fail "the default log level logged no info line"
kill -STOP "$watched_pid"
wait_for 20 "the watchdog to restart the stopped daemon" main_pid_is_new "$watched_pid"
remember_main_pid >/dev/null
(($(property qactd.service NRestarts) == restarts + 1)) || fail "NRestarts did not grow by one after the watchdog"
wait_for 5 "the manager's watchdog verdict in the journal" \
    journal_has '"qactd.service: Failed with result \x27watchdog\x27" in str(entry.get("MESSAGE", ""))'
[[ $(generation) == "$saved_generation" ]] || fail "the daemon lost generation $saved_generation after the watchdog"

step "systemctl --user stop: STOPPING=1, exit 0; the next client starts it again"
stopped_pid=$(property qactd.service MainPID)
sctl stop qactd.service
[[ $(property qactd.service ActiveState) == inactive ]] || fail "qactd.service is not inactive after stop"
[[ $(property qactd.service ExecMainStatus) == 0 && $(property qactd.service Result) == success ]] \
    || fail "stop ended with ExecMainStatus=$(property qactd.service ExecMainStatus) Result=$(property qactd.service Result)"
wait_for 5 "STOPPING=1 from the stopped daemon" manager_got "$stopped_pid" "STOPPING=1)"
qactl list >/dev/null || fail "qactl list did not reach a socket-activated daemon after stop"
wait_for 10 "qactd.service to run after the stop" main_pid_is_new "$stopped_pid"
remember_main_pid >/dev/null

step "the journal has the daemon's structured fields"
wait_for 5 "QACTD_PATH in the journal" journal_has 'entry.get("SYSLOG_IDENTIFIER") == "qactd" and "QACTD_PATH" in entry and "CODE_FILE" in entry'
wait_for 5 "QACTD_GENERATION in the journal" journal_has 'entry.get("QACTD_GENERATION") == "'"$saved_generation"'"'

# Commands qactd starts run as transient units of the user manager, as desktops start apps:
# outside qactd's cgroup and sandbox, with the manager's environment, surviving a restart of
# qactd, their failure logged with the unit's name and shown as a desktop notification (a
# recorder owns org.freedesktop.Notifications on a private session bus: no notification
# daemon can draw here). A favorite's {file} is its whole card, readable by the command.
# spawn_as_user LOG COMMAND...: runs COMMAND as the user in the background, output to LOG; its
# own pid (setpriv and env exec it) goes to daemon_pids, so the clean-up stops it.
spawn_as_user() {
    local log=$1
    shift
    (exec setpriv --reuid="$uid" --regid="$gid" --clear-groups -- env -i HOME="$home" XDG_RUNTIME_DIR="$runtime" \
        PATH="$home/.local/bin:/usr/bin:/bin" LANG=C.UTF-8 "$@" </dev/null >"$log" 2>&1) &
    daemon_pids+=($!)
}
commands_run_in_units_of_their_own() {
    step "commands run in transient units of the user manager (app-qactd-*.service)"
    local bus=$runtime/test-bus notices=$scratch/notices.jsonl
    spawn_as_user "$scratch/dbus.log" dbus-daemon --session --nofork --nopidfile --address="unix:path=$bus"
    wait_for 10 "the test's session bus" test -S "$bus"
    # What a notification server gets: each Notify call as a JSON line.
    cat >"$scratch/notices.py" <<'EOF'
import json, sys
from gi.repository import Gio, GLib
XML = """<node><interface name="org.freedesktop.Notifications">
<method name="GetCapabilities"><arg type="as" direction="out"/></method>
<method name="Notify"><arg type="s"/><arg type="u"/><arg type="s"/><arg type="s"/><arg type="s"/>
<arg type="as"/><arg type="a{sv}"/><arg type="i"/><arg type="u" direction="out"/></method>
<method name="GetServerInformation"><arg type="s" direction="out"/><arg type="s" direction="out"/>
<arg type="s" direction="out"/><arg type="s" direction="out"/></method></interface></node>"""
def call(connection, sender, path, interface, method, parameters, invocation):
    if method == "GetCapabilities":
        invocation.return_value(GLib.Variant("(as)", (["body"],)))
    elif method == "GetServerInformation":
        invocation.return_value(GLib.Variant("(ssss)", ("recorder", "qactd-test", "1", "1.2")))
    else:
        values = parameters.unpack()
        with open(sys.argv[1], "a") as out:
            out.write(json.dumps({"summary": values[3], "body": values[4]}) + "\n")
        invocation.return_value(GLib.Variant("(u)", (1,)))
bus = Gio.DBusConnection.new_for_address_sync(sys.argv[2],
    Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
bus.register_object("/org/freedesktop/Notifications", Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0], call, None, None)
Gio.bus_own_name_on_connection(bus, "org.freedesktop.Notifications", Gio.BusNameOwnerFlags.NONE, None, None)
GLib.MainLoop().run()
EOF
    : >"$notices"
    chown "$uid:$gid" "$notices"
    spawn_as_user "$scratch/notices.log" /usr/bin/python3 "$scratch/notices.py" "$notices" "unix:path=$bus"
    name_owned() {
        as_user dbus-send --bus="unix:path=$bus" --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
            org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications 2>/dev/null | grep -q 'boolean true'
    }
    wait_for 10 "the notification recorder on the session bus" name_owned
    # The manager's environment is what a unit gets (and what qactd.service starts with):
    # the session's bus, and a variable qactd itself never had.
    sctl set-environment DBUS_SESSION_BUS_ADDRESS="unix:path=$bus" QACTD_TEST_SESSION=from-the-manager

    printf '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><array><dict><key>UIApplicationShortcutItemType</key><string>Probe</string><key>UIApplicationShortcutItemTitle</key><string>Probe</string></dict><dict><key>UIApplicationShortcutItemType</key><string>Fail</string><key>UIApplicationShortcutItemTitle</key><string>Fail</string></dict></array></plist>\n' \
        >"$home/.config/qactd/units.plist"
    # Probe records where it runs and what it may do, then waits (bounded) for a gate.
    cat >"$home/probe.sh" <<'EOF'
#!/bin/sh
cat /proc/self/cgroup >"$HOME/probe.cgroup.tmp" && mv "$HOME/probe.cgroup.tmp" "$HOME/probe.cgroup"
printf '%s\n' "$QACTD_TEST_SESSION" >"$HOME/probe.environment"
/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()' 2>"$HOME/probe.inet.err" \
    && echo ok >"$HOME/probe.inet"
echo $$ >"$HOME/probe.pid"
i=0
while [ ! -e "$HOME/probe.gate" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
EOF
    chmod 0755 "$home/probe.sh"
    printf '[Shortcuts]\nStaticItems=units.plist\nDisplayLimit=8\n[Actions]\nProbe=%s\nFail=/bin/sh -c %s\nFavoriteAction=/bin/cp {file} %s\n' \
        "$home/probe.sh" "'echo units-test-failure >&2; exit 3'" "$home/card.{identifier}.vcf" >"$home/.config/qactd/qactd.conf"
    chown -R "$uid:$gid" "$home/.config/qactd" "$home/probe.sh"
    local before
    before=$(property qactd.service MainPID)
    sctl restart qactd.service
    wait_for 10 "qactd.service to run with the commands' configuration" main_pid_is_new "$before"
    local daemon_pid
    daemon_pid=$(remember_main_pid)
    local commands
    commands=$(qactl status --json | python3 -c 'import json, sys; c = json.load(sys.stdin).get("commands") or {}; print(c.get("start"), c.get("manager"), c.get("limit"))')
    [[ "$commands" == "unit unix:path=$runtime/systemd/private 16" ]] || fail "Status does not say commands start as units of the user manager: '$commands'"
    qactl status | grep -q "commands .*each in a unit of the user manager" || fail "qactl status does not say where commands run: $(qactl status)"

    local reply unit
    reply=$(qactl trigger --type=Probe --json) || fail "qactl trigger --type=Probe failed"
    unit=$(python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(r.get("commandUnit") or "")' "$reply")
    [[ "$unit" == app-qactd-probe.sh@*.service ]] || fail "the command's unit is '$unit' (reply: $reply)"
    wait_for 10 "the probe to start in $unit" test -s "$home/probe.pid"
    local probe_pid
    probe_pid=$(cat "$home/probe.pid")
    daemon_pids+=("$probe_pid")
    [[ $(property "$unit" ActiveState) == active ]] || fail "$unit is $(property "$unit" ActiveState), not active"
    [[ $(property "$unit" Slice) == app.slice ]] || fail "$unit is not in app.slice"
    [[ $(property "$unit" Description) == *Probe* ]] || fail "$unit's Description does not name the item: $(property "$unit" Description)"
    grep -q "/app.slice/$unit\$" "$home/probe.cgroup" || fail "the command's cgroup is not its unit's: $(cat "$home/probe.cgroup")"
    grep -q "qactd.service" "/proc/$probe_pid/cgroup" && fail "the command runs in qactd.service's cgroup: $(cat "/proc/$probe_pid/cgroup")"
    # Whatever the manager itself runs under (a container may filter everything), the command
    # gets nothing of qactd's: no seccomp filter of its own, no NoNewPrivileges=.
    status_field() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"; }
    [[ $(status_field "$probe_pid" NoNewPrivs) == "$(status_field "$manager_pid" NoNewPrivs)" ]] \
        || fail "the command inherited NoNewPrivileges= (NoNewPrivs $(status_field "$probe_pid" NoNewPrivs))"
    [[ $(status_field "$probe_pid" Seccomp_filters) == "$(status_field "$manager_pid" Seccomp_filters)" ]] \
        || fail "the command inherited qactd's seccomp filter ($(status_field "$probe_pid" Seccomp_filters) filters)"
    (($(status_field "$daemon_pid" Seccomp_filters) > $(status_field "$manager_pid" Seccomp_filters))) \
        || fail "qactd itself has no seccomp filter of its own: the check above proves nothing"
    [[ -s "$home/probe.inet" ]] || fail "the command cannot open an AF_INET socket: $(cat "$home/probe.inet.err")"
    [[ $(cat "$home/probe.environment") == from-the-manager ]] || fail "the command did not get the manager's current environment"
    [[ $(stat -c %U "$home/probe.pid") == "$(id -un nobody)" ]] || fail "the command did not write under \$HOME as the user"

    step "a command outlives systemctl --user restart qactd"
    sctl restart qactd.service
    wait_for 10 "qactd.service to run again" main_pid_is_new "$daemon_pid"
    remember_main_pid >/dev/null
    kill -0 "$probe_pid" 2>/dev/null || fail "the command (pid $probe_pid) died with qactd's restart"
    [[ $(property "$unit" ActiveState) == active ]] || fail "$unit did not survive qactd's restart"
    touch "$home/probe.gate"
    wait_for 15 "the probe to end and its unit to be collected" bash -c '! kill -0 "$1" 2>/dev/null' _ "$probe_pid"
    unit_gone() { [[ $(property "$1" LoadState) == not-found ]]; }
    wait_for 10 "$unit to be collected (CollectMode=inactive-or-failed)" unit_gone "$unit"

    step "a failing command: logged with its unit's name, and a desktop notification"
    reply=$(qactl trigger --type=Fail --json) || fail "qactl trigger --type=Fail failed"
    unit=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get("commandUnit") or "")' "$reply")
    [[ "$unit" == app-qactd-sh@*.service ]] || fail "the failing command's unit is '$unit' (reply: $reply)"
    wait_for 10 "the failure in the journal, naming $unit" journal_has \
        "entry.get(\"SYSLOG_IDENTIFIER\") == \"qactd\" and entry.get(\"QACTD_COMMAND_UNIT\") == \"$unit\" and entry.get(\"PRIORITY\") == \"4\" and \"exited with status 3\" in str(entry.get(\"MESSAGE\")) and \"$unit\" in str(entry.get(\"MESSAGE\"))"
    wait_for 10 "the command's own stderr in the journal" journal_has "entry.get(\"MESSAGE\") == \"units-test-failure\""
    wait_for 10 "the failure's notification" grep -qF "\"summary\": \"\\u201cFail\\u201d did not work\", \"body\": \"The command \\u201c/bin/sh\\u201d failed: it exited with status 3. What it printed: journalctl --user -u $unit\"" "$notices"
    wait_for 10 "$unit to be collected although it failed" unit_gone "$unit"

    step "a favorite's {file} is its whole card, readable by its command's unit"
    reply=$(qactl trigger --type=FavoriteAction --contact=ada-lovelace --json) || fail "qactl trigger of ada-lovelace failed"
    wait_for 10 "ada's card copied by the command" test -s "$home/card.ada-lovelace.vcf"
    cmp -s "$home/card.ada-lovelace.vcf" "$home/.local/share/contacts/personal/ada-lovelace.vcf" || fail "{file} of ada-lovelace is not her card file"
    reply=$(qactl trigger --type=FavoriteAction --contact=margaret-hamilton --json) || fail "qactl trigger of margaret-hamilton failed"
    wait_for 10 "margaret's card copied by the command" test -s "$home/card.margaret-hamilton.vcf"
    grep -q '^FN:Margaret Hamilton' "$home/card.margaret-hamilton.vcf" || fail "{file} of a JSON contact is not her card: $(cat "$home/card.margaret-hamilton.vcf")"

    sctl unset-environment DBUS_SESSION_BUS_ADDRESS QACTD_TEST_SESSION
    printf '' >"$home/.config/qactd/qactd.conf"
    sctl restart qactd.service
    wait_for 10 "qactd.service to run after the commands' checks" service_running
    remember_main_pid >/dev/null
}
commands_run_in_units_of_their_own


step "the desktop-entry export is written into qactd's exports folder through the sandbox, reload removes it"
applications=$home/.local/share/qactd/exports/share/applications
install -d -o "$uid" -g "$gid" -m 0755 "$home/.local/share/applications" "$home/.local/share/qactd-test"
printf '[Desktop Entry]\nType=Application\nName=Test\nExec=/bin/true\n' >"$home/.local/share/qactd-test/io.qactd.Test.desktop"
mkdir -p "$home/.config/qactd"
printf '[Launcher]\nDesktopFile=%s\n' "$home/.local/share/qactd-test/io.qactd.Test.desktop" >"$home/.config/qactd/qactd.conf"
chown -R "$uid:$gid" "$home/.config/qactd" "$home/.local/share/qactd-test"
sctl reload qactd.service || fail "systemctl --user reload qactd.service failed"
wait_for 10 "the exported entry in $applications" grep -qx 'X-Qactd-Generated=true' "$applications/io.qactd.Test.desktop"
grep -q "^Exec=$home/.local/bin/qactl trigger --socket=$runtime/qactd/qactd.sock --type=" "$applications/io.qactd.Test.desktop" \
    || fail "the exported actions do not run the installed qactl with the daemon's socket: $(cat "$applications/io.qactd.Test.desktop")"
qactl status | grep -qE "desktop entry +$applications/io.qactd.Test.desktop, written " || fail "qactl status does not show the export"
printf '' >"$home/.config/qactd/qactd.conf"
sctl reload qactd.service || fail "systemctl --user reload qactd.service failed"
wait_for 10 "the export to be removed" test ! -e "$applications/io.qactd.Test.desktop"

step "one instance per app: qactd@alpha and qactd@beta beside qactd, each on its own contacts, items and entry"
# What a person writes for each app: ~/.config/qactd/NAME.conf naming its contacts, static items
# (relative to that folder) and desktop entry.
for app in alpha beta; do
    install -d "$home/contacts-$app"
    printf 'BEGIN:VCARD\r\nVERSION:3.0\r\nUID:%s-1\r\nFN:%s Favorite\r\nCATEGORIES:favorite\r\nEND:VCARD\r\n' \
        "$app" "$app" >"$home/contacts-$app/$app-1.vcf"
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><array><dict><key>UIApplicationShortcutItemType</key><string>%sAction</string><key>UIApplicationShortcutItemTitle</key><string>%s static</string></dict></array></plist>\n' \
        "$app" "$app" >"$home/.config/qactd/$app.plist"
    printf '[Desktop Entry]\nType=Application\nName=%s\nExec=/bin/true\n' "$app" >"$home/.local/share/qactd-test/io.qactd.$app.desktop"
    printf '[Contacts]\nDirectory=%s\n[Shortcuts]\nStaticItems=%s.plist\n[Launcher]\nDesktopFile=%s\n' \
        "$home/contacts-$app" "$app" "$home/.local/share/qactd-test/io.qactd.$app.desktop" >"$home/.config/qactd/$app.conf"
done
chown -R "$uid:$gid" "$home/contacts-alpha" "$home/contacts-beta" "$home/.config/qactd" "$home/.local/share/qactd-test"
sctl enable --now qactd@alpha.socket qactd@beta.socket >/dev/null 2>&1 || fail "systemctl --user enable --now qactd@alpha.socket qactd@beta.socket failed"
for app in alpha beta; do
    [[ $(stat -c %a "$runtime/qactd/$app.sock") == 600 ]] || fail "$runtime/qactd/$app.sock is not a socket of mode 0600"
    [[ $(property "qactd@$app.service" ActiveState) == inactive ]] || fail "qactd@$app.service started before any client"
done
qactl --app alpha resign-active >/dev/null || fail "qactl --app alpha resign-active failed"
as_user env QACTD_APP=beta timeout 20 "$home/.local/bin/qactl" resign-active >/dev/null || fail "QACTD_APP=beta qactl resign-active failed"
app_running() { [[ $(property "qactd@$1.service" ActiveState) == active && $(property "qactd@$1.service" SubState) == running ]]; }
wait_for 10 "qactd@alpha.service to run" app_running alpha
wait_for 10 "qactd@beta.service to run" app_running beta
alpha_pid=$(property qactd@alpha.service MainPID)
beta_pid=$(property qactd@beta.service MainPID)
daemon_pids+=("$alpha_pid" "$beta_pid")
grep -q '^Seccomp:[[:space:]]*2$' "/proc/$beta_pid/status" || fail "qactd@beta.service runs without the plain unit's seccomp filter"
titles() {  # titles APP: the displayed titles, one line
    qactl --app "$1" list --json | python3 -c 'import json, sys; print(",".join(i["item"]["title"] for i in json.load(sys.stdin)["items"]))'
}
[[ $(titles alpha) == "alpha static,alpha Favorite" ]] || fail "qactl --app alpha list shows '$(titles alpha)'"
[[ $(titles beta) == "beta static,beta Favorite" ]] || fail "qactl --app beta list shows '$(titles beta)'"
for app in alpha beta; do
    state_file=$(qactl --app "$app" status --json | python3 -c 'import json, sys; s = json.load(sys.stdin); print(s["stateFile"] if s["app"] == sys.argv[1] else "")' "$app")
    [[ "$state_file" == */qactd/$app/state.json && -f "$state_file" ]] || fail "the state of $app is not in a folder of its own: '$state_file'"
    wait_for 10 "the export of $app" grep -qx 'X-Qactd-Generated=true' "$applications/io.qactd.$app.desktop"
    grep -q "^Exec=$home/.local/bin/qactl trigger --socket=$runtime/qactd/$app.sock --type=" "$applications/io.qactd.$app.desktop" \
        || fail "the export of $app does not trigger through its own socket: $(cat "$applications/io.qactd.$app.desktop")"
done

step "a trigger reaches only its own app"
app_pids=()
for app in alpha beta; do
    as_user timeout 60 "$home/.local/bin/qactl" --app "$app" app --json >"$scratch/$app-app.out" 2>&1 &
    app_pids+=($!)
done
for app in alpha beta; do
    wait_for 10 "the stand-in app of $app to connect" grep -q '"event":"connected"' "$scratch/$app-app.out"
done
qactl --app alpha trigger 2 >/dev/null || fail "qactl --app alpha trigger 2 failed"
wait_for 10 "alpha's app to get its action" grep -q '"title":"alpha Favorite"' "$scratch/alpha-app.out"
qactl --app beta trigger 1 >/dev/null || fail "qactl --app beta trigger 1 failed"
wait_for 10 "beta's app to get its action" grep -q '"title":"beta static"' "$scratch/beta-app.out"
grep -q '"event":"action"' <(grep -v 'alpha Favorite' "$scratch/alpha-app.out") && fail "alpha's app got another app's action: $(cat "$scratch/alpha-app.out")"
grep -q '"event":"action"' <(grep -v 'beta static' "$scratch/beta-app.out") && fail "beta's app got another app's action: $(cat "$scratch/beta-app.out")"
kill -TERM "${app_pids[@]}" 2>/dev/null
wait "${app_pids[@]}" 2>/dev/null || true

step "qactl apps lists every instance; the journal names each app"
apps_json=$(qactl apps --json) || fail "qactl apps failed"
python3 -c '
import json, sys
apps = {a.get("app"): a for a in json.loads(sys.argv[1])["apps"]}
assert set(apps) == {None, "alpha", "beta"}, apps
for name in ("alpha", "beta"):
    app = apps[name]
    assert app["answering"] and app["items"] == 2 and app["unit"] == "qactd@%s.service" % name, app
    assert app["desktopEntry"] == sys.argv[2] + "/io.qactd.%s.desktop" % name, app
assert apps[None]["answering"] and apps[None]["unit"] == "qactd.service", apps[None]
' "$apps_json" "$applications" || fail "qactl apps --json: $apps_json"
# The manager runs in a cgroup of the test's, not under user@.service, so journald records no
# _SYSTEMD_USER_UNIT: each daemon's entries are found by its main PID.
for app in alpha beta; do
    pid=$(property "qactd@$app.service" MainPID)
    own_entries="entry.get(\"_PID\") == \"$pid\" and entry.get(\"_TRANSPORT\") == \"journal\" and entry.get(\"SYSLOG_IDENTIFIER\") == \"qactd\""
    wait_for 5 "QACTD_APP=$app on qactd@$app.service's entries" journal_has "$own_entries and entry.get(\"QACTD_APP\") == \"$app\""
    (($(journal_count "$own_entries and entry.get(\"QACTD_APP\") != \"$app\"") == 0)) || fail "an entry of qactd@$app.service lacks QACTD_APP=$app"
done
plain_pid=$(property qactd.service MainPID)
(($(journal_count "entry.get(\"_PID\") == \"$plain_pid\" and \"QACTD_APP\" in entry") == 0)) || fail "the plain qactd.service logged a QACTD_APP field"

step "stopping one app's instance leaves the other (and the plain one) serving"
sctl stop qactd@alpha.socket qactd@alpha.service
[[ $(property qactd@alpha.service ActiveState) == inactive ]] || fail "qactd@alpha.service is not inactive after stop"
[[ ! -e "$runtime/qactd/alpha.sock" ]] || fail "alpha's socket outlived its stop"
[[ -S "$runtime/qactd/beta.sock" && -S "$runtime/qactd/qactd.sock" ]] || fail "stopping alpha removed another instance's socket"
[[ $(titles beta) == "beta static,beta Favorite" ]] || fail "beta stopped serving when alpha stopped"
[[ $(property qactd@beta.service MainPID) == "$beta_pid" ]] || fail "beta was restarted when alpha stopped"
qactl list >/dev/null || fail "the plain qactd stopped serving when alpha stopped"
qactl --app alpha list >/dev/null 2>&1 && fail "qactl --app alpha list still answered after alpha stopped"
[[ $(qactl apps --json | python3 -c 'import json, sys; print(",".join(str(a.get("app")) for a in json.load(sys.stdin)["apps"]))') == "None,beta" ]] \
    || fail "qactl apps still lists alpha after its stop: $(qactl apps)"

step "an app without its NAME.conf: exit 78, the journal names the app and the file; qactl apps goes on"
sctl start qactd@gamma.socket
qactl --app gamma status >/dev/null 2>&1 && fail "qactl --app gamma status succeeded without gamma.conf"
wait_for 10 "qactd@gamma.service to fail" test "$(property qactd@gamma.service ActiveState)" = failed
[[ $(property qactd@gamma.service ExecMainStatus) == 78 ]] || fail "an app without its configuration did not exit 78"
wait_for 5 "the error naming the app and its file" journal_has \
    "entry.get(\"PRIORITY\") == \"3\" and entry.get(\"QACTD_APP\") == \"gamma\" and str(entry.get(\"MESSAGE\")).startswith('App \"gamma\": No configuration file \"$home/.config/qactd/gamma.conf\"')"
apps_started=$SECONDS
apps_json=$(qactl apps --json --timeout 2) || fail "qactl apps failed beside a failed instance"
python3 -c '
import json, sys
apps = {a.get("app"): a for a in json.loads(sys.argv[1])["apps"]}
# systemd stops the socket of a service that failed (and removes it); while it lingers it must
# be listed as not answering.
assert "gamma" not in apps or (not apps["gamma"]["answering"] and apps["gamma"]["problem"]), apps["gamma"]
assert apps["beta"]["answering"], apps["beta"]
' "$apps_json" || fail "qactl apps --json beside a failed instance: $apps_json"
((SECONDS - apps_started < 15)) || fail "qactl apps took $((SECONDS - apps_started))s beside a failed instance"
sctl stop qactd@gamma.socket qactd@gamma.service >/dev/null 2>&1 || true

# An app developer's app on a person's desktop: nothing set up, no NAME.conf. The example app
# (QuickActionsClient) finds no socket, asks this user manager to start qactd@ID.socket itself,
# and publishes its three recent files; qactd exports them on the app's entry. Closed, the app is
# started by its own Exec for a pick, which it receives at launch.
step "an app with nothing set up: its library starts qactd@org.example.Editor.socket through the user manager; closed, a pick starts it"
example=$builddir/qactd-example-app
[[ -x "$example" ]] || fail "$example is not built"
editor_share=$home/.local/share/qactd-editor
launched=$home/editor-launched.out
mkdir -p "$editor_share/applications"
printf '[Desktop Entry]\nType=Application\nName=Example Editor\nExec=/bin/sh -c "exec %s org.example.Editor /tmp/qactd-notes.txt /tmp/qactd-todo.txt /tmp/qactd-ideas.txt >> %s" %%U\nIcon=accessories-text-editor\n' \
    "$example" "$launched" >"$editor_share/applications/org.example.Editor.desktop"
chown -R "$uid:$gid" "$editor_share"
rm -f "$home/.config/qactd/org.example.Editor.conf"
editor_dirs="$home/.local/share/qactd/exports/share:$editor_share:/usr/local/share:/usr/share"
sctl set-environment XDG_DATA_DIRS="$editor_dirs"
[[ $(property qactd@org.example.Editor.socket ActiveState) != active ]] || fail "qactd@org.example.Editor.socket listened before the app asked"
spawn_as_user "$scratch/editor.out" env XDG_DATA_DIRS="$editor_dirs" "$example" org.example.Editor /tmp/qactd-notes.txt /tmp/qactd-todo.txt /tmp/qactd-ideas.txt
editor_pid=${daemon_pids[-1]}
wait_for 20 "the example app to publish its three items" grep -q "published 3 items" "$scratch/editor.out"
[[ $(property qactd@org.example.Editor.socket ActiveState) == active ]] || fail "the library did not start qactd@org.example.Editor.socket"
wait_for 10 "qactd@org.example.Editor.service to run" app_running org.example.Editor
editor_status=$(qactl status --json --app org.example.Editor) || fail "qactl status --app org.example.Editor failed"
python3 - "$editor_status" <<'PYTHON' || fail "the app's instance does not serve it as it is: $editor_status"
import json, sys
status = json.loads(sys.argv[1])
assert status["app"] == "org.example.Editor", status.get("app")
assert status.get("configFile") is None, status.get("configFile")
assert status["desktopEntry"]["path"].endswith("/qactd/exports/share/applications/org.example.Editor.desktop"), status["desktopEntry"]
PYTHON
wait_for 15 "the exported entry to offer the app's item 'Open qactd-ideas.txt'" \
    grep -qx "Name=Open qactd-ideas.txt" "$home/.local/share/qactd/exports/share/applications/org.example.Editor.desktop"
kill -TERM "$editor_pid"
editor_disconnected() { qactl status --json --app org.example.Editor | grep -q '"appConnected" *: *false'; }
wait_for 15 "the closed app to be disconnected" editor_disconnected
cold=$(qactl trigger --type recent-0 --json --app org.example.Editor) || fail "qactl trigger of the app's own item failed: $cold"
[[ $(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["launchStatus"])' "$cold") == started ]] || fail "the pick did not start the app: $cold"
wait_for 15 "the app started for the pick to receive it" grep -q "opening /tmp/qactd-notes.txt (at launch)" "$launched"
sctl stop qactd@org.example.Editor.socket qactd@org.example.Editor.service >/dev/null 2>&1 || true
sctl unset-environment XDG_DATA_DIRS

step "no configuration: a favorite starred through EDS is on the mail app of mimeapps.list within 2 s, and opens a mail"
# What a person has: a mail app installed in a data folder of the session, chosen for mailto:
# links in ~/.config/mimeapps.list, and EDS on their session bus (dbus-user-session's socket),
# started by the user manager as GNOME Contacts would. No qactd.conf, no qactl resign-active.
rm -f "$home/.config/qactd/qactd.conf"
mail_apps=$home/.local/share/qactd-test/share/applications
install -d -o "$uid" -g "$gid" -m 0755 "$mail_apps"
# The app's command prints its arguments, each in <>, to stderr: the journal gets them.
cat >"$home/.local/share/qactd-test/record-mail" <<'RECORDER'
#!/bin/sh
{
    printf 'recorded mail arguments:'
    for argument in "$@"; do printf ' <%s>' "$argument"; done
    printf '\n'
} >&2
RECORDER
chmod 0755 "$home/.local/share/qactd-test/record-mail"
printf '[Desktop Entry]\nType=Application\nName=Recording Mail\nExec=%s --compose %%u\nMimeType=x-scheme-handler/mailto;\n' \
    "$home/.local/share/qactd-test/record-mail" >"$mail_apps/org.example.Mail.desktop"
printf '[Default Applications]\nx-scheme-handler/mailto=org.example.Gone.desktop;org.example.Mail.desktop;\n' >"$home/.config/mimeapps.list"
chown -R "$uid:$gid" "$home/.local/share/qactd-test" "$home/.config"
sctl set-environment XDG_DATA_DIRS="$home/.local/share/qactd-test/share:/usr/local/share:/usr/share" \
    || fail "systemctl --user set-environment failed"
# The daemon logs at its default level again (the watchdog step's drop-in asked for notice):
# a command's stderr is logged with its exit at info.
printf '[Service]\nExecStart=\nExecStart=%s\n' "$home/.local/bin/qactd" >"$home/.config/systemd/user/qactd.service.d/zz-info.conf"
chown -R "$uid:$gid" "$home/.config/systemd"
sctl daemon-reload
sctl stop qactd.service
# A person new to qactd: no state, so no favorite ranks first for having been chosen in the
# steps above (the favorites are ordered by use).
rm -f "$home/.local/state/qactd/state.json"
wait_for 10 "the session bus of dbus-user-session" test -S "$runtime/bus"
eds_add() {  # eds_add JSON-REQUEST: runs it through EDS's own client library; prints the answer
    printf '%s\n' "$1" | as_user env DBUS_SESSION_BUS_ADDRESS="unix:path=$runtime/bus" GSETTINGS_BACKEND=memory \
        timeout 60 python3 "$repository/Tests/integration/eds-book.py" | tail -n 1
}
# Any call starts EDS (its source registry and address-book factory, user units) and makes the
# built-in book; the daemon then finds it there.
eds_add '{"op": "add", "book": "system-address-book", "name": "Plain Person"}' | grep -q '"ok": true' \
    || fail "EDS did not add a contact on the user's session bus"
zero_status=$(qactl status --json) || fail "qactl status failed with no configuration"
wait_for 10 "qactd.service to run" service_running
python3 - "$zero_status" "$home" <<'PYTHON' || fail "qactl status does not show the mail app of mimeapps.list: $zero_status"
import json, sys
status, home = json.loads(sys.argv[1]), sys.argv[2]
# No file of the person's own: the one make install put beside the binary, the built-in defaults.
assert status.get("configFile") in (None, home + "/.local/etc/qactd/qactd.conf"), status.get("configFile")
choices = status["choices"]
assert choices["app"] == "org.example.Mail.desktop" and choices["chosenBy"] == "default-application", choices
assert choices["mimeappsList"] == home + "/.config/mimeapps.list", choices
assert choices["favoriteActionFrom"] == "app-exec" and choices["recompute"] == "auto" and choices["followingContacts"], choices
PYTHON
ada_answer=$(eds_add '{"op": "add", "book": "system-address-book", "name": "Ada Lovelace", "email": "x'"'"',attachment='"'"'file:///home/u/.ssh/id_ed25519@example.org", "star": true}')
ada=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["uid"])' "$ada_answer") || fail "EDS did not star Ada: $ada_answer"
ada_listed() { qactl list --json | python3 -c 'import json, sys; sys.exit(0 if any(i["item"].get("userInfo", {}).get("contactIdentifier") == sys.argv[1] for i in json.load(sys.stdin)["items"]) else 1)' "$1"; }
wait_for 2 "Ada, starred through EDS, in qactl list with no resign-active" ada_listed "$ada"
qactl trigger --type FavoriteAction --contact "$ada" >/dev/null || fail "qactl trigger of Ada's quick action failed"
# A message with a line break (the command's stderr) comes as an array of bytes in journalctl's JSON.
wait_for 10 "the mail app's command line with one percent-encoded mailto: argument" journal_has \
    '"recorded mail arguments: <--compose> <mailto:x%27%2Cattachment%3D%27file%3A%2F%2F%2Fhome%2Fu%2F.ssh%2Fid_ed25519@example.org>\n" in (bytes(entry["MESSAGE"]).decode("utf-8", "replace") if isinstance(entry.get("MESSAGE"), list) else str(entry.get("MESSAGE", "")) + "\n")'
sctl unset-environment XDG_DATA_DIRS

step "an invalid configuration: exit 78, named in the journal, no restart loop"
restarts_scheduled() {
    journal_count "str(entry.get(\"MESSAGE\", \"\")).startswith(\"qactd.service: Scheduled restart job\")"
}
scheduled_before=$(restarts_scheduled)
mkdir -p "$home/.config/qactd"
printf '[Shortcuts]\nDisplayLimit=many\n' >"$home/.config/qactd/qactd.conf"
chown -R "$uid:$gid" "$home/.config/qactd"
sctl stop qactd.service
qactl status >/dev/null 2>&1 && fail "qactl status succeeded against an invalid configuration"
wait_for 10 "qactd.service to fail" test "$(property qactd.service ActiveState)" = failed
[[ $(property qactd.service ExecMainStatus) == 78 ]] || fail "an invalid configuration did not exit 78"
wait_for 5 "the error naming the file and key" journal_has \
    "entry.get(\"PRIORITY\") == \"3\" and \"$home/.config/qactd/qactd.conf\" in str(entry.get(\"MESSAGE\")) and \"DisplayLimit\" in str(entry.get(\"MESSAGE\"))"
[[ $(restarts_scheduled) == "$scheduled_before" ]] || fail "systemd restarted a daemon whose configuration is invalid"

step "the sandbox seen from inside: each setting of the unit refuses what it must"
# The probe runs as an ExecStartPre= of qactd.service itself, so it gets the daemon's sandbox;
# it exits 1 (and the service does not start) when a setting is not in force.
# A copy in the home folder: the repository may be under /tmp, which PrivateTmp= hides from it.
printf '' >"$home/.config/qactd/qactd.conf"
rm -f /tmp/qactd-sandbox-probe
install -m 0644 "$repository/Tests/integration/sandbox-probe.py" "$home/sandbox-probe.py"
printf '[Service]\nExecStartPre=/usr/bin/python3 %s %%h %%t %s\n' "$home/sandbox-probe.py" "$open_folder" \
    >"$home/.config/systemd/user/qactd.service.d/sandbox-probe.conf"
chown -R "$uid:$gid" "$home/.config"
sctl daemon-reload
sctl reset-failed qactd.service
probe_lines() {
    journalctl -D "$journal" -o cat --no-pager 2>/dev/null | grep '^sandbox-probe: ' || true
}
sctl start qactd.service || { probe_lines >&2; fail "qactd.service did not start with the sandbox probe (above)"; }
wait_for 10 "qactd.service to run after the sandbox probe" service_running
probe_lines >&2
probe_lines | grep -q ': FAIL (' && fail "a sandbox setting is not in force (above)"
for setting in PrivateUsers=yes NoNewPrivileges=yes ProtectSystem=strict ProtectHome=read-only ReadWritePaths= \
    ProtectKernelTunables=yes ProtectControlGroups=yes RestrictAddressFamilies=AF_UNIX SystemCallArchitectures=native \
    RestrictRealtime=yes RestrictSUIDSGID=yes RestrictNamespaces=yes LockPersonality=yes \
    "SystemCallFilter=@system-service, SystemCallErrorNumber=EPERM"; do
    probe_lines | grep -qF "sandbox-probe: $setting: ok (" || probe_lines | grep -qF "sandbox-probe: $setting: not checked (" \
        || fail "the sandbox probe did not check $setting"
done
# Said loudly: a setting this machine cannot show working is not counted as shown.
probe_lines | grep -F ': not checked (' | sed "s/^/$name: WARNING: /" >&2
[[ ! -e /tmp/qactd-sandbox-probe ]] || fail "PrivateTmp= is not in force: the probe's /tmp file is in the manager's /tmp"
rm -f "$home/.config/systemd/user/qactd.service.d/sandbox-probe.conf"

step "passed in $((SECONDS - started))s"
