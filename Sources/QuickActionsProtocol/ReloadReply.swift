/// The reply of `Reload`.
public struct ReloadReply: Codable, Sendable, Equatable {
    /// How many static items the reloaded file holds.
    public var staticItems: Int
    /// The configuration file read; nil when none was found (the defaults apply).
    public var configFile: String?
    /// A reply with each field.
    public init(staticItems: Int, configFile: String?) {
        self.staticItems = staticItems
        self.configFile = configFile
    }
}
