/// What `org.varlink.service.GetInfo` reports, and the interfaces a service implements.
public struct VarlinkServiceInfo: Hashable, Sendable {
    /// One interface a service implements: its name and its description in Varlink IDL.
    public struct Interface: Hashable, Sendable {
        /// The interface's reverse-domain name (`io.qactd.QuickActions`).
        public var name: String
        /// The interface description in Varlink IDL, served verbatim by `GetInterfaceDescription`.
        public var description: String

        /// An interface named `name` described by the IDL text `description`.
        public init(name: String, description: String) {
            self.name = name
            self.description = description
        }

        /// The method names the description declares, so calls to undeclared methods are
        /// answered with `MethodNotFound` before they reach a handler.
        public var methodNames: Set<String> {
            var names: Set<String> = []
            for line in description.split(whereSeparator: \.isNewline) {
                let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
                guard trimmed.hasPrefix("method ") else { continue }
                let name = trimmed.dropFirst("method ".count)
                    .drop(while: { $0 == " " || $0 == "\t" })
                    .prefix(while: { $0.isLetter || $0.isNumber })
                if !name.isEmpty { names.insert(String(name)) }
            }
            return names
        }
    }

    /// Who makes the service, as `GetInfo` reports it.
    public var vendor: String
    /// The product's name, as `GetInfo` reports it.
    public var product: String
    /// The product's version, as `GetInfo` reports it.
    public var version: String
    /// Where the product is documented, as `GetInfo` reports it.
    public var url: String
    /// The service's own interfaces; `org.varlink.service` is always added in front.
    public var interfaces: [Interface]

    /// What `GetInfo` reports, and the service's own interfaces.
    public init(vendor: String, product: String, version: String, url: String, interfaces: [Interface]) {
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
        self.interfaces = interfaces
    }
}

/// The standard interface every Varlink service implements (varlink.org), including the
/// `PermissionDenied` and `ExpectedMore` errors of the current specification.
public enum VarlinkServiceInterface {
    /// `org.varlink.service`.
    public static let name = "org.varlink.service"

    public static let description = """
        # The Varlink Service Interface is provided by every varlink service. It
        # describes the service and the interfaces it implements.
        interface org.varlink.service

        # Get a list of all the interfaces a service provides and information
        # about the implementation.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # Get the description of an interface that is implemented by this service.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not
        # implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # Client is denied access
        error PermissionDenied ()

        # Method is expected to be called with 'more' set to true, but wasn't
        error ExpectedMore ()

        """
}

/// Answers `org.varlink.service` itself and decides where every other call goes. Pure: the
/// server carries out the route, handlers for the service's own interfaces do the rest.
public struct VarlinkServiceDispatcher: Sendable {
    /// Where a call goes: a reply made here, or an interface's handler.
    public enum Route: Hashable, Sendable {
        /// Answer with this reply; no handler is involved.
        case reply(VarlinkReply)
        /// Hand the call to the handler registered for this interface.
        case interface(String)
    }

    /// What `GetInfo` reports.
    public let info: VarlinkServiceInfo
    private let interfaces: [String: VarlinkServiceInfo.Interface]
    private let methods: [String: Set<String>]

    /// A dispatcher for the service `info` describes; of two interfaces with one name the first is kept, and
    /// `org.varlink.service` always comes first.
    public init(info: VarlinkServiceInfo) {
        self.info = info
        var interfaces: [String: VarlinkServiceInfo.Interface] = [:]
        let standard = VarlinkServiceInfo.Interface(
            name: VarlinkServiceInterface.name, description: VarlinkServiceInterface.description)
        for interface in [standard] + info.interfaces where interfaces[interface.name] == nil {
            interfaces[interface.name] = interface
        }
        self.interfaces = interfaces
        self.methods = interfaces.mapValues(\.methodNames)
    }

    /// Interface names in the order `GetInfo` lists them.
    public var interfaceNames: [String] {
        var seen: Set<String> = []
        return ([VarlinkServiceInterface.name] + info.interfaces.map(\.name)).filter { seen.insert($0).inserted }
    }

    /// Where `call` goes: `org.varlink.service`'s methods and the errors for unknown interfaces and undeclared
    /// methods are answered here; every other call goes to its interface's handler.
    public func route(_ call: VarlinkCall) -> Route {
        guard let interfaceName = call.interfaceName, !interfaceName.isEmpty else {
            return .reply(VarlinkReply(error: .interfaceNotFound(call.method)))
        }
        guard let declared = methods[interfaceName] else {
            return .reply(VarlinkReply(error: .interfaceNotFound(interfaceName)))
        }
        guard declared.contains(call.memberName) else {
            return .reply(VarlinkReply(error: .methodNotFound(call.method)))
        }
        guard interfaceName == VarlinkServiceInterface.name else {
            return .interface(interfaceName)
        }
        switch call.memberName {
        case "GetInfo":
            return .reply(
                VarlinkReply(parameters: [
                    "vendor": .string(info.vendor),
                    "product": .string(info.product),
                    "version": .string(info.version),
                    "url": .string(info.url),
                    "interfaces": .array(interfaceNames.map(JSONValue.string)),
                ]))
        case "GetInterfaceDescription":
            guard case .string(let requested)? = call.parameters["interface"] else {
                return .reply(VarlinkReply(error: .invalidParameter("interface")))
            }
            guard let interface = interfaces[requested] else {
                return .reply(VarlinkReply(error: .interfaceNotFound(requested)))
            }
            return .reply(VarlinkReply(parameters: ["description": .string(interface.description)]))
        default:
            return .reply(VarlinkReply(error: .methodNotImplemented(call.method)))
        }
    }
}
