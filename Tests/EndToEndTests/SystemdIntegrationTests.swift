import Foundation
import TestSupport
import XCTest

private func commandExists(_ name: String) -> Bool {
    DaemonFixture.run("/bin/sh", ["-c", "command -v \(name)"]).status == 0
}

/// The installed units under a real systemd user manager (and journald), driven by
/// `Tests/integration/systemd-user-manager.sh`; see that script for every step it checks.
final class SystemdUserManagerTests: XCTestCase {
    func testInstalledUnitsUnderARealUserManager() throws {
        try runUserManagerScript([DaemonFixture.binDirectory.path])
    }
}

/// Runs `Tests/integration/systemd-user-manager.sh` with `arguments`, on this system or, with
/// `root`, chrooted into that Debian root (`Tests/integration/in-root`, the repository bound
/// read-only at its own path); its exit status 77 is a skip.
private func runUserManagerScript(_ arguments: [String], root: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
    let script = DaemonFixture.repository.appendingPathComponent("Tests/integration/systemd-user-manager.sh").path
    let inRoot = root.map { [DaemonFixture.repository.appendingPathComponent("Tests/integration/in-root").path, $0,
                             "--ro", DaemonFixture.repository.path, "--"] } ?? []
    // `timeout` bounds the whole run; SIGTERM lets the script's trap stop the manager and journald.
    let result = DaemonFixture.run("/usr/bin/timeout", ["--signal=TERM", "--kill-after=20", "150"] + inRoot + [script] + arguments)
    print(result.stderr)
    // The script itself fails rather than skip under CI=true.
    if result.status == 77 {
        throw unavailable(result.stderr.split(separator: "\n").last.map(String.init) ?? "skipped", file: file, line: line)
    }
    XCTAssertEqual(result.status, 0, "\(script) \(arguments.joined(separator: " ")) failed:\n\(result.stderr)", file: file, line: line)
    XCTAssertTrue(result.stderr.contains("passed in"), result.stderr, file: file, line: line)
}

/// The Debian package installed as a user would: `dpkg -i` inside the systemd test's private
/// namespace, the units started from /usr/lib/systemd/user, then `dpkg -r` and `dpkg --purge`
/// (`Tests/integration/debian-package.sh`). `make check` builds the package (`make deb`) first.
final class DebianPackageTests: XCTestCase {
    private func newestModification(under folder: URL) -> Date {
        var newest = Date.distantPast
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.contentModificationDateKey])
        while let url = enumerator?.nextObject() as? URL {
            if let date = try? url.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate {
                newest = max(newest, date)
            }
        }
        return newest
    }

    func testPackageInstalledLikeAUserWould() throws {
        try runUserManagerScript(["--deb", try newestPackage().path])
    }

    /// The package built here (Debian 12) on Debian 13, in the root GnomeShell48EndToEndTests
    /// uses: `dpkg -i` and `apt-get -f install` resolve its dependencies under Debian 13's names,
    /// its units run under systemd 257's user manager, `qactl status` answers, the purge leaves
    /// nothing of it.
    func testPackageInstalledOnDebian13() throws {
        let package = try newestPackage()
        guard try Debian13Root.make() else { return }
        try runUserManagerScript(["--deb", package.path], root: Debian13Root.path)
    }

    /// The newest package in out/, which must be newer than the sources.
    private func newestPackage() throws -> URL {
        let out = DaemonFixture.repository.appendingPathComponent("out")
        let packages = (try? FileManager.default.contentsOfDirectory(at: out, includingPropertiesForKeys: [.contentModificationDateKey])) ?? []
        let dated = packages.filter { $0.lastPathComponent.hasPrefix("qactd_") && $0.pathExtension == "deb" }.map {
            ($0, (try? $0.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate) ?? .distantPast)
        }
        guard let (package, built) = dated.max(by: { $0.1 < $1.1 }) else {
            throw unavailable("no package in \(out.path): run make deb first")
        }
        let sources = newestModification(under: DaemonFixture.repository.appendingPathComponent("Sources"))
        guard built >= sources else {
            throw unavailable("\(package.path) is older than the sources: run make deb again")
        }
        return package
    }
}

/// `make install` / `make uninstall` of the already-built products into scratch prefixes.
final class InstallTests: XCTestCase {
    private func make(_ target: String, prefix: String, home: URL) -> DaemonFixture.Result {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["USERUNITDIR"] = nil
        environment["DESTDIR"] = nil
        return DaemonFixture.run(
            "/usr/bin/env",
            ["make", "-C", DaemonFixture.repository.path, "--no-print-directory", target, "SKIP_BUILD=1",
             "BUILDDIR=\(DaemonFixture.binDirectory.path)", "PREFIX=\(prefix)"],
            environment: environment)
    }

    private func files(under root: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        var files: [String] = []
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(path)
            }
        }
        return files.sorted()
    }

    func testInstallAndUninstallIntoAPrefix() throws {
        guard commandExists("make") else { throw unavailable("make is not installed") }
        let scratch = URL(fileURLWithPath: try makeTemporaryFolder("install"))
        let prefix = scratch.appendingPathComponent("prefix")
        let home = scratch.appendingPathComponent("home")
        let install = make("install", prefix: prefix.path, home: home)
        XCTAssertEqual(install.status, 0, install.stderr + install.stdout)

        XCTAssertEqual(files(under: prefix), [
            "bin/qactd", "bin/qactl",
            "etc/profile.d/qactd.sh",
            "etc/qactd/fr.lproj/InfoPlist.strings", "etc/qactd/qactd.conf", "etc/qactd/shortcuts.plist",
            "lib/systemd/user-environment-generators/60-qactd",
            "lib/systemd/user/qactd.service", "lib/systemd/user/qactd.socket",
            "lib/systemd/user/qactd@.service", "lib/systemd/user/qactd@.socket",
            "share/bash-completion/completions/qactd", "share/bash-completion/completions/qactl",
            "share/fish/vendor_completions.d/qactd.fish", "share/fish/vendor_completions.d/qactl.fish",
            "share/gnome-shell/extensions/quick-actions@qactd.io/extension.js",
            "share/gnome-shell/extensions/quick-actions@qactd.io/extension/__init__.js",
            "share/gnome-shell/extensions/quick-actions@qactd.io/metadata.json",
            "share/man/man1/qactl.1", "share/man/man5/qactd.conf.5", "share/man/man8/qactd.8",
            "share/zsh/site-functions/_qactd", "share/zsh/site-functions/_qactl",
        ])
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: prefix.appendingPathComponent("bin/qactd").path))
        // One executable: qactl is a link to it beside it, which runs the client by its name.
        XCTAssertEqual(try? FileManager.default.destinationOfSymbolicLink(atPath: prefix.appendingPathComponent("bin/qactl").path), "qactd")
        let client = DaemonFixture.run(prefix.appendingPathComponent("bin/qactl").path, ["--help"])
        XCTAssertEqual(client.status, 0, client.stderr)
        XCTAssertTrue(client.stdout.contains("USAGE: qactl "), client.stdout)

        // Every session gets qactd's exports folder in front of XDG_DATA_DIRS, once, while the
        // installed qactl is there: the environment generator for the user manager, the
        // profile.d script for other logins.
        let generator = prefix.appendingPathComponent("lib/systemd/user-environment-generators/60-qactd").path
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: generator))
        let generated = DaemonFixture.run(generator, [], environment: ["HOME": "/home/ada", "XDG_DATA_DIRS": "/usr/share"])
        XCTAssertEqual(generated.stdout, "XDG_DATA_DIRS=/home/ada/.local/share/qactd/exports/share:/usr/share\n", generated.stderr)
        let unchanged = DaemonFixture.run(
            generator, [], environment: ["HOME": "/h", "XDG_DATA_HOME": "/d", "XDG_DATA_DIRS": "/d/qactd/exports/share:/usr/share"])
        XCTAssertEqual(unchanged.stdout, "", "already there: nothing to add")
        // At login, before any shell reads the apps, the copies qactd retired go; its live export
        // and a file that only looks retired (not qactd's) stay. (No gnome-shell of this user
        // runs here: with one, they would stay.)
        let dataHome = scratch.appendingPathComponent("data")
        let applications = dataHome.appendingPathComponent("qactd/exports/share/applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        let entries = [
            "retired.desktop": "[Desktop Entry]\nType=Application\nName=R\nExec=r\nX-Qactd-Generated=true\nX-Qactd-Retired=true\n",
            "live.desktop": "[Desktop Entry]\nType=Application\nName=L\nExec=l\nX-Qactd-Generated=true\n",
            "foreign.desktop": "[Desktop Entry]\nType=Application\nName=F\nExec=f\nX-Qactd-Retired=true\n",
        ]
        for (name, text) in entries {
            try text.write(to: applications.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let atLogin = DaemonFixture.run(generator, [], environment: ["HOME": "/h", "XDG_DATA_HOME": dataHome.path, "XDG_DATA_DIRS": "/usr/share"])
        XCTAssertEqual(atLogin.stdout, "XDG_DATA_DIRS=\(dataHome.path)/qactd/exports/share:/usr/share\n", atLogin.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: applications.path).sorted(), ["foreign.desktop", "live.desktop"])
        let profile = prefix.appendingPathComponent("etc/profile.d/qactd.sh").path
        let sourced = DaemonFixture.run(
            "/bin/sh", ["-c", ". \"$0\"; . \"$0\"; echo \"$XDG_DATA_DIRS\"", profile], environment: ["HOME": "/home/ada"])
        XCTAssertEqual(sourced.stdout, "/home/ada/.local/share/qactd/exports/share:/usr/local/share:/usr/share\n", sourced.stderr)

        let service = try String(contentsOf: prefix.appendingPathComponent("lib/systemd/user/qactd.service"), encoding: .utf8)
        XCTAssertTrue(service.contains("\nExecStart=\(prefix.path)/bin/qactd\n"), service)
        XCTAssertFalse(service.contains("@bindir@"), "a placeholder was left unsubstituted:\n\(service)")
        for line in ["Type=notify", "Restart=on-failure", "ExecReload=/bin/kill -HUP $MAINPID", "PrivateUsers=yes",
                     "ReadWritePaths=%h/.local/state/qactd %h/.local/share/qactd %t/qactd"] {
            XCTAssertTrue(service.contains("\n\(line)\n"), "qactd.service lacks \(line)")
        }
        XCTAssertTrue(service.contains("\nWatchdogSec="), "qactd.service has no WatchdogSec=")
        XCTAssertTrue(service.contains("\nDocumentation=man:qactd(8) man:qactd.conf(5) man:qactl(1)\n"))
        let socket = try String(contentsOf: prefix.appendingPathComponent("lib/systemd/user/qactd.socket"), encoding: .utf8)
        for line in ["ListenStream=%t/qactd/qactd.sock", "SocketMode=0600", "DirectoryMode=0700"] {
            XCTAssertTrue(socket.contains("\n\(line)\n"), "qactd.socket lacks \(line)")
        }

        // One instance per app: the templates, beside the plain units.
        let template = try String(contentsOf: prefix.appendingPathComponent("lib/systemd/user/qactd@.service"), encoding: .utf8)
        for line in ["ExecStart=\(prefix.path)/bin/qactd --app=%i", "Requires=qactd@%i.socket"] {
            XCTAssertTrue(template.contains("\n\(line)\n"), "qactd@.service lacks \(line)")
        }
        let templateSocket = try String(contentsOf: prefix.appendingPathComponent("lib/systemd/user/qactd@.socket"), encoding: .utf8)
        for line in ["ListenStream=%t/qactd/%i.sock", "SocketMode=0600", "DirectoryMode=0700", "RemoveOnStop=yes"] {
            XCTAssertTrue(templateSocket.contains("\n\(line)\n"), "qactd@.socket lacks \(line)")
        }

        // systemd's own checker: valid directives, an executable ExecStart=, and (with the
        // installed pages on MANPATH) every Documentation=man:… page exists. A template is
        // checked as an instance of it.
        if commandExists("systemd-analyze") {
            var environment = ProcessInfo.processInfo.environment
            environment["MANPATH"] = prefix.appendingPathComponent("share/man").path
            environment["XDG_RUNTIME_DIR"] = scratch.path
            for units in [["qactd.socket", "qactd.service"], ["qactd@.socket", "qactd@.service"]] {
                let verify = DaemonFixture.run(
                    "/usr/bin/env",
                    ["systemd-analyze", "--user", "verify"] + units.map { prefix.appendingPathComponent("lib/systemd/user/\($0)").path },
                    environment: environment)
                XCTAssertEqual(verify.status, 0, "systemd-analyze verify \(units):\n\(verify.stdout)\(verify.stderr)")
                // A directive it cannot parse is only a warning ("…, ignoring") with status 0.
                XCTAssertEqual(verify.stderr, "", "systemd-analyze verify \(units) warns")
            }
        } else if isContinuousIntegration {
            XCTFail("systemd-analyze is not installed (Debian package systemd)")
        }

        // The completions come from the argument parsers: each names the tool and its subcommands.
        let bash = try String(contentsOf: prefix.appendingPathComponent("share/bash-completion/completions/qactl"), encoding: .utf8)
        XCTAssertTrue(bash.contains("complete -o filenames -F _qactl qactl"), "no bash completion for qactl:\n\(bash)")
        XCTAssertTrue(bash.contains("resign-active"), "the bash completion lacks the subcommands")
        let zsh = try String(contentsOf: prefix.appendingPathComponent("share/zsh/site-functions/_qactl"), encoding: .utf8)
        XCTAssertTrue(zsh.hasPrefix("#compdef qactl"), zsh)
        let fish = try String(contentsOf: prefix.appendingPathComponent("share/fish/vendor_completions.d/qactl.fish"), encoding: .utf8)
        XCTAssertTrue(fish.contains("complete -c 'qactl'"), "no fish completion for qactl:\n\(fish)")

        // The installed qactd finds the installed default configuration (PREFIX/etc/qactd).
        let installedConf = try String(contentsOf: prefix.appendingPathComponent("etc/qactd/qactd.conf"), encoding: .utf8)
        let shippedConf = try String(contentsOf: DaemonFixture.repository.appendingPathComponent("etc/qactd/qactd.conf"), encoding: .utf8)
        XCTAssertEqual(installedConf, shippedConf)

        // A second install keeps a configuration the user edited and puts the shipped one beside it.
        let edited = installedConf + "\n# edited\n"
        try edited.write(to: prefix.appendingPathComponent("etc/qactd/qactd.conf"), atomically: true, encoding: .utf8)
        let reinstall = make("install", prefix: prefix.path, home: home)
        XCTAssertEqual(reinstall.status, 0, reinstall.stderr)
        XCTAssertEqual(try String(contentsOf: prefix.appendingPathComponent("etc/qactd/qactd.conf"), encoding: .utf8), edited)
        XCTAssertEqual(try String(contentsOf: prefix.appendingPathComponent("etc/qactd/qactd.conf.new"), encoding: .utf8), shippedConf)

        // With qactl gone, a profile.d script left behind adds nothing.
        try FileManager.default.removeItem(at: prefix.appendingPathComponent("bin/qactl"))
        let withoutQactl = DaemonFixture.run("/bin/sh", ["-c", ". \"$0\"; echo \"${XDG_DATA_DIRS:-unset}\"", profile], environment: ["HOME": "/home/ada"])
        XCTAssertEqual(withoutQactl.stdout, "unset\n")
        XCTAssertEqual(DaemonFixture.run(generator, [], environment: ["HOME": "/home/ada"]).stdout, "")

        let uninstall = make("uninstall", prefix: prefix.path, home: home)
        XCTAssertEqual(uninstall.status, 0, uninstall.stderr)
        XCTAssertEqual(files(under: prefix), ["etc/qactd/qactd.conf", "etc/qactd/qactd.conf.new"],
                       "uninstall must remove everything but the configuration the user edited")
        XCTAssertTrue(uninstall.stderr.contains("keeping the modified"), uninstall.stderr)
    }

    /// An app's instance runs exactly as the plain daemon does: both units come from one template
    /// (systemd/NAME.in), and the generated template unit's directives are the plain unit's, line
    /// for line, but for the instance's name and paths.
    func testTheTemplateUnitsDifferFromThePlainOnesOnlyInTheInstance() throws {
        guard commandExists("make") else { throw unavailable("make is not installed") }
        let scratch = URL(fileURLWithPath: try makeTemporaryFolder("units"))
        let prefix = scratch.appendingPathComponent("prefix")
        let install = make("install", prefix: prefix.path, home: scratch.appendingPathComponent("home"))
        XCTAssertEqual(install.status, 0, install.stderr + install.stdout)
        func directives(_ name: String) throws -> [String] {
            try String(contentsOf: prefix.appendingPathComponent("lib/systemd/user/\(name)"), encoding: .utf8)
                .split(separator: "\n").map(String.init).filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
        let bindir = prefix.appendingPathComponent("bin").path
        let instanceOnly: [String: String] = [
            "Description=Home Screen quick actions daemon": "Description=Home Screen quick actions daemon for %i",
            "Requires=qactd.socket": "Requires=qactd@%i.socket",
            "After=qactd.socket": "After=qactd@%i.socket",
            "ExecStart=\(bindir)/qactd": "ExecStart=\(bindir)/qactd --app=%i",
            "Description=Home Screen quick actions daemon socket": "Description=Home Screen quick actions daemon socket for %i",
            "ListenStream=%t/qactd/qactd.sock": "ListenStream=%t/qactd/%i.sock",
        ]
        for (plain, template) in [("qactd.service", "qactd@.service"), ("qactd.socket", "qactd@.socket")] {
            XCTAssertEqual(try directives(template), try directives(plain).map { instanceOnly[$0] ?? $0 }, "\(template) drifted from \(plain)")
        }
        // One template each, nothing else in systemd/: no second copy to drift.
        let sources = try FileManager.default.contentsOfDirectory(atPath: DaemonFixture.repository.appendingPathComponent("systemd").path)
        XCTAssertEqual(sources.sorted(), ["qactd.service.in", "qactd.socket.in"])
    }

    func testLocalPrefixPutsUnitsWhereTheUserManagerLooks() throws {
        guard commandExists("make") else { throw unavailable("make is not installed") }
        let home = URL(fileURLWithPath: try makeTemporaryFolder("home"))
        let prefix = home.appendingPathComponent(".local").path
        let install = make("install", prefix: prefix, home: home)
        XCTAssertEqual(install.status, 0, install.stderr)
        // systemd --user reads ~/.local/share/systemd/user, never ~/.local/lib/systemd/user.
        let unit = home.appendingPathComponent(".local/share/systemd/user/qactd.service").path
        XCTAssertTrue(FileManager.default.fileExists(atPath: unit), install.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.appendingPathComponent(".local/lib/systemd").path))
        XCTAssertTrue(try String(contentsOfFile: unit, encoding: .utf8).contains("\nExecStart=\(prefix)/bin/qactd\n"))

        // Enabled as `systemctl --user enable` does it, so the next login starts them: the socket
        // with sockets.target, the daemon with the desktop session.
        let wants = home.appendingPathComponent(".config/systemd/user")
        let socketLink = wants.appendingPathComponent("sockets.target.wants/qactd.socket").path
        let serviceLink = wants.appendingPathComponent("graphical-session.target.wants/qactd.service").path
        XCTAssertEqual(try? FileManager.default.destinationOfSymbolicLink(atPath: socketLink), prefix + "/share/systemd/user/qactd.socket", install.stderr)
        XCTAssertEqual(try? FileManager.default.destinationOfSymbolicLink(atPath: serviceLink), unit, install.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: wants.appendingPathComponent("default.target.wants/qactd.service").path),
                       "not in a login without a desktop")
        // The person disables the daemon; installing again (an upgrade) keeps their choice.
        try FileManager.default.removeItem(atPath: serviceLink)
        let again = make("install", prefix: prefix, home: home)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: serviceLink), "a reinstall enabled what the person disabled: \(again.stderr)")
        XCTAssertNotNil(try? FileManager.default.destinationOfSymbolicLink(atPath: socketLink))

        XCTAssertEqual(make("uninstall", prefix: prefix, home: home).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: unit))
        XCTAssertNil(try? FileManager.default.destinationOfSymbolicLink(atPath: socketLink), "uninstall leaves no link behind")
    }

    func testInstallExtrasRejectsBadArguments() {
        let script = DaemonFixture.repository.appendingPathComponent("scripts/install-extras").path
        XCTAssertEqual(DaemonFixture.run(script, []).status, 64)
        XCTAssertEqual(DaemonFixture.run(script, ["", "relative/prefix", "/nonexistent"]).status, 64)
        let missing = DaemonFixture.run(script, ["", "/tmp/qactd-never-\(UUID().uuidString.prefix(8))", "/nonexistent"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("'/nonexistent/qactd' is missing"), missing.stderr)
    }
}

/// man/: lint-clean, and qactl(1) / qactd(8) in step with the argument parsers.
final class ManualPageTests: XCTestCase {
    private let pages = ["qactd.8", "qactl.1", "qactd.conf.5"]

    private func page(_ name: String) throws -> String {
        try String(contentsOf: DaemonFixture.repository.appendingPathComponent("man/\(name)"), encoding: .utf8)
    }

    func testManualPagesAreLintClean() throws {
        guard commandExists("mandoc") else { throw unavailable("mandoc is not installed (scripts/install-deps --test)") }
        for name in pages {
            let path = DaemonFixture.repository.appendingPathComponent("man/\(name)").path
            let lint = DaemonFixture.run("/usr/bin/env", ["mandoc", "-T", "lint", "-W", "warning", path])
            XCTAssertEqual(lint.status, 0, "mandoc -T lint -W warning \(name):\n\(lint.stdout)\(lint.stderr)")
        }
    }

    /// (command path, long and short option spellings) of everything `--help` shows.
    private struct HelpEntry {
        var command: [String]
        var options: [String]
    }

    private func helpEntries(_ executable: String) throws -> [HelpEntry] {
        let dump = DaemonFixture.run(executable, ["--experimental-dump-help"])
        XCTAssertEqual(dump.status, 0, dump.stderr)
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var entries: [HelpEntry] = []
        func walk(_ command: [String: Any], path: [String]) {
            guard command["shouldDisplay"] as? Bool ?? true else { return }
            let name = command["commandName"] as? String ?? ""
            let here = path + [name]
            var options: [String] = []
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                guard argument["shouldDisplay"] as? Bool ?? true else { continue }
                for spelling in argument["names"] as? [[String: Any]] ?? [] {
                    guard let kind = spelling["kind"] as? String, let value = spelling["name"] as? String else { continue }
                    switch kind {
                    case "long": options.append("--" + value)
                    case "short": options.append("-" + value)
                    default: break
                    }
                }
            }
            entries.append(HelpEntry(command: here, options: options))
            for subcommand in command["subcommands"] as? [[String: Any]] ?? [] { walk(subcommand, path: here) }
        }
        walk(try XCTUnwrap(root["command"] as? [String: Any]), path: [])
        return entries
    }

    /// mdoc writes `--json` as `Fl \-json` and `-h` as `Fl h`.
    private func mdoc(_ option: String) -> String {
        option.hasPrefix("--") ? "Fl \\-" + option.dropFirst(2) : "Fl " + option.dropFirst()
    }

    func testQactlManualCoversEveryCommandAndOption() throws {
        let manual = try page("qactl.1")
        let entries = try helpEntries(DaemonFixture.qactl)
        let subcommands = Set(entries.filter { $0.command.count == 2 }.map { $0.command[1] })
        XCTAssertTrue(subcommands.isSuperset(of: ["status", "list", "trigger", "reload", "validate"]), "\(subcommands)")
        for entry in entries {
            if entry.command.count > 1 {
                XCTAssertTrue(manual.contains("\n.It Cm \(entry.command[1])"),
                              "qactl(1) has no COMMANDS entry for '\(entry.command.joined(separator: " "))'")
                XCTAssertTrue(manual.contains("\n.Cm \(entry.command[1])\n"), "qactl(1)'s SYNOPSIS lacks '\(entry.command[1])'")
            }
            for option in entry.options {
                XCTAssertTrue(manual.contains(mdoc(option)),
                              "qactl(1) does not document \(option) of '\(entry.command.joined(separator: " "))'")
            }
        }
        // And the other way: the page documents no command the parser does not know.
        for line in manual.split(separator: "\n") where line.hasPrefix(".It Cm ") {
            let name = line.dropFirst(".It Cm ".count).split(separator: " ").first.map(String.init) ?? ""
            XCTAssertTrue(subcommands.contains(name), "qactl(1) documents '\(name)', which qactl does not have")
        }
    }

    func testQactdManualCoversEveryOption() throws {
        let manual = try page("qactd.8")
        for entry in try helpEntries(DaemonFixture.qactd) {
            for option in entry.options {
                XCTAssertTrue(manual.contains(mdoc(option)), "qactd(8) does not document \(option)")
            }
        }
    }
}
