import Contacts
import Glibc
import Logging
import QuickActions
import SystemCalls

/// A favorite whose launcher icon is its face: who, and where its card, which may hold a photo,
/// is (nil for a contact with no vCard, such as a JSON contact, which gets its monogram).
struct FaceRequest: Hashable, Sendable {
    var identifier: String
    var name: String
    var card: FaceCardSource?
}

/// Where a face's card is read from, off the core's actor, only when the face is made.
enum FaceCardSource: Hashable, Sendable {
    /// A vCard file of the contacts folder.
    case file(String)
    /// The row `uid` of an Evolution address book: in `local`, the book's `contacts.db` in the
    /// data home, or, for a book EDS keeps a copy of for an online account, in `cache` (its
    /// `cache.db` in the cache home). EDS's
    /// local books keep a photo as a `file:` URI into the book's `photos` folder; the others
    /// inline.
    case evolutionRow(uid: String, local: String, cache: String)
}

/// A favorite's face as the launchers get it: the file a desktop entry or pinned launcher names,
/// and the image the live quicklist sends (the same PNG or SVG document, or the monogram's when
/// the face is larger than `QuicklistMenu.maxIconDataBytes`).
struct FaceFile: Equatable, Sendable {
    var path: String
    var quicklistImage: [UInt8]
}

/// The favorites' faces as files in a folder of qactd's own, `$XDG_DATA_HOME/qactd/faces/APP`
/// (APP the desktop-file ID of `DesktopFile=`, so the daemons of several apps keep theirs apart),
/// each named by what it is made from: a photo's round PNG picture (`FacePicture`) by the photo,
/// a monogram's SVG document by its content (`ContactFace.fileName`). A launcher is handed a path, and a face
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
    /// The face last made for each contact and what it was made from: an export whose favorites'
    /// cards (and photo files) are as they were reads no photo again, since every export (each
    /// change of the set) runs beside the state write of the same change.
    private var made: [String: MadeFace] = [:]

    private struct MadeFace {
        var request: FaceRequest
        var card: FileVersion?
        /// The photo's own file, for a card whose `PHOTO` is a `file:` URI.
        var photoFile: (path: String, version: FileVersion?)?
        var face: FaceFile
    }

    init(dataHome: String) {
        faces = dataHome + "/qactd/faces"
    }

    /// The face of each request, by contact identifier, for the app `appDesktopFileID`; a face
    /// that cannot be written is left out (the launchers show the configured icon).
    mutating func sync(_ requests: [FaceRequest], appDesktopFileID: String?, logger: Logger) -> [String: FaceFile] {
        let wanted = appDesktopFileID.map { faces + "/" + $0 }
        if let folder, folder != wanted { removeFaces(in: folder, except: [], logger: logger) }
        folder = wanted
        guard let folder = wanted else { return [:] }
        var files: [String: FaceFile] = [:]
        if !requests.isEmpty {
            do throws(SystemCallError) {
                try makeDirectories(folder, mode: 0o700)
            } catch {
                logger.warning("Cannot make the faces folder '\(folder)': \(error.description)", metadata: ["QACTD_PATH": "\(folder)"])
                return [:]
            }
        }
        for request in requests {
            // Only a card that is a file of its own has a version; an Evolution row is read again
            // for each export (its book's database changes with any contact of the book).
            let card = if case .file(let path)? = request.card { FileVersion(path: path) } else { FileVersion?.none }
            if card != nil, let last = made[request.identifier], last.request == request, last.card == card,
               last.photoFile.map({ FileVersion(path: $0.path) == $0.version }) ?? true,
               last.face.path.hasPrefix(folder + "/"), (try? FileIO.fileExists(last.face.path)) == true {
                files[request.identifier] = last.face
                continue
            }
            made[request.identifier] = nil
            let photo = self.photo(of: request)
            // A photo's picture is named by the photo (and the picture's size, which a new way of
            // drawing it changes), so one drawn before, by this daemon or before it restarted, is
            // read back instead of decoded and drawn again: a start with faces made decodes nothing.
            let pictureName = photo.bytes.map { "face-" + StableHash.hex($0) + "-\(FacePicture.side).png" }
            let drawn = pictureName.flatMap { try? FileIO.readFileIfPresent(folder + "/" + $0, atMost: QuicklistMenu.maxIconDataBytes) }
            // A file there that is not such a picture within the bound (not one qactd wrote) is
            // drawn again and replaced; its header is read without a decoder.
            let readBack = if let drawn, drawn.count <= QuicklistMenu.maxIconDataBytes,
                                              case .success(let picture) = FaceImage.inspect(drawn), picture.kind == .png,
                                              picture.width == FacePicture.side, picture.height == FacePicture.side { drawn } else { [UInt8]?.none }
            let (document, imageProblem) = if let readBack {
                (document: (bytes: readBack, fileExtension: "png"), problem: FaceImage.Problem?.none)
            } else {
                Self.document(photo: photo.bytes, name: request.name, identifier: request.identifier)
            }
            let problem = photo.problem ?? imageProblem.map(\.description)
            if let problem, logged[request.identifier] != problem {
                logger.warning("The photo of contact '\(request.identifier)' is not used, its monogram is shown: \(problem).",
                               metadata: ["QACTD_CONTACT_ID": .string(request.identifier)])
            }
            logged[request.identifier] = problem
            let fileName = if let pictureName, document.fileExtension == "png" { pictureName } else {
                ContactFace.fileName(of: document.bytes, fileExtension: document.fileExtension)
            }
            let path = folder + "/" + fileName
            do throws(AtomicReplaceError) {
                // A monogram's name is its content, so one there is the same; a picture drawn now
                // replaces whatever its name held.
                if readBack == nil, document.fileExtension == "png" || (try? FileIO.fileExists(path)) != true {
                    try FileIO.replaceAtomically(path, with: document.bytes, mode: 0o644)
                }
                let quicklistImage = document.bytes.count <= QuicklistMenu.maxIconDataBytes
                    ? document.bytes : ContactFace.monogramSVG(name: request.name, identifier: request.identifier)
                let file = FaceFile(path: path, quicklistImage: quicklistImage)
                files[request.identifier] = file
                made[request.identifier] = MadeFace(
                    request: request, card: card, photoFile: photo.file.map { ($0, FileVersion(path: $0)) }, face: file)
            } catch {
                logger.warning("Cannot write the face of contact '\(request.identifier)': \(error.description)", metadata: ["QACTD_PATH": "\(path)"])
            }
        }
        removeFaces(in: folder, except: Set(files.values.map(\.path)), logger: logger)
        made = made.filter { files[$0.key] != nil }
        return files
    }

    /// The face's document: the photo's round PNG picture (`FacePicture`), else the monogram's
    /// SVG, with why the photo was not used.
    static func document(
        photo: [UInt8]?, name: String, identifier: String
    ) -> (document: (bytes: [UInt8], fileExtension: String), problem: FaceImage.Problem?) {
        let (face, problem) = ContactFace.make(photo: photo, name: name, identifier: identifier)
        switch face {
        case .monogram(let initials, let colour):
            return ((ContactFace.svg(initials: initials, colour: colour), "svg"), problem)
        case .photo(let image):
            do throws(FaceImage.Problem) {
                return ((try FacePicture.png(of: image), "png"), nil)
            } catch {
                return ((ContactFace.monogramSVG(name: name, identifier: identifier), "svg"), error)
            }
        }
    }

    /// The photo's bytes as the card has them (read whole from a `file:` URI, named in `file`),
    /// or why there are none.
    private func photo(of request: FaceRequest) -> (bytes: [UInt8]?, problem: String?, file: String?) {
        // A card is read again only for a face; a card the index would skip as too large is too.
        let limit = 2 * ContactPhoto.maxBytes
        let card: [UInt8]
        let stem: String
        do {
            switch request.card {
            case nil:
                return (nil, nil, nil)
            case .file(let path)?:
                guard path.hasPrefix("/"), ContactFileKind.classify(fileName: ContactFileKind.fileName(ofPath: path)) == .vcard,
                      let bytes = try FileIO.readFileIfPresent(path, atMost: limit)
                else { return (nil, nil, nil) }
                (card, stem) = (bytes, ContactFileKind.stem(of: ContactFileKind.fileName(ofPath: path)))
            case .evolutionRow(let uid, let local, let cache)?:
                guard let bytes = try Self.evolutionCard(uid: uid, local: local, cache: cache, atMost: limit) else { return (nil, nil, nil) }
                // A row's card without `UID` is its row's uid's, as the book's reader names it.
                (card, stem) = (bytes, uid)
            }
            guard card.count <= limit else { return (nil, nil, nil) }
            switch try VCardParser.photo(in: card, identifier: request.identifier, fileStem: stem) {
            case nil: return (nil, nil, nil)
            case .failure(let problem)?: return (nil, problem.description, nil)
            case .success(.inline(let bytes, _))?: return (bytes, nil, nil)
            case .success(.file(let path))?:
                guard let bytes = try FileIO.readFileIfPresent(path, atMost: ContactPhoto.maxBytes) else {
                    return (nil, "its file '\(path)' does not exist", path)
                }
                guard bytes.count <= ContactPhoto.maxBytes else { return (nil, ContactPhotoProblem.tooLarge(bytes: bytes.count).description, path) }
                return (bytes, nil, path)
            }
        } catch {
            return (nil, "\(error)", nil)
        }
    }

    /// An Evolution row's card: from the local book's database, else from the cached copy of
    /// an online account's book. A book EDS holds locked is waited for briefly: the face is
    /// made again at the next export.
    private static func evolutionCard(uid: String, local: String, cache: String, atMost limit: Int) throws(EvolutionBookFault) -> [UInt8]? {
        do {
            return try EvolutionBookReader.card(database: local, uid: uid, atMost: limit, busyTimeoutMilliseconds: 200)
        } catch .noDatabase {
            return try EvolutionBookReader.card(database: cache, schema: .cache, uid: uid, atMost: limit, busyTimeoutMilliseconds: 200)
        }
    }

    /// Every face file of `folder` that is not `kept` goes.
    private func removeFaces(in folder: String, except kept: Set<String>, logger: Logger) {
        guard let listed = try? directoryEntryNames(folder) else { return }
        let names = listed.filter { $0.hasPrefix("face-") && ($0.hasSuffix(".svg") || $0.hasSuffix(".png")) }
        for name in names where !kept.contains(folder + "/" + name) {
            if unlink(folder + "/" + name) != 0, errno != ENOENT {
                logger.warning("Could not remove the face '\(folder)/\(name)': \(errnoText(errno))", metadata: ["QACTD_PATH": "\(folder)/\(name)"])
            }
        }
    }
}

/// What `stat` says of a file that changes when it is rewritten (in place or replaced): a face
/// made from a card, or a photo file, of the same version is the same face.
private struct FileVersion: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    /// The last change of the content and of the inode, in nanoseconds.
    var modified: Int64
    var changed: Int64

    /// nil when the file cannot be looked at (then it is read again each time, and says why).
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        (device, inode, size) = (UInt64(info.st_dev), UInt64(info.st_ino), Int64(info.st_size))
        let nanoseconds = { (time: timespec) in Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec) }
        (modified, changed) = (nanoseconds(info.st_mtim), nanoseconds(info.st_ctim))
    }
}
