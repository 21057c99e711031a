import Foundation

/// The built client in the products folder `directory`: the build makes one executable, `qactd`,
/// and `qactl` is a link to it, as `make install` makes it (started by that name it runs the
/// client). The link is made here when missing; whatever else is there under that name (a
/// client an older build made) is replaced, so no test runs a stale client.
@discardableResult
public func linkBuiltClient(in directory: String) -> String {
    let qactl = directory + "/qactl"
    if (try? FileManager.default.destinationOfSymbolicLink(atPath: qactl)) != "qactd" {
        try? FileManager.default.removeItem(atPath: qactl)
        try? FileManager.default.createSymbolicLink(atPath: qactl, withDestinationPath: "qactd")
    }
    return qactl
}
