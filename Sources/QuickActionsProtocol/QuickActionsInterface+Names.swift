/// The method and error names of `io.qactd.QuickActions`, shared by the daemon and `qactl` so
/// both sides agree on the wire by construction. Field names of the messages follow the interface
/// description in `QuickActionsInterfaceDescription.swift`.
extension QuickActionsInterface {
    /// The interface's methods, by their names on the wire.
    public enum Method: String, CaseIterable, Sendable {
        case status = "Status", list = "List", resignActive = "ResignActive"
        case becomeActive = "BecomeActive", enterBackground = "EnterBackground"
        case trigger = "Trigger", connect = "Connect", complete = "Complete", watch = "Watch"
        case reload = "Reload", getContact = "GetContact"
        case pin = "Pin", unpin = "Unpin", pins = "Pins"
        case setItems = "SetItems", pushItem = "PushItem", removeItems = "RemoveItems"
        case reportItemUsed = "ReportItemUsed", items = "Items"

        /// The method's fully qualified name (`io.qactd.QuickActions.List`).
        public var qualifiedName: String { "\(QuickActionsInterface.name).\(rawValue)" }
    }

    /// Error names of the interface; the parameters of each are documented in the IDL.
    public enum ErrorName: String, CaseIterable, Sendable {
        case noSuchShortcut = "NoSuchShortcut", contactRemoved = "ContactRemoved"
        case contactNotFound = "ContactNotFound", appNotResponding = "AppNotResponding"
        case invalidConfiguration = "InvalidConfiguration"
        case appDisconnected = "AppDisconnected", appReplaced = "AppReplaced", noSuchAction = "NoSuchAction"
        case commandRefused = "CommandRefused"
        case noSuchPin = "NoSuchPin", pinDisabled = "PinDisabled", pinningUnavailable = "PinningUnavailable"
        case invalidItem = "InvalidItem", tooManyItems = "TooManyItems", noSuchItem = "NoSuchItem"

        /// The error's fully qualified name (`io.qactd.QuickActions.NoSuchShortcut`).
        public var qualifiedName: String { "\(QuickActionsInterface.name).\(rawValue)" }
    }
}
