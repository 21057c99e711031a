import QuickActions

/// One row of the live quicklist: what the dock shows, and the item a click triggers.
struct QuicklistEntry: Sendable, Hashable {
    var label: String
    /// A freedesktop icon name, or nil for none.
    var iconName: String?
    var type: String
    var contactIdentifier: String?
    /// The favorite's face (a photo's PNG picture, a monogram's SVG document), sent as the item's image instead of
    /// `iconName`; nil for every other item.
    var iconData: [UInt8]? = nil

    /// By type and contact, as `Trigger` names an item: a click on a row shown before a change
    /// still triggers that item (or fails cleanly when it is gone), never a neighbour.
    var target: TriggerTarget { .type(type, contactIdentifier: contactIdentifier) }
}

/// What the quicklist serves and announces: the app (`application://<desktop-file ID>`) and the
/// displayed dynamic items, in the order `List` shows them.
struct QuicklistContent: Sendable, Equatable {
    var applicationURI: String
    var entries: [QuicklistEntry]

    /// The same content with each favorite whose face is in `faces` (by contact identifier)
    /// showing it.
    func showing(faces: [String: [UInt8]]) -> QuicklistContent {
        var content = self
        for index in content.entries.indices {
            content.entries[index].iconData = content.entries[index].contactIdentifier.flatMap { faces[$0] }
        }
        return content
    }
}

/// The `com.canonical.dbusmenu` tree of the quicklist: the root (id 0) and one level of items
/// under it. An item keeps its id across changes (new items get new ids, not an old one's),
/// and `revision` goes up with every change.
struct QuicklistMenu {
    static let rootID: Int32 = 0
    /// The most bytes of a face sent as an item's `icon-data`: a dock reads every item's image
    /// each time it reads the menu, so a larger face is sent as the contact's monogram instead
    /// (a photo's picture, a small PNG, is far below it).
    static let maxIconDataBytes = 256 * 1024

    /// What a replacement changed, as clients are told: other items or another order is a new
    /// layout (`LayoutUpdated`); the same items with a new title or icon are new properties
    /// (`ItemsPropertiesUpdated`, with the properties an item no longer has).
    enum Change: Equatable {
        case layout
        case properties(updated: [Int32], removed: [Int32: [String]])
    }

    private(set) var revision: UInt32 = 0
    private(set) var items: [(id: Int32, entry: QuicklistEntry)] = []
    private var assignedIDs: [TriggerTarget: Int32] = [:]
    private var lastID: Int32 = 0

    /// Replaces the items; nil (and the same revision) when nothing changed.
    mutating func replace(with entries: [QuicklistEntry]) -> Change? {
        guard entries != items.map(\.entry) else { return nil }
        let before = items
        let keysBefore = Dictionary(uniqueKeysWithValues: before.map { ($0.id, propertyKeys(of: $0.id)) })
        var ids: [TriggerTarget: Int32] = [:]
        items = entries.map { entry in
            let id = assignedIDs[entry.target] ?? nextID()
            ids[entry.target] = id
            return (id, entry)
        }
        assignedIDs = ids
        revision &+= 1
        guard items.map(\.id) == before.map(\.id) else { return .layout }
        var updated: [Int32] = []
        var removed: [Int32: [String]] = [:]
        for (old, new) in zip(before, items) where old.entry != new.entry {
            updated.append(new.id)
            let gone = (keysBefore[new.id] ?? []).filter { !propertyKeys(of: new.id).contains($0) }
            if !gone.isEmpty { removed[new.id] = gone }
        }
        return .properties(updated: updated, removed: removed)
    }

    private func propertyKeys(of id: Int32) -> [String] {
        properties(of: id)?.map(\.key) ?? []
    }

    func entry(id: Int32) -> QuicklistEntry? {
        items.first { $0.id == id }?.entry
    }

    func contains(id: Int32) -> Bool {
        id == Self.rootID || entry(id: id) != nil
    }

    /// The properties of item `id` limited to `names` (all when empty), nil for an unknown id.
    /// An item's type goes although "standard" is dbusmenu's default: Dash to Dock draws an
    /// item's icon only when the item says it is "standard" (libdbusmenu answers nothing for a
    /// type left out).
    func properties(of id: Int32, only names: [String] = []) -> [(key: String, value: DBusVariantValue)]? {
        let all: [(key: String, value: DBusVariantValue)]
        if id == Self.rootID {
            all = [("children-display", .string("submenu"))]
        } else if let entry = entry(id: id) {
            var properties: [(key: String, value: DBusVariantValue)] = [
                ("type", .string("standard")),
                // dbusmenu reads "_" as a mnemonic mark; "__" shows one underscore.
                ("label", .string(entry.label.replacing("_", with: "__"))),
                ("enabled", .boolean(true)),
                ("visible", .boolean(true)),
            ]
            // The image goes alone: Dash to Dock shows a name that is set rather than the image.
            // dbusmenu says PNG, which a photo's face is; Dash to Dock and libdbusmenu-gtk (Plank)
            // hand the bytes to GdkPixbuf's loader, which reads the format from them and draws a
            // monogram's SVG through librsvg.
            if let image = entry.iconData {
                properties.append(("icon-data", .bytes(image)))
            } else if let icon = entry.iconName {
                properties.append(("icon-name", .string(icon)))
            }
            all = properties
        } else {
            return nil
        }
        return names.isEmpty ? all : all.filter { names.contains($0.key) }
    }

    /// The ids under `parent` (only the root has children).
    func children(of parent: Int32) -> [Int32] {
        parent == Self.rootID ? items.map(\.id) : []
    }

    private mutating func nextID() -> Int32 {
        lastID = lastID == Int32.max ? 1 : lastID + 1
        return lastID
    }
}
