import ArgumentParser
import QuickActions
import QuickActionsProtocol
import SystemCalls
import Varlink

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the daemon's counts, paths, generation and watch health.")
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try Self.run(Session(connection))
    }

    /// The command's work, apart from its parsed form (`CommonInvocation` calls it too).
    static func run(_ session: Session) throws {
        let reply: StatusReply = try session.call(.status, NoParameters())
        session.output.emit(reply) { Render.status(reply, style: $0) }
    }
}

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the quick actions the launcher shows, in display order.")
    @OptionGroup var connection: ConnectionOptions
    @Flag(name: .long, help: "List every item, each marked displayed or not, not only the displayed ones.")
    var all = false
    @Option(name: .long, help: ArgumentHelp("Display limit for this listing (default: the configured DisplayLimit).", valueName: "n"))
    var limit: Int?
    @Option(name: .long, help: ArgumentHelp(
        "Translate the static titles into this language, e.g. fr or fr_CA (default: the daemon's language).",
        valueName: "language"))
    var language: String?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more, not \(limit).") }
        if language?.isEmpty == true { throw ValidationError("--language needs a language, such as fr or fr_CA.") }
    }

    func run() throws {
        try Self.run(Session(connection), all: all, limit: limit, language: language)
    }

    /// The command's work, apart from its parsed form (`CommonInvocation` calls it too).
    static func run(_ session: Session, all: Bool, limit: Int?, language: String?) throws {
        let reply: ListReply = try session.call(.list, ListParameters(all: all ? true : nil, limit: limit, language: language))
        session.output.emit(reply) { Render.list(reply, showDisplayedColumn: all, now: Int64(time(nil)), style: $0) }
    }
}

struct TriggerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trigger",
        abstract: "Trigger a quick action as if the user picked it on the Home Screen.",
        discussion: """
            Name the item by its displayed position (1 is the first), or by --type (plus \
            --contact for a favorite). With an app connected the action is delivered to it; \
            otherwise it becomes the pending launch item and the configured LaunchCommand starts.
            """)
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var item: ItemSelection
    @Option(name: .long, help: ArgumentHelp("A pinned item, by its pin identifier (what a pinned launcher runs).", valueName: "pin"))
    var pinned: String?

    func validate() throws {
        if pinned != nil {
            guard item.isEmpty else { throw ValidationError("--pinned names the item alone.") }
            return
        }
        try item.validateNamesOneItem()
    }

    func run() throws {
        let session = try Session(connection)
        let reply: TriggerReply = try session.call(
            .trigger, TriggerParameters(position: item.position, type: item.type, contactIdentifier: item.contact, pinned: pinned))
        session.output.emit(reply) { Render.trigger(reply, style: $0) }
    }
}

struct PinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Pin one displayed quick action as a launcher of its own.",
        discussion: """
            Name the item by its position in 'qactl list', or by --type (plus --contact for a \
            favorite). The daemon writes <app-id>.pinned.<pin>.desktop beside the exported \
            desktop entry, which docks and app grids show as a separate icon, and keeps it in \
            step: a renamed contact renames it, a removed one disables it.
            """)
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var item: ItemSelection

    func validate() throws {
        try item.validateNamesOneItem()
    }

    func run() throws {
        let session = try Session(connection)
        let reply: PinReply = try session.call(.pin, PinParameters(position: item.position, type: item.type, contactIdentifier: item.contact))
        session.output.emit(reply) { Render.pinned(reply.pin, style: $0) }
    }
}

struct PinsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins", abstract: "List the pinned quick actions, enabled or disabled, with their launchers.")
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        let session = try Session(connection)
        let reply: PinsReply = try session.call(.pins, NoParameters())
        session.output.emit(reply) { Render.pins(reply.pins, style: $0) }
    }
}

struct UnpinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpin", abstract: "Remove a pinned quick action and its launcher (or all of them).")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("The pin's position in 'qactl pins' (from 1) or its identifier.", valueName: "pin"))
    var pin: String?
    @Flag(name: .long, help: "Remove every pin.")
    var all = false

    func validate() throws {
        if all == (pin != nil) { throw ValidationError("Name one pin (its position in 'qactl pins' or its identifier), or give --all.") }
    }

    func run() throws {
        let session = try Session(connection)
        // A number is a position: pin identifiers made of digits only are named by position instead.
        let parameters = all
            ? UnpinParameters(all: true)
            : Int(pin ?? "").map { UnpinParameters(position: $0) } ?? UnpinParameters(identifier: pin)
        let reply: UnpinReply = try session.call(.unpin, parameters)
        session.output.emit(reply) { style in
            reply.removed.isEmpty ? style.dim("no pins") : reply.removed.map { "unpinned \($0)" }.joined(separator: "\n")
        }
    }
}

struct ResignActiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resign-active",
        abstract: "Tell the daemon the app resigned active, so it recomputes the favorites' quick actions.")
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .customLong("app-version"), help: ArgumentHelp("The app's version (CFBundleShortVersionString).", valueName: "version"))
    var appVersion: String?

    func run() throws {
        let session = try Session(connection)
        let reply: ResignActiveReply = try session.call(.resignActive, AppVersionParameters(appVersion: appVersion))
        session.output.emit(reply) { Render.resignActive(reply, style: $0) }
    }
}

struct ReloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload", abstract: "Re-read the configuration and static items (like SIGHUP).")
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        let session = try Session(connection)
        let reply: ReloadReply = try session.call(.reload, NoParameters())
        session.output.emit(reply) { Render.reload(reply, style: $0) }
    }
}

struct ContactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contact", abstract: "Show one contact of the live index by its identifier.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("The contact's identifier (vCard UID, else the file name).", valueName: "id"))
    var identifier: String

    func run() throws {
        let session = try Session(connection)
        let reply: GetContactReply = try session.call(.getContact, GetContactParameters(identifier: identifier))
        session.output.emit(reply) { Render.contact(reply.contact, style: $0) }
    }
}

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a static-items property list offline, without a daemon.",
        discussion: """
            Exits 1 and names the file, the item's index and the key when the file does not validate, \
            or the file and line of a broken <lang>.lproj/InfoPlist.strings beside it. Warns (on \
            standard error, still exiting 0) about a type that holds a build setting such as \
            $(PRODUCT_BUNDLE_IDENTIFIER), and, when strings files are beside the file, about a title \
            or subtitle none of them translates.
            """)
    @Flag(name: .long, help: "Print machine-readable JSON instead of aligned text.")
    var json = false
    @Argument(help: ArgumentHelp("An Info.plist or a plist holding UIApplicationShortcutItems (XML or binary).", valueName: "file"), completion: .file())
    var file: String

    func run() throws {
        let output = Output(json: json)
        let bytes: [UInt8]
        do {
            bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            output.fail(name: "FileNotReadable", message: "cannot read '\(file)': \(Render.describe(error))")
            throw ExitCode(1)
        }
        let decoded: StaticItemsFile
        do {
            decoded = try StaticItemsFile.decode(bytes, fileName: file)
        } catch {
            output.fail(name: "InvalidStaticItems", message: String(describing: error))
            throw ExitCode(1)
        }
        let tables: [String: [String: String]]
        do {
            tables = try Self.stringsTables(besides: file)
        } catch let error as StringsFileError {
            output.fail(name: "InvalidStringsFile", message: error.description)
            throw ExitCode(1)
        } catch {
            output.fail(name: "FileNotReadable", message: Render.describe(error))
            throw ExitCode(1)
        }
        let localization = Localization(tables: tables, developmentRegion: decoded.developmentRegion)
        let warnings = Self.warnings(for: decoded, localization: localization)
        for warning in warnings { writeToStandardError("qactl: warning: \(warning)\n") }
        let languages = tables.keys.sorted()
        output.emit(ValidationReport(
            file: file, valid: true, items: decoded.items, appVersion: decoded.appVersion,
            languages: languages, warnings: warnings)
        ) {
            Render.validation(file: file, decoded, languages: languages, style: $0)
        }
    }

    /// What the daemon would accept but most likely not show as meant.
    static func warnings(for decoded: StaticItemsFile, localization: Localization) -> [String] {
        var warnings: [String] = []
        for (index, setting) in decoded.unexpandedBuildSettings {
            let why = StaticItemsFile.bundleIdentifierSettings.contains(setting)
                ? "qactd expands it only when [Shortcuts] BundleIdentifier= or [Launcher] DesktopFile= is set"
                : "qactd never expands it"
            warnings.append("item \(index + 1): the type \"\(decoded.items[index].type)\" holds \(setting); \(why).")
        }
        // Without any strings file the titles are plain text, not keys.
        guard !localization.isEmpty else { return warnings }
        for (index, item) in decoded.items.enumerated() {
            let fields: [(name: String, key: String?)] = [("title", item.title), ("subtitle", item.subtitle)]
            for (field, key) in fields {
                guard let key, !localization.hasTranslation(for: key) else { continue }
                warnings.append(
                    "item \(index + 1): no \(Localization.stringsFileName) beside the file translates the \(field) \"\(key)\"; it is shown as written.")
            }
        }
        return warnings
    }

    /// Every `<lang>.lproj/InfoPlist.strings` in the folder of `file`, by language; the daemon reads the same.
    static func stringsTables(besides file: String) throws -> [String: [String: String]] {
        let folder = parentFolder(of: file)
        guard let names = try? directoryEntryNames(folder) else { return [:] }
        var tables: [String: [String: String]] = [:]
        for name in names.sorted() {
            guard let language = Localization.language(ofFolder: name) else { continue }
            let path = "\(folder == "/" ? "" : folder)/\(name)/\(Localization.stringsFileName)"
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            tables[language] = try StringsFile.parse(bytes: bytes, fileName: path)
        }
        return tables
    }
}

struct ValidationReport: Encodable {
    var file: String
    var valid: Bool
    var items: [ShortcutItem]
    var appVersion: String?
    /// The `.lproj` languages found beside the file.
    var languages: [String]
    var warnings: [String]
}

/// How `trigger` and `pin` name one displayed item: by its position in `qactl list`, or by
/// its type (plus the contact for a favorite).
struct ItemSelection: ParsableArguments {
    @Argument(help: ArgumentHelp("The item's displayed position in 'qactl list', from 1.", valueName: "position"))
    var position: Int?
    @Option(name: .long, help: ArgumentHelp("The item's type, e.g. SearchAction or FavoriteAction.", valueName: "type"))
    var type: String?
    @Option(name: .long, help: ArgumentHelp("With --type: the contact identifier of a favorite.", valueName: "id"))
    var contact: String?

    var isEmpty: Bool { position == nil && type == nil && contact == nil }

    /// Not `validate()`: `trigger --pinned` names its item without any of these.
    func validateNamesOneItem() throws {
        switch (position, type) {
        case (nil, nil): throw ValidationError("Name the item: a POSITION, or --type TYPE.")
        case (.some, .some): throw ValidationError("Give either a POSITION or --type, not both.")
        case (let position?, nil) where position < 1:
            throw ValidationError("POSITION counts from 1; \(position) names no item.")
        case (.some, nil) where contact != nil: throw ValidationError("--contact goes with --type.")
        default: break
        }
    }
}
