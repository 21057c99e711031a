public struct ReloadReply: Codable, Sendable, Equatable {
    public var staticItems: Int
    public var configFile: String?
    public init(staticItems: Int, configFile: String?) {
        self.staticItems = staticItems
        self.configFile = configFile
    }
}
