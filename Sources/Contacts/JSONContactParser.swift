#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The sample app's own format, one contact per `.json` file:
/// `{"identifier": "...", "name": "...", "email": "...", "favorite": true}`.
/// Every key is optional; the identifier and name fall back like a vCard's do.
public enum JSONContactParser {
    struct ContactDocument: Decodable {
        var identifier: String?
        var name: String?
        var email: String?
        var favorite: Bool?
    }

    /// The one contact of a JSON file's bytes; `fileStem` (the name without its extension) stands in for a
    /// missing identifier. Throws `ContactParseError` for binary data, invalid JSON or a key of the wrong type.
    public static func parse(_ bytes: [UInt8], fileStem: String) throws(ContactParseError) -> [Contact] {
        let body = TextDecoding.withoutByteOrderMark(bytes)
        if let nulOffset = body.firstIndex(of: 0) {
            throw .binaryData(byteOffset: nulOffset)
        }
        let document: ContactDocument
        do {
            document = try JSONDecoder().decode(ContactDocument.self, from: Data(body))
        } catch let error as DecodingError {
            throw describe(error)
        } catch {
            throw .invalidJSON(detail: "\(error)")
        }
        let email = document.email.map(trimmed).flatMap(nonEmpty)
        let name = document.name.map(collapsedWhitespace).flatMap(nonEmpty) ?? email ?? fileStem
        return [
            Contact(
                identifier: document.identifier.map(trimmed).flatMap(nonEmpty) ?? fileStem,
                name: name,
                email: email,
                emails: email.map { [$0] } ?? [],
                favorite: document.favorite ?? false
            )
        ]
    }

    private static func describe(_ error: DecodingError) -> ContactParseError {
        switch error {
        case .typeMismatch(let type, let context):
            guard let key = context.codingPath.last?.stringValue else { return .jsonNotAnObject }
            return .jsonWrongType(key: key, expected: type == Bool.self ? "a boolean (true or false)" : "a string")
        case .dataCorrupted(let context):
            let detail = context.underlyingError.map { "\($0)" } ?? context.debugDescription
            return .invalidJSON(detail: detail.hasSuffix(".") ? detail : detail + ".")
        case .valueNotFound(_, let context), .keyNotFound(_, let context):
            return .invalidJSON(detail: context.debugDescription)
        @unknown default:
            return .invalidJSON(detail: "\(error)")
        }
    }
}
