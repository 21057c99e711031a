import Glibc
import QuickActions
import SystemCalls

/// The image files an app's items name as icons, looked at when the items arrive, so an item a
/// launcher cannot draw is refused with the field that names it rather than kept: the file must
/// be a regular file qactd can read (the app's instance runs in qactd's sandbox, with a private
/// `/tmp`: an app keeps its icons in its own data or cache folder), at most
/// `AppItemRules.maxImageBytes`, and a PNG, JPEG or SVG image.
enum AppItemImages {
    /// Checks every file icon of `items`; `field(index)` names item `index` as the call does.
    static func check(_ items: [ShortcutItem], field: (Int) -> String) throws(AppItemError) {
        for (index, item) in items.enumerated() {
            // A path that is no absolute path is the pure rules' to name.
            guard case .templateFile(let path) = item.icon, path.hasPrefix("/"), path.utf8.count <= AppItemRules.maxPathBytes else { continue }
            let name = "\(field(index)).icon.name"
            // A FIFO or a device must not hang the event loop: opened without blocking, and
            // read only once `fstat` says it is a regular file.
            let descriptor = retryingOnInterrupt { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
            guard descriptor >= 0 else {
                throw .invalid(field: name, reason: "names a file qactd cannot read (\(errnoText(errno))); keep icons in the app's own data or cache folder")
            }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
                throw .invalid(field: name, reason: "names something that is not a regular file")
            }
            var head = [UInt8](repeating: 0, count: 512)
            let count = head.withUnsafeMutableBytes { raw in retryingOnInterrupt { read(descriptor, raw.baseAddress, raw.count) } }
            if let problem = AppItemRules.imageProblem(size: Int(status.st_size), head: Array(head.prefix(max(count, 0))), field: name) {
                throw problem
            }
        }
    }
}
