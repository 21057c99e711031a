import Contacts
import Glibc
import QuickActions
import QuickActionsProtocol
import SystemCalls

/// Where a contact's whole card comes from, as the core found it.
enum ContactCardSource: Sendable, Equatable {
    /// A vCard file holding this one card: the file itself is the card.
    case ownFile(String)
    /// The card at `position` (from 0) of a vCard file holding several.
    case cardInFile(path: String, position: Int)
    /// The card's text as its source keeps it (an Evolution address book's row).
    case text([UInt8])
    /// A contact with no vCard of its own (a JSON contact): what `VCardWriter` makes of it.
    case written
    /// The source could not give it.
    case unavailable(String)
}

/// Why a contact's card cannot be handed to a command.
struct ContactCardError: Error, CustomStringConvertible, Equatable {
    var description: String
}

/// `{file}` and `QACTD_CONTACT_FILE`: the contact's whole card, as a file the command can read.
/// A vCard file that holds only this card is passed as it is; any other card (one of several in a
/// file, an Evolution row, a JSON contact) is a copy, mode 0600, in a `cards` folder (0700) beside
/// the daemon's socket, under the runtime folder, which the command's own unit can read; an
/// app's instance has a `NAME.cards` folder of its own there, since the apps' sockets share the
/// runtime folder and their contacts may share identifiers. Written atomically at each trigger,
/// so it is the contact as it is now.
enum ContactCards {
    static func file(
        for contact: Contact, from source: ContactCardSource, besideSocket socketPath: String, instance: InstanceName = .plain
    ) throws(ContactCardError) -> String {
        let card: [UInt8]
        switch source {
        case .ownFile(let path):
            return path
        case .cardInFile(let path, let position):
            let read: [UInt8]?
            do {
                read = try FileIO.readFileIfPresent(path)
            } catch {
                throw ContactCardError(description: "'\(path)' cannot be read: \(error)")
            }
            guard let bytes = read else { throw ContactCardError(description: "'\(path)' is gone") }
            let ranges = VCardSplitting.cardRanges(in: bytes)
            guard position < ranges.count else { throw ContactCardError(description: "'\(path)' no longer holds its card \(position + 1)") }
            card = Array(bytes[ranges[position]])
        case .text(let text):
            card = text
        case .written:
            card = Array(VCardWriter.card(of: contact).utf8)
        case .unavailable(let why):
            throw ContactCardError(description: why)
        }
        let runtimeFolder = String(socketPath[..<(socketPath.lastIndex(of: "/") ?? socketPath.startIndex)])
        let folder = (runtimeFolder.isEmpty ? "." : runtimeFolder) + "/" + (instance.app.map { "\($0.name).cards" } ?? "cards")
        let path = folder + "/" + fileName(for: contact.identifier)
        do {
            try makeDirectories(folder, mode: 0o700)
            try FileIO.replaceAtomically(path, with: card, mode: 0o600)
        } catch {
            throw ContactCardError(description: "its copy '\(path)' cannot be written: \(error)")
        }
        return path
    }

    /// The identifier is anything a contact file says: its hash names the file (FNV-1a, 64 bits).
    static func fileName(for identifier: String) -> String {
        StableHash.hex(identifier.utf8) + ".vcf"
    }
}
