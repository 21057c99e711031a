import Foundation
import XCTest

/// GLib, as the reader of the `Exec` lines qactd writes: GIO's own `GDesktopAppInfo` (through
/// Debian's python3-gi) reads a desktop file and launches the entry or its actions as a launcher
/// does, and the program the `Exec` names is a recorder that writes down the arguments it got.
/// Nothing of qactd reads the line back, so the expectation never comes from the code under test.
///
/// The recorder is `program`: put that path where the entry's `Exec` names its program (it has a
/// space in it, so the writer's quoting of the program is read too).
public struct GLibLaunchOracle {
    /// The recorder's path, `FOLDER/qactd tools/bin/qactl`.
    public let program: String
    private let record: String
    private let stubs: String

    /// Makes the recorder in `folder` (created if missing). GLib reads no entry whose own `Exec`
    /// names a program it cannot find: `programsOnPath` are made as programs that do nothing, on
    /// the `PATH` GLib looks in (an app's `contacts %U`).
    public init(folder: String, programsOnPath: [String] = []) throws {
        let bin = folder + "/qactd tools/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        program = bin + "/qactl"
        record = folder + "/glib-launches.jsonl"
        stubs = folder + "/glib-stubs"
        try FileManager.default.createDirectory(atPath: stubs, withIntermediateDirectories: true)
        for name in programsOnPath {
            try "#!/bin/sh\nexit 0\n".write(toFile: stubs + "/" + name, atomically: true, encoding: .utf8)
            guard chmod(stubs + "/" + name, 0o755) == 0 else { throw POSIXError(.EACCES) }
        }
        let recorder = """
            #!/usr/bin/python3
            import json, os, sys
            with open(os.environ["QACTD_TEST_LAUNCH_RECORD"], "a", encoding="utf-8") as record:
                record.write(json.dumps(sys.argv[1:]) + "\\n")
            # Tells a waiting oracle the line is there (the FIFO it holds open).
            if "QACTD_TEST_LAUNCH_SIGNAL" in os.environ:
                with open(os.environ["QACTD_TEST_LAUNCH_SIGNAL"], "w") as signal:
                    signal.write("x")

            """
        try recorder.write(toFile: program, atomically: true, encoding: .utf8)
        guard chmod(program, 0o755) == 0 else { throw POSIXError(.EACCES) }
    }

    /// Launches, in order, each of `launches` of the desktop file `desktopFile` through GIO — an
    /// action's name, or nil for the entry's own `Exec` — and returns the arguments the program
    /// got each time (without its own name). Skips (fails under `CI=true`) without python3-gi.
    public func arguments(desktopFile: String, launches: [String?], file: StaticString = #filePath, line: UInt = #line) throws -> [[String]] {
        let script = """
            import os, select, sys, time
            import gi
            gi.require_version("Gio", "2.0")
            from gi.repository import Gio
            info = Gio.DesktopAppInfo.new_from_filename(sys.argv[1])
            if info is None:
                sys.exit("GLib does not read " + sys.argv[1] + " as a desktop entry")
            record = os.environ["QACTD_TEST_LAUNCH_RECORD"]
            def recorded():
                return open(record, encoding="utf-8").read().count("\\n") if os.path.exists(record) else 0
            # The recorder writes a byte to this FIFO after its line: held open for reading and
            # writing, its opening never blocks, and each launch is waited for as that byte.
            signal_path = record + ".launched"
            if os.path.lexists(signal_path):
                os.unlink(signal_path)
            os.mkfifo(signal_path)
            signal = os.open(signal_path, os.O_RDWR | os.O_NONBLOCK)
            os.environ["QACTD_TEST_LAUNCH_SIGNAL"] = signal_path
            for launch in sys.argv[2:]:
                before = recorded()
                if launch == "-":
                    info.launch([], None)
                else:
                    if launch not in info.list_actions():
                        sys.exit("GLib lists no action " + launch + ": " + ", ".join(info.list_actions()))
                    info.launch_action(launch, None)
                # Launched asynchronously: in order, each once its line is there.
                deadline = time.monotonic() + 20
                while recorded() <= before:
                    left = deadline - time.monotonic()
                    if left <= 0 or not select.select([signal], [], [], left)[0]:
                        sys.exit("the launched program recorded nothing for " + launch)
                    os.read(signal, 64)

            """
        let probe = runCommand(["/usr/bin/python3", "-c", "import gi; gi.require_version('Gio', '2.0'); from gi.repository import Gio"])
        if probe.status != 0 {
            throw unavailable("GLib's Gio for Python is missing (apt-get install python3-gi): \(probe.output)", file: file, line: line)
        }
        try? FileManager.default.removeItem(atPath: record)
        let result = runCommand(["/usr/bin/python3", "-c", script, desktopFile] + launches.map { $0 ?? "-" },
                                environment: ["QACTD_TEST_LAUNCH_RECORD": record,
                                              "PATH": stubs + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")])
        XCTAssertEqual(result.status, 0, result.output, file: file, line: line)
        guard result.status == 0, let text = FileManager.default.contents(atPath: record) else { return [] }
        return try text.split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode([String].self, from: Data($0)) }
    }

    /// The one launch of `launch` (an action's name, or nil for the entry's own `Exec`).
    public func arguments(desktopFile: String, launch: String?, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        try arguments(desktopFile: desktopFile, launches: [launch], file: file, line: line).first ?? []
    }
}
