import QuickActionsProtocol

/// The everyday invocations — `qactl list` and `qactl status` with their plain options — read
/// straight from the arguments. swift-argument-parser finds a command's options by reflecting
/// over every command type, and each new type it inspects costs the Swift runtime a scan of
/// every protocol conformance in the binary: more work than the rest of a `qactl list`
/// process. Anything this does not recognise exactly — help, a version request, an
/// abbreviation, a repeated or unknown option, a value swift-argument-parser would reject or
/// read otherwise — is `nil`, and swift-argument-parser parses it, so it still words every
/// error and help text, and what is accepted here it would read the same way.
enum CommonInvocation {
    case list(ConnectionSettings, all: Bool, limit: Int?, language: String?)
    case status(ConnectionSettings)

    init?(arguments: [String]) {
        guard let command = arguments.first, command == "list" || command == "status" else { return nil }
        var connection = ConnectionSettings()
        var all = false
        var limit: Int?
        var language: String?
        var seen: Set<String> = []
        var remaining = arguments.dropFirst()
        while let argument = remaining.popFirst() {
            guard seen.insert(argument).inserted else { return nil }
            switch (command, argument) {
            case (_, "--json"): connection.json = true
            case ("list", "--all"): all = true
            case (_, "--socket"):
                guard let value = Self.value(&remaining), connection.app == nil else { return nil }
                connection.socket = value
            case (_, "--app"):
                // A name that is not one is left to the full parser, which words the usage error.
                guard let value = Self.value(&remaining), (try? AppName(validating: value)) != nil, connection.socket == nil
                else { return nil }
                connection.app = value
            case ("list", "--limit"):
                // Plain decimal digits only: a sign or a negative number is left to the full parser.
                guard let value = Self.value(&remaining), value.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                    let number = Int(value)
                else { return nil }
                limit = number
            case ("list", "--language"):
                guard let value = Self.value(&remaining) else { return nil }
                language = value
            default: return nil
            }
        }
        self = command == "list" ? .list(connection, all: all, limit: limit, language: language) : .status(connection)
    }

    /// An option's value: the next argument, unless it is missing, empty or looks like an option.
    private static func value(_ remaining: inout ArraySlice<String>) -> String? {
        guard let value = remaining.popFirst(), !value.isEmpty, !value.hasPrefix("-") else { return nil }
        return value
    }

    func run() throws {
        switch self {
        case .list(let connection, let all, let limit, let language):
            try ListCommand.run(Session(connection), all: all, limit: limit, language: language)
        case .status(let connection):
            try StatusCommand.run(Session(connection))
        }
    }
}

/// `qactl --app thunderbird list` reads as `qactl list --app thunderbird`: the connection options
/// belong to each command that talks to a daemon, but a person names the daemon first, as with
/// `systemctl --user`. Only these options, and only before the command, are moved; anything else
/// is left where it is for swift-argument-parser to read or reject.
enum LeadingConnectionOptions {
    static func movedAfterCommand(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--json" || argument.hasPrefix("--app=") || argument.hasPrefix("--socket=") {
                leading.append(argument)
                index += 1
            } else if (argument == "--app" || argument == "--socket"), index + 1 < arguments.count {
                leading += [argument, arguments[index + 1]]
                index += 2
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count, !arguments[index].hasPrefix("-") else { return arguments }
        return [arguments[index]] + leading + arguments[(index + 1)...]
    }
}
