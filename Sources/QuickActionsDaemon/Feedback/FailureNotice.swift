import Glibc
import SystemCalls

/// What a person at the desktop is told when a quick action they chose did nothing: what was
/// chosen and what went wrong, in a sentence. Made by the core, which decides when; shown by
/// `DesktopNotifier`.
struct FailureNotice: Sendable, Equatable {
    /// The chosen item's title, as the launcher showed it.
    var chosen: String
    /// One or two sentences a person understands.
    var problem: String

    var summary: String { "“\(chosen)” did not work" }

    static func commandNotStarted(_ chosen: String, program: String, error: SystemCallError, launch: Bool) -> FailureNotice {
        let what = launch ? "The app’s launch command “\(program)”" : "The command “\(program)”"
        let why: String
        switch error.errno {
        case ENOENT: why = "is not installed (no such program was found)."
        case EACCES, EPERM: why = "cannot be run (it is not executable)."
        default: why = "could not be started (\(errnoText(error.errno)))."
        }
        return FailureNotice(chosen: chosen, problem: "\(what) \(why)")
    }

    static func commandFailed(_ chosen: String, exit: CommandExit) -> FailureNotice {
        switch exit.kind {
        case .action:
            var problem = "The command “\(exit.program)” failed: it \(exit.ending)."
            if let said = lastLine(of: exit.standardErrorTail) {
                problem += " It said: \(said)"
            } else if let unit = exit.place.unit {
                // A unit's output is the journal's, under the unit's name.
                problem += " What it printed: journalctl --user -u \(unit)"
            }
            return FailureNotice(chosen: chosen, problem: problem)
        case .launch:
            return FailureNotice(chosen: chosen, problem: "The app’s launch command “\(exit.program)” \(exit.ending) before the app opened.")
        }
    }

    static func refused(_ chosen: String, reason: String) -> FailureNotice {
        FailureNotice(chosen: chosen, problem: "Nothing was run: \(reason).")
    }

    static func notResponding(_ chosen: String, seconds: Int) -> FailureNotice {
        FailureNotice(chosen: chosen, problem: "The app did not answer within \(seconds) s.")
    }

    static func notHandled(_ chosen: String) -> FailureNotice {
        FailureNotice(chosen: chosen, problem: "The app could not do it: it answered that it did not handle this quick action.")
    }

    static func contactRemoved(_ chosen: String) -> FailureNotice {
        FailureNotice(chosen: chosen, problem: "This contact is no longer in your contacts.")
    }

    /// The last non-empty line, at most 200 characters.
    static func lastLine(of text: String) -> String? {
        guard let line = text.split(whereSeparator: \.isNewline).last(where: { !$0.allSatisfy(\.isWhitespace) }) else { return nil }
        return line.count > 200 ? String(line.prefix(200)) + "…" : String(line)
    }
}
