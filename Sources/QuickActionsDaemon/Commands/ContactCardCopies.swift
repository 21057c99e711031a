import Contacts
import Glibc
import QuickActionsProtocol
import SystemCalls

/// `{file}` and `QACTD_CONTACT_FILE` for a contact whose own file is not a vCard (a JSON
/// contact): a private copy, mode 0600, in a `cards` folder (0700) beside the daemon's socket,
/// under the runtime folder; an app's instance has a `NAME.cards` folder of its own there, since
/// the apps' sockets share the runtime folder and their contacts may share identifiers.
/// Written atomically at each trigger, so it is the contact as it is now.
enum ContactCardCopies {
    /// The copy's path, or the error that kept it from being written.
    static func write(
        _ contact: Contact, besideSocket socketPath: String, instance: InstanceName = .plain
    ) throws(SystemCallError) -> String {
        let runtimeFolder = String(socketPath[..<(socketPath.lastIndex(of: "/") ?? socketPath.startIndex)])
        let folder = (runtimeFolder.isEmpty ? "." : runtimeFolder) + "/" + (instance.app.map { "\($0.name).cards" } ?? "cards")
        try makeDirectories(folder, mode: 0o700)
        let path = folder + "/" + fileName(for: contact.identifier)
        do {
            try FileIO.replaceAtomically(path, with: [Array(VCardWriter.card(of: contact).utf8)], mode: 0o600)
        } catch {
            throw error.error
        }
        return path
    }

    /// The identifier is anything a contact file says: its hash names the file (FNV-1a, 64 bits).
    static func fileName(for identifier: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in identifier.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + ".vcf"
    }
}
