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
        // For app developers: publish an app's own quick actions and receive the picked ones.
        .library(name: "QuickActionsClient", targets: ["QuickActionsClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
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
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(name: "QuickActionsProtocol", dependencies: ["Varlink", "QuickActions", "Contacts"]),
        // The app developer's client: the blocking Varlink client on dispatch threads, no SwiftNIO.
        .target(name: "QuickActionsClient", dependencies: ["QuickActionsProtocol", "Varlink", "QuickActions", "Contacts"]),
        // The library's example, which the end-to-end tests run as an app would.
        .executableTarget(name: "qactd-example-app", dependencies: ["QuickActionsClient"], path: "Examples/qactd-example-app"),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // libsqlite3, for reading Evolution Data Server's address books (read-only).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // libjpeg-turbo's TurboJPEG and libpng's simplified API: a favorite's photo decoded, its
        // round face encoded as PNG. Their headers only: the daemon opens the libraries when it
        // first draws a face (`ImageLibraries`), so a daemon that draws none does not map them.
        .systemLibrary(name: "CTurboJPEG", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", providers: [.apt(["libpng-dev"])]),
        // sd-bus's object vtables (C initialiser macros) with trampolines into Swift; Swift
        // calls the rest of sd-bus, the non-variadic part, directly.
        .target(name: "CSdBus", linkerSettings: [.linkedLibrary("systemd")]),
        .target(
            name: "QuickActionsDaemon",
            dependencies: [
                "QuickActions", "Contacts", "Varlink", "VarlinkNIOServer", "QuickActionsProtocol", "CSystemd",
                "CSdBus", "CSQLite", "CTurboJPEG", "CPNG", "SystemCalls", "CLinux",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "qactd",
            dependencies: [
                "QuickActionsDaemon", "QuickActionsProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: [.unsafeFlags(["-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims"])]
        ),
        .executableTarget(
            name: "qactl",
            dependencies: [
                "Varlink", "QuickActionsProtocol", "QuickActions", "Contacts", "SystemCalls",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // A short-lived process: resolving the Swift runtime's shared libraries at each start
            // would be a large part of its run, so the runtime is linked in. It stays a PIE
            // (address-space randomization) although linking it without would spare the loader
            // its relative relocations: `qactl list` meets its target in scripts/bench (≤ 1.5× socat)
            // with them.
            linkerSettings: [.unsafeFlags(["-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims"])]
        ),
        .testTarget(name: "SystemCallsTests", dependencies: ["SystemCalls"]),
        // Shared by the test targets (waiting for a condition, a log-collecting handler, fixtures);
        // no product links it.
        .target(
            name: "TestSupport",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "ContactsTests", dependencies: ["Contacts"]),
        .testTarget(name: "QuickActionsTests", dependencies: ["QuickActions", "Contacts", "TestSupport"]),
        .testTarget(name: "VarlinkTests", dependencies: ["Varlink", "TestSupport"]),
        .testTarget(
            name: "VarlinkNIOServerTests",
            dependencies: [
                "VarlinkNIOServer", "Varlink", "TestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "QuickActionsProtocolTests", dependencies: ["QuickActionsProtocol", "Varlink", "QuickActions", "Contacts", "TestSupport"]),
        .testTarget(
            name: "QuickActionsDaemonTests",
            dependencies: [
                "QuickActionsDaemon", "QuickActionsProtocol", "Varlink", "VarlinkNIOServer", "QuickActions", "Contacts", "TestSupport",
                "SystemCalls", "CTurboJPEG", "CPNG",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            // The tests make their photos with TurboJPEG's encoder and libpng, linked here.
            linkerSettings: [.linkedLibrary("turbojpeg"), .linkedLibrary("png16")]
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["Varlink", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
