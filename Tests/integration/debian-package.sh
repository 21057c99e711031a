# The Debian package's steps of systemd-user-manager.sh --deb, sourced by it inside its
# private mount namespace (its helpers: step, fail, sctl, property, qactl, as_user, wait_for,
# service_running, remember_main_pid, start_user_manager, stop_user_manager; $package,
# $scratch, $home, $runtime, $uid, $gid).

# Copy-on-write copies of the folders dpkg writes to: the package's files, dpkg's database and
# logs land in a tmpfs and vanish with the namespace; the host's /usr, /etc and /var stay as
# they were. The Swift toolchain is hidden, as on a machine that never had one.
install_package() {
    step "dpkg -i $(basename "$package") over copies of /usr, /etc and /var; no Swift toolchain"
    local layers=$scratch/layers folder
    mkdir -p "$layers"
    mount -t tmpfs -o mode=0755 tmpfs "$layers"
    for folder in usr etc var; do
        mkdir -p "$layers/$folder/upper" "$layers/$folder/work"
        mount -t overlay overlay \
            -o "lowerdir=/$folder,upperdir=$layers/$folder/upper,workdir=$layers/$folder/work" "/$folder"
    done
    [[ -d /opt/swift ]] && mount -t tmpfs -o ro tmpfs /opt/swift
    hash -r
    if command -v swift >/dev/null || as_user sh -c 'command -v swift' >/dev/null; then
        fail "a Swift toolchain is still on PATH: $(command -v swift)"
    fi
    dpkg-query -W -f='${Status}' qactd 2>/dev/null | grep -q 'ok installed' && fail "qactd is installed on the host already"

    # What of the package's paths is there before (shared folders such as /usr/share/man): that
    # may stay after removal, nothing else but the conffiles.
    local path
    dpkg-deb --fsys-tarfile "$package" | tar -t | sed -e 's|^\./|/|' -e 's|/$||' | grep -v '^/*$' >"$scratch/package-paths"
    while read -r path; do
        [[ -e "$path" ]] && echo "$path"
    done <"$scratch/package-paths" >"$scratch/there-before"
    # As a person installs a downloaded package: dpkg -i, then apt-get -f install for the
    # libraries it depends on that are not there yet (on another Debian release, under their
    # names there: libpng16-16t64 provides libpng16-16 on Debian 13).
    if ! dpkg -i "$package" >"$scratch/dpkg.log" 2>&1; then
        grep -q 'dependency problems' "$scratch/dpkg.log" || { cat "$scratch/dpkg.log" >&2; fail "dpkg -i failed"; }
        DEBIAN_FRONTEND=noninteractive apt-get -f install -y -q --no-install-recommends >>"$scratch/dpkg.log" 2>&1 \
            || { cat "$scratch/dpkg.log" >&2; fail "dpkg -i left dependencies that apt-get -f install cannot resolve"; }
        step "apt-get -f install set up what the package depends on: $(sed -n 's/^Setting up \([^ ]*\) .*/\1/p' "$scratch/dpkg.log" | tr '\n' ' ')"
    fi
    [[ $(dpkg-query -W -f='${Status}' qactd) == "install ok installed" ]] || fail "dpkg does not list qactd as installed"
    for path in /usr/bin/qactd /usr/bin/qactl /usr/lib/systemd/user/qactd.service /usr/lib/systemd/user/qactd.socket \
        /usr/share/man/man1/qactl.1.gz /usr/share/man/man8/qactd.8.gz /usr/share/man/man5/qactd.conf.5.gz \
        /usr/share/bash-completion/completions/qactl /usr/share/zsh/vendor-completions/_qactl \
        /usr/share/fish/vendor_completions.d/qactl.fish /etc/qactd/qactd.conf /etc/qactd/shortcuts.plist \
        /usr/share/doc/qactd/copyright /usr/share/doc/qactd/changelog.Debian.gz \
        /usr/share/gnome-shell/extensions/quick-actions@qactd.io/metadata.json \
        /usr/share/gnome-shell/extensions/quick-actions@qactd.io/extension.js \
        /usr/share/gnome-shell/extensions/quick-actions@qactd.io/extension/__init__.js; do
        [[ -f "$path" ]] || fail "the package installed no $path"
    done
    # Every unit of the repository's systemd/ folder is in the package.
    local unit
    for unit in "$repository"/systemd/*; do
        unit=${unit##*/}
        [[ -f "/usr/lib/systemd/user/${unit%.in}" ]] || fail "the package lacks the unit ${unit%.in}"
    done
    grep -qx 'ExecStart=/usr/bin/qactd' /usr/lib/systemd/user/qactd.service || fail "ExecStart= is not /usr/bin/qactd"
    [[ -x /usr/lib/systemd/user-environment-generators/60-qactd && -f /etc/profile.d/qactd.sh ]] \
        || fail "the package has no environment generator or profile.d script for the exports folder"
    [[ $(dpkg-query -W -f='${Conffiles}' qactd | awk 'NF {print $1}' | sort | tr '\n' ' ') == \
        "/etc/profile.d/qactd.sh /etc/qactd/fr.lproj/InfoPlist.strings /etc/qactd/qactd.conf /etc/qactd/shortcuts.plist " ]] \
        || fail "the conffiles are not the default configuration: $(dpkg-query -W -f='${Conffiles}' qactd)"

    # Only Debian's libraries: every one ldd resolves belongs to an installed package.
    local binary line library libraries
    for binary in /usr/bin/qactd /usr/bin/qactl; do
        libraries=$(as_user ldd "$binary") || fail "ldd $binary failed: $libraries"
        grep -q 'libc\.so\.6 => /' <<<"$libraries" || fail "ldd $binary shows no libc: $libraries"
        while read -r line; do
            [[ "$line" == *"not found"* ]] && fail "$binary needs a library that is missing: $line"
            [[ "$line" == *swift* ]] && fail "$binary links a Swift library: $line"
            library=$(awk '{for (i = 1; i <= NF; i++) if ($i ~ /^\//) {print $i; exit}}' <<<"$line")
            [[ -z "$library" ]] && continue
            dpkg -S "$(realpath "$library")" >/dev/null 2>&1 || dpkg -S "$library" >/dev/null 2>&1 \
                || fail "$binary links $library, which no Debian package provides"
        done <<<"$libraries"
        [[ $(as_user "$binary" --version) == *"$(dpkg-query -W -f='${Version}' qactd | sed 's/-[^-]*$//')"* ]] \
            || fail "$binary --version does not print the package's version"
    done
}

use_package() {
    step "systemctl --user enable --now qactd.socket from /usr/lib/systemd/user; qactl status and trigger"
    sctl enable --now qactd.socket >/dev/null 2>&1 || fail "systemctl --user enable --now qactd.socket failed"
    [[ $(property qactd.socket UnitFileState) == enabled ]] || fail "qactd.socket is not enabled"
    [[ $(property qactd.service FragmentPath) == /usr/lib/systemd/user/qactd.service ]] \
        || fail "qactd.service comes from $(property qactd.service FragmentPath), not /usr/lib/systemd/user"
    qactl status >/dev/null || fail "qactl status failed"
    wait_for 10 "qactd.service to run" service_running
    remember_main_pid >/dev/null
    # With no configuration of the user's own, the daemon reads the package's in /etc/qactd.
    local status
    status=$(qactl status --json)
    python3 - "$status" <<'PYTHON' || fail "qactl status does not show the package's configuration: $status"
import json, sys
status = json.loads(sys.argv[1])
assert status["configFile"] == "/etc/qactd/qactd.conf", status["configFile"]
assert status["staticItemsFile"] == "/etc/qactd/shortcuts.plist", status["staticItemsFile"]
assert status["staticItems"] > 0 and status["favorites"] > 0, status
PYTHON
    qactl trigger --type=SearchAction | grep -q 'at launch' || fail "qactl trigger --type=SearchAction was not kept for the app's launch"
    [[ $(qactl status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["pendingLaunchItem"]["type"])') == SearchAction ]] \
        || fail "the daemon does not hold the triggered SearchAction for the app"
    sctl disable --now qactd.socket qactd.service >/dev/null 2>&1 || fail "systemctl --user disable --now failed"
}

# The user manager started after the install, as at a login: its environment generator put the
# exports folder first. The app's entry is exported there (an older version's copy in the
# person's folder goes), a quick action is pinned, and an upgrade of the app's entry is followed.
export_and_pin() {
    step "the session's XDG_DATA_DIRS starts with the exports folder; the old state moved; export, pin, follow the app's entry"
    local exports=$home/.local/share/qactd/exports/share data_dirs
    data_dirs=$(sctl show-environment | sed -n 's/^XDG_DATA_DIRS=//p')
    [[ "$data_dirs" == "$exports:"* ]] || fail "the user manager's XDG_DATA_DIRS does not start with '$exports': '$data_dirs'"
    local app=/usr/share/applications/io.qactd.PkgTest.desktop
    mkdir -p /usr/share/applications
    printf '[Desktop Entry]\nType=Application\nName=Package Test\nExec=/bin/true %%U\nIcon=applications-system\n' >"$app"
    # What an older qactd left in the person's own folder: a copy naming the daemon's socket.
    local older=$home/.local/share/applications/io.qactd.PkgTest.desktop
    install -d -o "$uid" -g "$gid" "$home/.local/share/applications" "$home/.config/qactd"
    printf '[Desktop Entry]\nType=Application\nName=Package Test\nExec=/usr/bin/qactl trigger --socket=%s --type=SearchAction\nX-Qactd-Generated=true\nX-Qactd-Socket=%s\n' \
        "$runtime/qactd/qactd.sock" "$runtime/qactd/qactd.sock" >"$older"
    printf '[Shortcuts]\nStaticItems=/etc/qactd/shortcuts.plist\n[Launcher]\nDesktopFile=io.qactd.PkgTest.desktop\n' >"$home/.config/qactd/qactd.conf"
    # The state as an older version left it where systemd 252 put StateDirectory= (the
    # configuration folder), with a pin: it is moved to ~/.local/state/qactd, pin and all.
    local state=$home/.local/state/qactd/state.json old_state=$home/.config/qactd/state.json
    [[ -f "$state" ]] || fail "the daemon kept no state at $state"
    python3 - "$state" "$old_state" <<'PYTHON' || fail "could not write the older version's state"
import json, sys
state = json.load(open(sys.argv[1]))
state["pins"] = [{"identifier": "ShareAction", "item": {"type": "ShareAction", "title": "Share"}, "state": "enabled"}]
json.dump(state, open(sys.argv[2], "w"), indent=2)
PYTHON
    rm -f "$state"
    chown "$uid:$gid" "$older" "$home/.config/qactd/qactd.conf" "$old_state"
    chmod 0600 "$old_state"
    sctl start qactd.socket >/dev/null 2>&1 || fail "systemctl --user start qactd.socket failed"
    qactl status >/dev/null || fail "qactl status failed"
    [[ -f "$state" && ! -e "$old_state" ]] || fail "the older version's state was not moved from $old_state to $state"
    qactl pins | grep -q ShareAction || fail "the pin made under the old path is gone: $(qactl pins)"
    [[ $(qactl status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["pendingLaunchItem"]["type"])') == SearchAction ]] \
        || fail "the state moved from the old path lost its pending SearchAction"
    wait_for 5 "the move in the journal" journal_has "\"Moved the state\" in str(entry.get(\"MESSAGE\", \"\")) and \"$old_state\" in str(entry.get(\"MESSAGE\", \"\"))"
    wait_for 10 "the export in $exports/applications" grep -qx 'X-Qactd-Generated=true' "$exports/applications/io.qactd.PkgTest.desktop"
    wait_for 10 "the older version's copy to go" test ! -e "$older"
    if qactl status | grep -q "export notice"; then fail "qactl status says the exports folder is not on XDG_DATA_DIRS: $(qactl status)"; fi
    local pinned
    pinned=$(qactl pin --type=SearchAction 2>&1) || fail "qactl pin --type=SearchAction failed: $pinned"
    wait_for 10 "the pinned launcher" test -f "$exports/applications/io.qactd.PkgTest.pinned.SearchAction.desktop"
    [[ -f "$exports/applications/io.qactd.PkgTest.pinned.ShareAction.desktop" ]] || fail "the moved pin has no launcher"
    grep -qx 'X-Qactd-Pin-Type=SearchAction' "$exports/applications/io.qactd.PkgTest.pinned.SearchAction.desktop" \
        || fail "the pinned launcher does not say what it pins"
    # The app is upgraded (its entry replaced by a rename, as dpkg does): the export follows.
    sed -i 's/^Icon=.*/Icon=accessories-calculator/' "$app"
    wait_for 2 "the export to follow the app's upgraded entry" grep -qx 'Icon=accessories-calculator' "$exports/applications/io.qactd.PkgTest.desktop"
    sctl stop qactd.socket qactd.service >/dev/null 2>&1 || fail "systemctl --user stop failed"
}

# After the purge a person logs in again (a new user manager, no environment generator left):
# nothing qactd wrote is on the session's path, so no launcher points at the missing qactl and
# no copy shadows the app's own entry, which launchers find again.
log_in_again() {
    step "dpkg --purge, log in again: XDG_DATA_DIRS and the applications folders hold nothing of qactd's"
    stop_user_manager
    start_user_manager
    local data_dirs profile_dirs folder file
    data_dirs=$(sctl show-environment | sed -n 's/^XDG_DATA_DIRS=//p')
    [[ "$data_dirs" != *"/qactd/exports/share"* ]] || fail "after the purge the session's XDG_DATA_DIRS still has the exports folder: '$data_dirs'"
    # A login without systemd's user manager reads /etc/profile.d.
    profile_dirs=$(as_user sh -c 'for script in /etc/profile.d/*.sh; do [ -r "$script" ] && . "$script"; done; echo "${XDG_DATA_DIRS:-}"')
    [[ "$profile_dirs" != *"/qactd/exports/share"* ]] || fail "after the purge a login shell's XDG_DATA_DIRS has the exports folder: '$profile_dirs'"
    [[ -e "$home/.local/share/qactd/exports/share/applications/io.qactd.PkgTest.desktop" ]] \
        || fail "the test is void: the exported entry is not in the exports folder any more"
    local searched="$home/.local/share ${data_dirs//:/ } ${profile_dirs//:/ }"
    [[ -n "$data_dirs" ]] || searched+=" /usr/local/share /usr/share"
    local found=
    for folder in $searched; do
        [[ -d "$folder/applications" ]] || continue
        while IFS= read -r -d '' file; do
            if grep -q 'qactl' "$file"; then fail "after the purge '$file' on the session's path runs qactl, which is gone"; fi
            if grep -qx 'X-Qactd-Generated=true' "$file"; then fail "after the purge '$file' on the session's path is a copy qactd wrote"; fi
            if [[ -z "$found" && "${file##*/}" == io.qactd.PkgTest.desktop ]]; then found=$file; fi
        done < <(find "$folder/applications" -name '*.desktop' -print0)
    done
    [[ "$found" == /usr/share/applications/io.qactd.PkgTest.desktop ]] \
        || fail "launchers find '$found' for the app, not its own entry"
}

remove_package() {
    step "dpkg -r leaves only the conffiles; dpkg --purge removes them"
    local conffiles path
    conffiles=$(dpkg-query -W -f='${Conffiles}' qactd | awk 'NF {print $1}')
    dpkg -r qactd >>"$scratch/dpkg.log" 2>&1 || { cat "$scratch/dpkg.log" >&2; fail "dpkg -r failed"; }
    [[ $(dpkg-query -W -f='${Status}' qactd) == "deinstall ok config-files" ]] \
        || fail "after dpkg -r, qactd is '$(dpkg-query -W -f='${Status}' qactd)'"
    # The profile.d script is a conffile, so it stays until the purge; without qactl it adds nothing.
    [[ $(as_user sh -c '. /etc/profile.d/qactd.sh; echo "${XDG_DATA_DIRS:-}"') != *"/qactd/exports/share"* ]] \
        || fail "after dpkg -r, /etc/profile.d/qactd.sh still puts the exports folder on XDG_DATA_DIRS"
    while read -r path; do
        if grep -qxF "$path" <<<"$conffiles"; then
            [[ -f "$path" ]] || fail "dpkg -r removed the conffile $path"
        elif [[ -e "$path" || -L "$path" ]]; then
            # Only what was there before and the folders holding the conffiles may stay.
            grep -qxF "$path" "$scratch/there-before" || grep -q "^$path/" <<<"$conffiles" \
                || fail "dpkg -r left $path"
        fi
    done <"$scratch/package-paths"
    dpkg --purge qactd >>"$scratch/dpkg.log" 2>&1 || { cat "$scratch/dpkg.log" >&2; fail "dpkg --purge failed"; }
    local status
    status=$(dpkg-query -W -f='${Status}' qactd 2>/dev/null || true)
    [[ -z "$status" || "$status" == *" not-installed" ]] || fail "after dpkg --purge, qactd is '$status'"
    while read -r path; do
        [[ -e "$path" ]] && fail "dpkg --purge left the conffile $path"
    done <<<"$conffiles"
    local enabled
    enabled=$(find /etc/systemd/user -name 'qactd*' 2>/dev/null)
    [[ -z "$enabled" ]] || fail "dpkg --purge left qactd enabled or masked: $enabled"
    while read -r path; do
        [[ -e "$path" ]] && ! grep -qxF "$path" "$scratch/there-before" && fail "dpkg --purge left $path"
    done <"$scratch/package-paths"
    return 0
}

# The package enables the user units for every user, as dh_installsystemduser does: a user
# manager started after the installation (this one) listens on the socket with no systemctl
# call, and starts the daemon with the desktop session (first_login).
socket_enabled_for_every_user() {
    step "a new user's manager has qactd.socket enabled and listening, with no systemctl --user enable"
    [[ $(readlink /etc/systemd/user/sockets.target.wants/qactd.socket) == /usr/lib/systemd/user/qactd.socket ]] \
        || fail "postinst did not link qactd.socket into /etc/systemd/user/sockets.target.wants"
    [[ $(readlink /etc/systemd/user/graphical-session.target.wants/qactd.service) == /usr/lib/systemd/user/qactd.service ]] \
        || fail "postinst did not link qactd.service into /etc/systemd/user/graphical-session.target.wants"
    [[ ! -e /etc/systemd/user/default.target.wants/qactd.service ]] || fail "postinst enabled qactd.service for logins without a desktop"
    [[ $(property qactd.socket UnitFileState) == enabled ]] \
        || fail "qactd.socket is '$(property qactd.socket UnitFileState)' for a new user, not enabled"
    wait_for 10 "qactd.socket to listen" socket_active
    [[ -S "$runtime/qactd/qactd.sock" ]] || fail "no socket at $runtime/qactd/qactd.sock"
}
