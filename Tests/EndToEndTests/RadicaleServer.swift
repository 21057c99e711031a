import Foundation
import TestSupport
import XCTest

/// Debian's Radicale, a CardDAV server, on loopback for one test: no authentication, every
/// collection open to every user, its storage (one `.vcf` file per contact, one folder per
/// address book) in the test's folder, where the test changes contacts as another device
/// syncing to the server would.
final class RadicaleServer {
    static let executable = "/usr/bin/radicale"
    let root: URL
    let port: Int
    var storage: URL { root.appendingPathComponent("collections/collection-root") }
    private var process: BackgroundProcess?

    /// Radicale is installed; else the test is skipped loudly (a failure in CI).
    static func requireInstalled() throws {
        if !FileManager.default.isExecutableFile(atPath: executable) {
            throw unavailable("\(executable) is missing (radicale): run scripts/install-deps --test")
        }
    }

    init(in folder: URL) throws {
        root = folder.appendingPathComponent("radicale")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("collections"), withIntermediateDirectories: true)
        port = try Self.freePort()
        try """
            [server]
            hosts = 127.0.0.1:\(port)

            [auth]
            type = none

            [rights]
            type = from_file
            file = \(root.appendingPathComponent("rights").path)

            [storage]
            filesystem_folder = \(root.appendingPathComponent("collections").path)

            [logging]
            level = info
            """.write(to: root.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        try "[anyone]\nuser: .*\ncollection: .*\npermissions: RrWw\n"
            .write(to: root.appendingPathComponent("rights"), atomically: true, encoding: .utf8)
    }

    deinit { process = nil }

    /// Starts the server and waits until it accepts connections.
    func start() throws {
        let process = try BackgroundProcess(
            Self.executable, ["-C", root.appendingPathComponent("config").path],
            environment: ProcessInfo.processInfo.environment, outputFile: root.appendingPathComponent("radicale.log"))
        self.process = process
        guard waitUntil(timeout: 20, { self.accepts() || !process.process.isRunning }), process.process.isRunning else {
            throw unavailable("radicale did not start: \(process.output)")
        }
    }

    var log: String { process?.output ?? "" }

    /// The address book `user/name/` (its URL path `/user/name/`), made in the storage as
    /// Radicale keeps one.
    func addAddressBook(user: String, name: String) throws {
        let folder = storage.appendingPathComponent("\(user)/\(name)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try #"{"tag": "VADDRESSBOOK", "D:displayname": "\#(name)"}"#
            .write(to: folder.appendingPathComponent(".Radicale.props"), atomically: true, encoding: .utf8)
    }

    /// Adds or replaces a contact on the server, starred as GNOME Contacts stars one or with
    /// `categories`; written under a hidden name first, which the server does not list, then
    /// renamed into place.
    func put(user: String, book: String, uid: String, name: String, star: Bool = false, categories: [String] = []) throws {
        var lines = ["BEGIN:VCARD", "VERSION:3.0", "UID:\(uid)", "FN:\(name)", "N:\(name);;;;", "EMAIL:\(uid)@example.org"]
        if star { lines.append("X-FOLKS-FAVOURITE:true") }
        if !categories.isEmpty { lines.append("CATEGORIES:" + categories.joined(separator: ",")) }
        lines.append("END:VCARD")
        let folder = storage.appendingPathComponent("\(user)/\(book)")
        let temporary = folder.appendingPathComponent(".\(uid).vcf.new")
        try Data((lines.joined(separator: "\r\n") + "\r\n").utf8).write(to: temporary)
        guard rename(temporary.path, folder.appendingPathComponent("\(uid).vcf").path) == 0 else {
            throw CocoaError(.fileWriteUnknown)
        }
    }

    private func accepts() -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = Self.loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7f00_0001).bigEndian)
        return address
    }

    /// A port no one listens on now, from the kernel (bound to port 0, then released).
    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(socket) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard withUnsafeMutablePointer(to: &address, {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }) == 0 else { throw POSIXError(.EINVAL) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
