/// Which files of the contacts directory hold contacts (by extension). Everything else is
/// ignored: hidden names, editors' temporary and backup files, and vdir metadata files
/// such as `displayname` or `color`, which have no extension.
public enum ContactFileKind: Hashable, Sendable {
    case vcard
    case json

    /// The kind for a file name (the last path component), or nil when it is ignored.
    public static func classify(fileName: String) -> ContactFileKind? {
        guard !fileName.isEmpty, !fileName.hasPrefix("."), !fileName.hasSuffix("~"),
              let fileExtension = extensionOf(fileName)?.lowercased()
        else { return nil }
        switch fileExtension {
        case "vcf": return .vcard
        case "json": return .json
        default: return nil  // includes "tmp"
        }
    }

    /// The file name without its extension: the identifier of a contact without `UID`.
    public static func stem(of fileName: String) -> String {
        guard let dot = lastIndex(of: ".", in: fileName), dot != fileName.utf8.startIndex else { return fileName }
        return String(decoding: fileName.utf8[..<dot], as: UTF8.self)
    }

    /// The last component of a slash-separated path.
    public static func fileName(ofPath path: String) -> String {
        guard let slash = lastIndex(of: "/", in: path) else { return path }
        return String(decoding: path.utf8[path.utf8.index(after: slash)...], as: UTF8.self)
    }

    /// The last `separator` byte: a path's `/` and a name's `.` are bytes, not characters (a
    /// combining mark after one must not hide it), and searching bytes skips grapheme breaking.
    static func lastIndex(of separator: Unicode.Scalar, in text: String) -> String.Index? {
        text.utf8.lastIndex(of: UInt8(separator.value))
    }

    /// Parses a file's bytes according to its kind.
    public func parse(_ bytes: [UInt8], fileStem: String, options: ContactParsingOptions = .default) throws(ContactParseError) -> [Contact] {
        switch self {
        case .vcard: return try VCardParser.parse(bytes, fileStem: fileStem, options: options)
        case .json: return try JSONContactParser.parse(bytes, fileStem: fileStem)
        }
    }

    /// The same, from bytes the caller keeps (a read buffer reused from file to file).
    public func parse(contentsOf bytes: UnsafeBufferPointer<UInt8>, fileStem: String, options: ContactParsingOptions = .default) throws(ContactParseError) -> [Contact] {
        switch self {
        case .vcard: return try VCardParser.parse(contentsOf: bytes, fileStem: fileStem, options: options)
        case .json: return try JSONContactParser.parse(Array(bytes), fileStem: fileStem)
        }
    }

    /// Classifies, parses and maps failures to a `ContactFileProblem`: what the index stores per path.
    public static func contacts(inFileAt path: String, bytes: [UInt8], options: ContactParsingOptions = .default) -> Result<[Contact], ContactFileProblem> {
        bytes.withUnsafeBufferPointer { contacts(inFileAt: path, contentsOf: $0, options: options) }
    }

    /// The same, from bytes the caller keeps.
    public static func contacts(
        inFileAt path: String, contentsOf bytes: UnsafeBufferPointer<UInt8>, options: ContactParsingOptions = .default
    ) -> Result<[Contact], ContactFileProblem> {
        let fileName = fileName(ofPath: path)
        guard let kind = classify(fileName: fileName) else {
            return .failure(.notAContactFile(fileName: fileName))
        }
        return kind.contacts(inFileNamed: fileName, contentsOf: bytes, options: options)
    }

    /// The same for a file whose name is already known to be of this kind.
    public func contacts(
        inFileNamed fileName: String, contentsOf bytes: UnsafeBufferPointer<UInt8>, options: ContactParsingOptions = .default
    ) -> Result<[Contact], ContactFileProblem> {
        do {
            return .success(try parse(contentsOf: bytes, fileStem: Self.stem(of: fileName), options: options))
        } catch {
            return .failure(ContactFileProblem(error))
        }
    }

    private static func extensionOf(_ fileName: String) -> Substring? {
        guard let dot = lastIndex(of: ".", in: fileName), dot != fileName.utf8.startIndex else { return nil }
        let fileExtension = Substring(fileName.utf8[fileName.utf8.index(after: dot)...])
        return fileExtension.isEmpty ? nil : fileExtension
    }
}
