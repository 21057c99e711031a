import Contacts
import Glibc
import Logging
import QuickActions
import SystemCalls

/// A favorite whose launcher icon is its face: who, and the vCard file that may hold a photo
/// (nil for a contact of another kind, such as an Evolution address book's, which gets its
/// monogram).
struct FaceRequest: Hashable, Sendable {
    var identifier: String
    var name: String
    var cardPath: String?
}

/// The favorites' faces as SVG files in a folder of qactd's own, `$XDG_DATA_HOME/qactd/faces/APP`
/// (APP the desktop-file ID of `DesktopFile=`, so the daemons of several apps keep theirs apart),
/// each named by its content (`ContactFace.fileName`): a launcher is handed a path, and a face
/// that changes gets a new one. Only the faces of what is shown are made, so a photo costs
/// nothing while contacts are indexed, and a face no longer shown (its contact removed, no
/// longer a favorite, ranked out) is removed. A photo that cannot be used gives the monogram
/// and is logged once per contact.
struct FaceFiles: Sendable {
    let faces: String
    /// The folder the faces were last made in, emptied when the app changes.
    private var folder: String?
    /// The contacts whose photo problem was logged, with the problem, so each is said once.
    private var logged: [String: String] = [:]

    init(dataHome: String) {
        faces = dataHome + "/qactd/faces"
    }

    /// The face file of each request, by contact identifier, for the app `appDesktopFileID`;
    /// a face that cannot be written is left out (the launcher shows the configured icon).
    mutating func sync(_ requests: [FaceRequest], appDesktopFileID: String?, logger: Logger) -> [String: String] {
        let wanted = appDesktopFileID.map { faces + "/" + $0 }
        if let folder, folder != wanted { removeFaces(in: folder, except: [], logger: logger) }
        folder = wanted
        guard let folder = wanted else { return [:] }
        var paths: [String: String] = [:]
        if !requests.isEmpty {
            do throws(SystemCallError) {
                try makeDirectories(folder, mode: 0o700)
            } catch {
                logger.warning("Cannot make the faces folder '\(folder)': \(error.description)", metadata: ["QACTD_PATH": "\(folder)"])
                return [:]
            }
        }
        for request in requests {
            let photo = self.photo(of: request)
            let (face, imageProblem) = ContactFace.make(photo: photo.bytes, name: request.name, identifier: request.identifier)
            let problem = photo.problem ?? imageProblem.map(\.description)
            if let problem, logged[request.identifier] != problem {
                logger.warning("The photo of contact '\(request.identifier)' is not used, its monogram is shown: \(problem).",
                               metadata: ["QACTD_CONTACT_ID": .string(request.identifier)])
            }
            logged[request.identifier] = problem
            let path = folder + "/" + face.fileName
            do throws(AtomicReplaceError) {
                if (try? FileIO.fileExists(path)) != true { try FileIO.replaceAtomically(path, with: face.svg, mode: 0o644) }
                paths[request.identifier] = path
            } catch {
                logger.warning("Cannot write the face of contact '\(request.identifier)': \(error.description)", metadata: ["QACTD_PATH": "\(path)"])
            }
        }
        removeFaces(in: folder, except: Set(paths.values), logger: logger)
        return paths
    }

    /// The photo's bytes as the card has them (read whole from a `file:` URI), or why there are none.
    private func photo(of request: FaceRequest) -> (bytes: [UInt8]?, problem: String?) {
        guard let cardPath = request.cardPath, cardPath.hasPrefix("/") else { return (nil, nil) }
        let stem = ContactFileKind.stem(of: ContactFileKind.fileName(ofPath: cardPath))
        do {
            // A card is read again only for a face; a card the index would skip as too large is too.
            guard let card = try FileIO.readFileIfPresent(cardPath, atMost: 2 * ContactPhoto.maxBytes), card.count <= 2 * ContactPhoto.maxBytes,
                  ContactFileKind.classify(fileName: ContactFileKind.fileName(ofPath: cardPath)) == .vcard
            else { return (nil, nil) }
            switch try VCardParser.photo(in: card, identifier: request.identifier, fileStem: stem) {
            case nil: return (nil, nil)
            case .failure(let problem)?: return (nil, problem.description)
            case .success(.inline(let bytes, _))?: return (bytes, nil)
            case .success(.file(let path))?:
                guard let bytes = try FileIO.readFileIfPresent(path, atMost: ContactPhoto.maxBytes) else {
                    return (nil, "its file '\(path)' does not exist")
                }
                guard bytes.count <= ContactPhoto.maxBytes else { return (nil, ContactPhotoProblem.tooLarge(bytes: bytes.count).description) }
                return (bytes, nil)
            }
        } catch {
            return (nil, "\(error)")
        }
    }

    /// Every face file of `folder` that is not `kept` goes.
    private func removeFaces(in folder: String, except kept: Set<String>, logger: Logger) {
        guard let directory = opendir(folder) else { return }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("face-"), name.hasSuffix(".svg") { names.append(name) }
        }
        for name in names where !kept.contains(folder + "/" + name) {
            if unlink(folder + "/" + name) != 0, errno != ENOENT {
                logger.warning("Could not remove the face '\(folder)/\(name)': \(errnoText(errno))", metadata: ["QACTD_PATH": "\(folder)/\(name)"])
            }
        }
    }
}
