import Contacts

/// The result of deriving the dynamic set from the favorites and the configuration.
public struct RecomputeOutcome: Hashable, Sendable {
    /// False when the derived set equals the current one: nothing was replaced
    /// and nothing needs persisting or announcing.
    public var changed: Bool
    /// The generation of the set after the recompute.
    public var generation: UInt64
    /// How many dynamic items the set holds.
    public var dynamicCount: Int
    /// Whether the state file holds this state. The pure core cannot know and says true;
    /// the daemon sets false when the write failed (disk full, read-only), so a generation
    /// that exists only in memory is never reported as saved.
    public var persisted: Bool

    /// An outcome with each field; `persisted` is true unless told.
    public init(changed: Bool, generation: UInt64, dynamicCount: Int, persisted: Bool = true) {
        self.changed = changed
        self.generation = generation
        self.dynamicCount = dynamicCount
        self.persisted = persisted
    }
}

/// The whole quick-action state the daemon holds, as a value: every event is a
/// mutating method, so tests drive it with no I/O and the daemon only persists
/// and announces what the methods report.
public struct QuickActionsState: Hashable, Sendable {
    /// The items of the static-items file, in its order.
    public private(set) var staticItems: [ShortcutItem]
    /// The favorites' items, as last derived.
    public private(set) var dynamicItems: [ShortcutItem]
    /// The app's own dynamic items (`SetItems`, `PushItem`, …), shown after the static items
    /// and before the favorites' items.
    public private(set) var appItems: AppItemList
    /// Bumped each time the dynamic set, or the app's own items, are replaced by different ones.
    public private(set) var generation: UInt64
    /// True from the app's first lifecycle message on; until then only static items show.
    public private(set) var launched: Bool
    /// The current app version; "" when unknown.
    public var appVersion: String
    /// The item triggered while no app was connected, waiting for the app to connect.
    public private(set) var pendingLaunchItem: ShortcutItem?
    /// Triggers per item, keyed by `ShortcutItem.usageKey`.
    public private(set) var usageCounts: [String: Int]
    /// When items were chosen (the daemon passes each trigger's time), which ranks the favorites.
    public private(set) var usageHistory: UsageHistory
    /// Bumped by every trigger given a time: what a listing's `usage` shows changed. Not part
    /// of the state's value.
    public var usageVersion: UInt64 { usageVersionBox.value }
    private var usageVersionBox = UsageVersion()
    /// The items pinned as launchers of their own; they outlive the dynamic set.
    public var pinBoard: PinBoard
    /// What the current dynamic set was last derived from, so deriving it again from the same
    /// favorites, app version and configuration is skipped: an unchanged `ResignActive`
    /// costs the same with ten favorites or ten thousand. Not part of the state's value.
    private var lastDerivation = DerivationMemo()

    /// A state with each field; the defaults are a daemon's first start.
    public init(
        staticItems: [ShortcutItem] = [], dynamicItems: [ShortcutItem] = [], generation: UInt64 = 0,
        launched: Bool = false, appVersion: String = "", pendingLaunchItem: ShortcutItem? = nil,
        usageCounts: [String: Int] = [:], usageHistory: UsageHistory = UsageHistory(), pinBoard: PinBoard = PinBoard(),
        appItems: AppItemList = AppItemList()
    ) {
        self.staticItems = staticItems
        self.dynamicItems = dynamicItems
        self.appItems = appItems
        self.generation = generation
        self.launched = launched
        self.appVersion = appVersion
        self.pendingLaunchItem = pendingLaunchItem
        self.usageCounts = usageCounts
        self.usageHistory = usageHistory
        self.pinBoard = pinBoard
    }

    /// Any lifecycle message (`BecomeActive`, `EnterBackground`, `Connect`, …) proves the app has run.
    public mutating func recordLifecycleMessage(appVersion: String?) {
        launched = true
        if let appVersion { self.appVersion = appVersion }
    }

    /// The Linux twin of `sceneWillResignActive(_:)`: the app has run, so derive
    /// the dynamic set from the favorites.
    /// `favoritesVersion` (the index's `favoritesVersion`), when given, lets an unchanged
    /// call skip reading the favorites at all.
    public mutating func resignActive(
        favorites: @autoclosure () -> [Contact], favoritesVersion: ContactIndex.FavoritesVersion? = nil, appVersion: String?,
        configuration: DynamicItemConfiguration
    ) -> RecomputeOutcome {
        recordLifecycleMessage(appVersion: appVersion)
        return recompute(favorites: favorites(), favoritesVersion: favoritesVersion, configuration: configuration)
    }

    /// Derives the dynamic set and replaces it, as a whole, only if it differs.
    /// Used directly by `Recompute=change`, which must not count as a launch.
    public mutating func recompute(
        favorites: @autoclosure () -> [Contact], favoritesVersion: ContactIndex.FavoritesVersion? = nil,
        configuration: DynamicItemConfiguration
    ) -> RecomputeOutcome {
        let source = favoritesVersion.map { DerivationMemo.Source(favorites: $0, appVersion: appVersion, configuration: configuration) }
        if let source, source == lastDerivation.source {
            return RecomputeOutcome(changed: false, generation: generation, dynamicCount: dynamicItems.count)
        }
        let derived = QuickActions.dynamicItems(
            for: configuration.chosen(from: favorites(), usage: usageHistory), appVersion: appVersion, configuration: configuration)
        let changed = derived != dynamicItems
        if changed {
            dynamicItems = derived
            generation &+= 1
        }
        lastDerivation.source = source
        return RecomputeOutcome(changed: changed, generation: generation, dynamicCount: dynamicItems.count)
    }

    /// Every dynamic item in the order shown: the app's own first, as the app ordered them, then
    /// the favorites' items. One order for every listing, trigger and launcher.
    public var shownDynamicItems: [ShortcutItem] {
        appItems.items.isEmpty ? dynamicItems : appItems.items + dynamicItems
    }

    /// The app's own items changed by `change` (`AppItemList.set`, `push`, `remove`): the app
    /// speaks, so it counts as launched, and a list that differs bumps the generation, as a
    /// new dynamic set does. A change that throws leaves the state as it was.
    public mutating func changeAppItems<Value>(
        _ change: (inout AppItemList) throws(AppItemError) -> Value
    ) throws(AppItemError) -> (result: Value, changed: Bool) {
        var list = appItems
        let result = try change(&list)
        recordLifecycleMessage(appVersion: nil)
        let changed = list != appItems
        if changed {
            appItems = list
            generation &+= 1
        }
        return (result, changed)
    }

    /// The app reports it did what one of its own items does (Android's `reportShortcutUsed`):
    /// counted as a trigger of the item is, with nothing delivered.
    public mutating func reportAppItemUsed(type: String, at time: Int64?) throws(AppItemError) {
        guard let item = appItems.item(ofType: type) else { throw .noSuchItem(type: type) }
        recordLifecycleMessage(appVersion: nil)
        usageCounts[item.usageKey, default: 0] += 1
        if let time {
            usageHistory.record(item.usageKey, at: time)
            usageVersionBox.value &+= 1
        }
    }

    /// Static items come from the plist; a reload swaps them without touching the
    /// dynamic set or its generation.
    public mutating func replaceStaticItems(_ items: [ShortcutItem]) {
        staticItems = items
    }

    /// `all == false` returns only the displayed items; `limit`, when given,
    /// overrides `displayLimit` for this listing only.
    /// The listing `List` and `Watch` answer with.
    public func currentListing(all: Bool, limit: Int? = nil, displayLimit: Int, usage: Bool = false) -> QuickActionsListing {
        QuickActionsListing(
            generation: generation, launched: launched, items: listing(all: all, limit: limit, displayLimit: displayLimit, usage: usage))
    }

    /// `usage`: each row with its item's usage (`ShortcutUsage`), as `List` and `Watch` show it.
    public func listing(all: Bool, limit: Int?, displayLimit: Int, usage: Bool = false) -> [ListedShortcut] {
        var composed = ShortcutListing.compose(
            staticItems: staticItems, dynamicItems: shownDynamicItems, launched: launched,
            displayLimit: limit ?? displayLimit)
        if !all { composed.removeAll { !$0.displayed } }
        if usage, !usageHistory.isEmpty {
            for index in composed.indices { composed[index].usage = usageHistory.usage(of: composed[index].item.usageKey) }
        }
        return composed
    }

    /// Resolves a trigger, counts it, and decides the delivery. With no app
    /// connected the item becomes the pending launch item, replacing an older
    /// one: only the latest choice of the user should open the app. An item whose type
    /// `runsCommand` (an `[Actions]` entry) is delivered by that command instead.
    /// `time`: when it was chosen (seconds since 1970), which ranks the favorites by use; nil
    /// counts it without a time, which ranks nothing.
    public mutating func trigger(
        _ target: TriggerTarget, displayLimit: Int, contactLookup: (String) -> Contact?, appConnected: Bool,
        runsCommand: (String) -> Bool = { _ in false }, at time: Int64? = nil
    ) -> Result<TriggerResolution, TriggerError> {
        let listed: ListedShortcut
        switch select(target, displayLimit: displayLimit) {
        case .success(let match): listed = match
        case .failure(let error): return .failure(error)
        }
        let item = listed.item
        var contact: Contact?
        var stale = false
        if listed.source == .dynamic {
            if let identifier = item.contactIdentifier {
                guard let found = contactLookup(identifier) else { return .failure(.contactRemoved(identifier)) }
                contact = found
            }
            stale = isStale(item)
        }
        return .success(deliver(item, contact: contact, stale: stale, appConnected: appConnected, runsCommand: runsCommand, at: time))
    }

    /// The item a trigger's target names, without side effects: what `trigger` resolves and
    /// what a person pins.
    public func select(_ target: TriggerTarget, displayLimit: Int) -> Result<ListedShortcut, TriggerError> {
        let composed = ShortcutListing.compose(
            staticItems: staticItems, dynamicItems: shownDynamicItems, launched: launched, displayLimit: displayLimit)
        switch target {
        case .position: return target.select(in: composed)
        case .type: return target.select(in: composed.filter { $0.source == .static || launched })
        }
    }

    /// A pinned item chosen: the item behind the pin as it is now (`resolvedPins`), counted and
    /// delivered as a trigger is. The caller has made sure the pin is enabled.
    public mutating func triggerPinned(
        _ item: ShortcutItem, contact: Contact?, appConnected: Bool, runsCommand: (String) -> Bool = { _ in false }, at time: Int64? = nil
    ) -> TriggerResolution {
        deliver(item, contact: contact, stale: false, appConnected: appConnected, runsCommand: runsCommand, at: time)
    }

    /// Counts a chosen item and decides its delivery.
    private mutating func deliver(
        _ item: ShortcutItem, contact: Contact?, stale: Bool, appConnected: Bool, runsCommand: (String) -> Bool, at time: Int64?
    ) -> TriggerResolution {
        let usageKey = item.usageKey
        usageCounts[usageKey, default: 0] += 1
        if let time {
            usageHistory.record(usageKey, at: time)
            usageVersionBox.value &+= 1
            // The order by use may have changed: the next derivation must not be skipped.
            if item.contactIdentifier != nil { lastDerivation.source = nil }
        }
        let delivery: TriggerDelivery
        if runsCommand(item.type) {
            // A command does the work: the app is neither told nor started.
            delivery = .command
        } else if appConnected {
            delivery = .running
        } else {
            pendingLaunchItem = item
            delivery = .launch
        }
        return TriggerResolution(item: item, contact: contact, stale: stale, delivery: delivery)
    }

    /// What each pin's item is now, by pin identifier (the board's `itemsResolved` event): a
    /// static item by its type among the static items; a favorite's by its contact, which need
    /// no longer be a favorite (a pin outlives the displayed set), made as a favorite's item is
    /// (a rename gives a new title). A pin whose item is gone is missing.
    public func resolvedPins(
        contactLookup: (String) -> Contact?, configuration: DynamicItemConfiguration
    ) -> [String: (item: ShortcutItem, contact: Contact?)] {
        var resolved: [String: (item: ShortcutItem, contact: Contact?)] = [:]
        for pin in pinBoard.pins {
            if let identifier = pin.item.contactIdentifier {
                guard let contact = contactLookup(identifier) else { continue }
                let made = dynamicItem(for: contact, appVersion: appVersion, configuration: configuration)
                // The pin keeps the type it was made with, should FavoriteType change since.
                resolved[pin.identifier] = (
                    ShortcutItem(type: pin.item.type, title: made.title, subtitle: made.subtitle, icon: made.icon, userInfo: made.userInfo),
                    contact)
            } else if let item = staticItems.first(where: { $0.type == pin.item.type }) ?? appItems.item(ofType: pin.item.type) {
                resolved[pin.identifier] = (item, nil)
            }
        }
        return resolved
    }

    /// An item made for another app version than the current one: the app was updated
    /// and has not recomputed its dynamic items yet. With the current version unknown
    /// there is nothing to compare against.
    public func isStale(_ item: ShortcutItem) -> Bool {
        guard let madeFor = item.userInfo[DynamicItemUserInfoKey.appVersion], !appVersion.isEmpty else { return false }
        return madeFor != .string(appVersion)
    }

    /// Hands the pending launch item to the app that just connected, exactly once.
    public mutating func takePendingLaunchItem() -> ShortcutItem? {
        defer { pendingLaunchItem = nil }
        return pendingLaunchItem
    }

    /// Puts back an item taken for an app that was gone before it could be handed
    /// over, unless a newer trigger has chosen another item since.
    public mutating func restorePendingLaunchItem(_ item: ShortcutItem) {
        if pendingLaunchItem == nil { pendingLaunchItem = item }
    }
}

/// Counts the triggers given a time. Equal for every value, so two states with the same
/// history compare equal however often each was listed.
private struct UsageVersion: Hashable, Sendable {
    var value: UInt64 = 0

    static func == (lhs: UsageVersion, rhs: UsageVersion) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

/// What the dynamic set was derived from. Equal for every value, so two states with the
/// same items compare equal however they came about.
private struct DerivationMemo: Hashable, Sendable {
    struct Source: Hashable, Sendable {
        var favorites: ContactIndex.FavoritesVersion
        var appVersion: String
        var configuration: DynamicItemConfiguration
    }

    var source: Source?

    static func == (lhs: DerivationMemo, rhs: DerivationMemo) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

/// What the state file holds, so that a restart serves the set the app last saw. Static items
/// are absent on purpose:
/// they come from the plist, so editing it takes effect without a stale copy.
public struct PersistedState: Codable, Hashable, Sendable {
    /// The `formatVersion` this version writes.
    public static let currentFormatVersion = 1

    /// The format of the file, so a later version can read an older one.
    public var formatVersion: Int
    /// The set's generation.
    public var generation: UInt64
    /// Whether the app has sent its first lifecycle message.
    public var launched: Bool
    /// The app version the dynamic items were made for.
    public var appVersion: String
    /// The favorites' items.
    public var dynamicItems: [ShortcutItem]
    /// The item waiting for the app to connect, if any.
    public var pendingLaunchItem: ShortcutItem?
    /// Triggers per item, keyed by `ShortcutItem.usageKey`.
    public var usageCounts: [String: Int]
    /// Each item's recent trigger times (`UsageHistory.times`). Absent in files written before
    /// favorites were ranked by use, and when nothing was triggered since: none.
    public var usageTimes: [String: [Int64]]
    /// Absent in files written before pinning existed: no pins.
    public var pins: [PinnedItem]
    /// The app's own items. Absent in files written before apps set their own, and while the
    /// app has none: none.
    public var appItems: [ShortcutItem]

    /// The persisted part of `state`, in the current format.
    public init(_ state: QuickActionsState) {
        formatVersion = Self.currentFormatVersion
        generation = state.generation
        launched = state.launched
        appVersion = state.appVersion
        dynamicItems = state.dynamicItems
        pendingLaunchItem = state.pendingLaunchItem
        usageCounts = state.usageCounts
        usageTimes = state.usageHistory.times
        pins = state.pinBoard.pins
        appItems = state.appItems.items
    }

    private enum CodingKeys: String, CodingKey {
        case formatVersion, generation, launched, appVersion, dynamicItems, pendingLaunchItem, usageCounts, usageTimes, pins, appItems
    }

    /// Refuses other format versions so a newer daemon's file is moved aside, not misread.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        formatVersion = try container.decode(Int.self, forKey: .formatVersion)
        guard formatVersion == Self.currentFormatVersion else {
            throw DecodingError.dataCorruptedError(
                forKey: .formatVersion, in: container,
                debugDescription: "Unsupported state format version \(formatVersion); expected \(Self.currentFormatVersion).")
        }
        generation = try container.decode(UInt64.self, forKey: .generation)
        launched = try container.decode(Bool.self, forKey: .launched)
        appVersion = try container.decode(String.self, forKey: .appVersion)
        dynamicItems = try container.decode([ShortcutItem].self, forKey: .dynamicItems)
        pendingLaunchItem = try container.decodeIfPresent(ShortcutItem.self, forKey: .pendingLaunchItem)
        usageCounts = try container.decodeIfPresent([String: Int].self, forKey: .usageCounts) ?? [:]
        usageTimes = try container.decodeIfPresent([String: [Int64]].self, forKey: .usageTimes) ?? [:]
        pins = try container.decodeIfPresent([PinnedItem].self, forKey: .pins) ?? []
        appItems = try container.decodeIfPresent([ShortcutItem].self, forKey: .appItems) ?? []
    }

    /// No `pins` key without pins, nor `appItems` without them, so such a file is what it was
    /// before either existed.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encode(generation, forKey: .generation)
        try container.encode(launched, forKey: .launched)
        try container.encode(appVersion, forKey: .appVersion)
        try container.encode(dynamicItems, forKey: .dynamicItems)
        try container.encodeIfPresent(pendingLaunchItem, forKey: .pendingLaunchItem)
        try container.encode(usageCounts, forKey: .usageCounts)
        if !usageTimes.isEmpty { try container.encode(usageTimes, forKey: .usageTimes) }
        if !pins.isEmpty { try container.encode(pins, forKey: .pins) }
        if !appItems.isEmpty { try container.encode(appItems, forKey: .appItems) }
    }
}

extension QuickActionsState {
    /// Restores the state saved in `persisted`, with static items from the plist.
    public init(restoring persisted: PersistedState, staticItems: [ShortcutItem]) {
        self.init(
            staticItems: staticItems, dynamicItems: persisted.dynamicItems, generation: persisted.generation,
            launched: persisted.launched, appVersion: persisted.appVersion,
            pendingLaunchItem: persisted.pendingLaunchItem, usageCounts: persisted.usageCounts,
            usageHistory: UsageHistory(times: persisted.usageTimes), pinBoard: PinBoard(pins: persisted.pins),
            appItems: AppItemList(persisted.appItems))
    }
}
