import Glibc
import QuickActionsClient

// An editor publishes its three recent files as quick actions and opens the one picked on its
// icon, whether it was running or was started for it. Arguments: the desktop-file ID, the files.
let arguments = CommandLine.arguments.dropFirst()
let app = try await QuickActionsApp(desktopFileID: arguments.first ?? "org.example.Editor")
let recent = arguments.count > 1 ? Array(arguments.dropFirst()) : ["/tmp/notes.txt", "/tmp/todo.txt", "/tmp/ideas.txt"]
try await app.setItems(recent.enumerated().map { index, path in
    ShortcutItem(
        type: "recent-\(index)", title: "Open \(path.split(separator: "/").last ?? "")", subtitle: path,
        icon: .themed("document-open-recent"), userInfo: ["path": .string(path)])
})
say("published \(recent.count) items")
for try await pick in try await app.pickedItems() {
    if case .string(let path)? = pick.item.userInfo["path"] { say("opening \(path)\(pick.atLaunch ? " (at launch)" : "")") }
    try await pick.complete()
}

/// A line on standard output at once, for whoever reads it through a pipe.
func say(_ line: String) {
    var text = line + "\n"
    _ = text.withUTF8 { write(1, $0.baseAddress, $0.count) }
}
