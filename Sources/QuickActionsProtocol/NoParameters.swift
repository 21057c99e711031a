/// Decodes any of `{}`, `null` or omitted parameters: the methods that take none.
public struct NoParameters: Codable, Sendable, Equatable {
    /// The empty parameters.
    public init() {}
}
