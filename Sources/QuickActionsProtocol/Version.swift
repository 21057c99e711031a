/// qactd's version, declared once: `qactd --version`, `qactl --version` and the daemon's
/// `org.varlink.service.GetInfo` all read it here, so a client and daemon built together agree.
public enum QactdVersion {
    /// The version, `MAJOR.MINOR.PATCH`.
    public static let string = "0.1.0"
}
