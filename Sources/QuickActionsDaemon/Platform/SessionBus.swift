/// The user's session bus, found once for every room that talks to it: the quicklist, the
/// shell extension's probe, the desktop notifications and the user manager's commands.
enum SessionBus {
    /// Why there is no session bus to connect to.
    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    /// `DBUS_SESSION_BUS_ADDRESS`, else the bus a systemd user session keeps at
    /// `$XDG_RUNTIME_DIR/bus` (what sd-bus's own `sd_bus_open_user` looks for).
    static func address(environment: [String: String]) -> Result<String, Missing> {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            return .success(address)
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            let path = "\(runtime)/bus"
            if (try? FileIO.fileExists(path)) == true {
                return .success("unix:path=\(path)")
            }
            return .failure(Missing(description: "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and '\(path)' does not exist"))
        }
        return .failure(Missing(description: "no session bus: neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"))
    }
}
