# The Debian package's steps of systemd-user-manager.sh --deb, sourced by it inside its
# private mount namespace (its helpers: step, fail, sctl, property, qactl, as_user, wait_for,
# service_running, remember_main_pid; $package, $scratch, $home).

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
    dpkg -i "$package" >"$scratch/dpkg.log" 2>&1 || { cat "$scratch/dpkg.log" >&2; fail "dpkg -i failed"; }
    [[ $(dpkg-query -W -f='${Status}' qactd) == "install ok installed" ]] || fail "dpkg does not list qactd as installed"
    for path in /usr/bin/qactd /usr/bin/qactl /usr/lib/systemd/user/qactd.service /usr/lib/systemd/user/qactd.socket \
        /usr/share/man/man1/qactl.1.gz /usr/share/man/man8/qactd.8.gz /usr/share/man/man5/qactd.conf.5.gz \
        /usr/share/bash-completion/completions/qactl /usr/share/zsh/vendor-completions/_qactl \
        /usr/share/fish/vendor_completions.d/qactl.fish /etc/qactd/qactd.conf /etc/qactd/shortcuts.plist \
        /usr/share/doc/qactd/copyright /usr/share/doc/qactd/changelog.Debian.gz \
        /usr/share/gnome-shell/extensions/quick-actions@qactd.io/metadata.json \
        /usr/share/gnome-shell/extensions/quick-actions@qactd.io/extension.js; do
        [[ -f "$path" ]] || fail "the package installed no $path"
    done
    # Every unit of the repository's systemd/ folder is in the package.
    local unit
    for unit in "$repository"/systemd/*; do
        unit=${unit##*/}
        [[ -f "/usr/lib/systemd/user/${unit%.in}" ]] || fail "the package lacks the unit ${unit%.in}"
    done
    grep -qx 'ExecStart=/usr/bin/qactd' /usr/lib/systemd/user/qactd.service || fail "ExecStart= is not /usr/bin/qactd"
    [[ $(dpkg-query -W -f='${Conffiles}' qactd | awk 'NF {print $1}' | sort | tr '\n' ' ') == \
        "/etc/qactd/fr.lproj/InfoPlist.strings /etc/qactd/qactd.conf /etc/qactd/shortcuts.plist " ]] \
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

remove_package() {
    step "dpkg -r leaves only the conffiles; dpkg --purge removes them"
    local conffiles path
    conffiles=$(dpkg-query -W -f='${Conffiles}' qactd | awk 'NF {print $1}')
    dpkg -r qactd >>"$scratch/dpkg.log" 2>&1 || { cat "$scratch/dpkg.log" >&2; fail "dpkg -r failed"; }
    [[ $(dpkg-query -W -f='${Status}' qactd) == "deinstall ok config-files" ]] \
        || fail "after dpkg -r, qactd is '$(dpkg-query -W -f='${Status}' qactd)'"
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
    while read -r path; do
        [[ -e "$path" ]] && ! grep -qxF "$path" "$scratch/there-before" && fail "dpkg --purge left $path"
    done <"$scratch/package-paths"
    return 0
}
