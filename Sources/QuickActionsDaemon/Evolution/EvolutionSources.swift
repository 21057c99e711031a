/// One source of Evolution Data Server's registry (`<uid>.source`, a GLib key file), as far as
/// choosing the address books needs it. An online account is a source of its own (a
/// `[Collection]`), the parent of its address book.
struct EvolutionSource: Equatable, Sendable {
    var uid: String
    /// The registry's file, named in every reason a book is skipped.
    var file: String
    var displayName: String?
    /// `[Data Source] Enabled=` (true when absent, as EDS takes it).
    var enabled = true
    /// `[Data Source] Parent=`: the account (collection) the source belongs to.
    var parent: String?
    /// `[Address Book] BackendName=` (`local`, `carddav`, `google`, `webdav`, …); nil
    /// when the source has no `[Address Book]` (a calendar, a mail account, an account).
    var addressBookBackend: String?
    var isAddressBook = false
    /// `[Collection] ContactsEnabled=` of an account: its books turned off as a whole.
    var contactsEnabled = true
    /// Why the file could not be read or parsed; such a source is not read.
    var problem: String?

    /// The key file's text parsed; a malformed one keeps its `problem`.
    static func parse(uid: String, file: String, text: String) -> EvolutionSource {
        var source = EvolutionSource(uid: uid, file: file)
        let assignments: [INIAssignment]
        do {
            assignments = try INIParser.parse(text, file: file)
        } catch {
            source.problem = "\(error)"
            return source
        }
        for assignment in assignments {
            switch (assignment.section, assignment.key) {
            case ("Data Source", "DisplayName"): source.displayName = assignment.value
            case ("Data Source", "Enabled"): source.enabled = isTrue(assignment.value)
            case ("Data Source", "Parent"): source.parent = assignment.value.isEmpty ? nil : assignment.value
            case ("Address Book", "BackendName"): source.addressBookBackend = assignment.value.isEmpty ? nil : assignment.value
            case ("Collection", "ContactsEnabled"): source.contactsEnabled = isTrue(assignment.value)
            default: break
            }
            if assignment.section == "Address Book" { source.isAddressBook = true }
        }
        // A group with no keys is still the source's kind.
        if !source.isAddressBook, text.contains("[Address Book]") { source.isAddressBook = true }
        return source
    }

    /// GLib's key-file booleans: `true` or `1` (anything else is false).
    private static func isTrue(_ value: String) -> Bool { value == "true" || value == "1" }
}

/// The registry as read: which address books exist, where each is kept, what kind it is, which
/// account it belongs to and whether it is to be read. Pure: the engine lists and reads the files.
struct EvolutionSourceRegistry: Equatable, Sendable {
    private(set) var sources: [String: EvolutionSource] = [:]

    init(_ sources: [EvolutionSource] = []) {
        for source in sources { self.sources[source.uid] = source }
    }

    /// The built-in book, or one the registry has an address-book source for.
    func isRegistered(_ uid: String) -> Bool {
        uid == EvolutionLocation.systemSourceUID || sources[uid]?.isAddressBook == true
    }

    /// `local` for the built-in book and a local backend; the backend's name otherwise.
    func kind(of uid: String) -> String {
        sources[uid]?.addressBookBackend ?? "local"
    }

    /// Where EDS keeps the book: the data home for a local one, the cache home for the others.
    func store(of uid: String) -> EvolutionBookStore {
        kind(of: uid) == "local" ? .local : .cache
    }

    /// The account the book belongs to: its outermost parent's display name (else its UID); nil
    /// for a book of no account.
    func account(of uid: String) -> String? {
        let parents = ancestors(of: uid)
        guard let outermost = parents.last else { return nil }
        return outermost.displayName ?? outermost.uid
    }

    /// Why the book is not read (its source, or its account, is disabled, or its file does not
    /// parse), naming the file and key; nil when it is read.
    func skipReason(_ uid: String) -> String? {
        if let source = sources[uid] {
            if let problem = source.problem { return "its source file cannot be read: \(problem)" }
            if !source.enabled { return "disabled in Evolution Data Server (Enabled=false in \(source.file))" }
        }
        for account in ancestors(of: uid) {
            let name = account.displayName ?? account.uid
            if let problem = account.problem { return "the source file of its account '\(name)' cannot be read: \(problem)" }
            if !account.enabled { return "its account '\(name)' is disabled (Enabled=false in \(account.file))" }
            if !account.contactsEnabled { return "contacts are turned off for its account '\(name)' (ContactsEnabled=false in \(account.file))" }
        }
        return nil
    }

    /// The sources above `uid` through `Parent=`, nearest first; a loop ends the walk.
    private func ancestors(of uid: String) -> [EvolutionSource] {
        var found: [EvolutionSource] = []
        var seen: Set<String> = [uid]
        var next = sources[uid]?.parent
        while let parent = next, seen.insert(parent).inserted, let source = sources[parent] {
            found.append(source)
            next = source.parent
        }
        return found
    }
}
