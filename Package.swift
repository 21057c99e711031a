// swift-tools-version:6.1
import PackageDescription

// Layers point one way: qactd -> QuickActionsDaemon -> VarlinkNIOServer -> Varlink;
// QuickActionsDaemon and qactl -> QuickActionsProtocol -> Varlink, QuickActions -> Contacts.
// QuickActions and Contacts are pure (no files, sockets, clocks or logging). Varlink and
// VarlinkNIOServer know nothing of quick actions; qactl never links SwiftNIO (start-up time).
let package = Package(
    name: "qactd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "qactd", targets: ["qactd"]),
        .executable(name: "qactl", targets: ["qactl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // EINTR retry, errno text, mkdir -p and Unix socket addresses, once for every target
        // that makes system calls; Linux constants Glibc's module hides, from the C headers.
        .target(name: "SystemCalls"),
        .target(name: "CLinux"),
        .target(name: "Contacts"),
        .target(name: "QuickActions", dependencies: ["Contacts"]),
        .target(name: "Varlink", dependencies: ["SystemCalls"]),
        .target(
            name: "VarlinkNIOServer",
            dependencies: [
                "Varlink", "SystemCalls", "CLinux",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(name: "QuickActionsProtocol", dependencies: ["Varlink", "QuickActions", "Contacts"]),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .target(
            name: "QuickActionsDaemon",
            dependencies: [
                "QuickActions", "Contacts", "Varlink", "VarlinkNIOServer", "QuickActionsProtocol", "CSystemd",
                "SystemCalls", "CLinux",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "qactd",
            dependencies: [
                "QuickActionsDaemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "qactl",
            dependencies: [
                "Varlink", "QuickActionsProtocol", "QuickActions", "Contacts", "SystemCalls",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "SystemCallsTests", dependencies: ["SystemCalls"]),
        .testTarget(name: "ContactsTests", dependencies: ["Contacts"]),
        .testTarget(name: "QuickActionsTests", dependencies: ["QuickActions", "Contacts"]),
        .testTarget(name: "VarlinkTests", dependencies: ["Varlink"]),
        .testTarget(
            name: "VarlinkNIOServerTests",
            dependencies: [
                "VarlinkNIOServer", "Varlink",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "QuickActionsProtocolTests", dependencies: ["QuickActionsProtocol", "Varlink", "QuickActions", "Contacts"]),
        .testTarget(
            name: "QuickActionsDaemonTests",
            dependencies: ["QuickActionsDaemon", "QuickActionsProtocol", "Varlink", "QuickActions", "Contacts", "SystemCalls"]
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["Varlink"]),
    ],
    swiftLanguageModes: [.v6]
)
