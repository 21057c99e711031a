// swift-tools-version:6.1
import PackageDescription

// Layers point one way: qactd -> QuickActionsDaemon -> VarlinkNIOServer -> Varlink;
// QuickActionsDaemon and qactl -> QuickActionsProtocol -> Varlink, QuickActions -> Contacts.
// QuickActions and Contacts are pure (no files, sockets, clocks or logging). Varlink and
// VarlinkNIOServer know nothing of quick actions; QactlCommand never imports SwiftNIO (start-up time).
// The daemon and the client are one executable, `qactd`, with `qactl` a link to it: the Swift
// runtime and Foundation, most of either program, are in the file once.
// The release executable is built by scripts/build-release: every module, the dependencies' too,
// optimised for size with a section per function, so that the linker keeps only what is used and
// can put together the functions start-up runs (QactdMain's linker settings, scripts/startup-order).

let package = Package(
    name: "qactd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "qactd", targets: ["QactdMain"]),
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
        // libsqlite3's header, for reading Evolution Data Server's address books (read-only); the
        // daemon opens the library when it first reads one (`SQLiteLibrary`).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
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
        // The daemon's command line (Sources/qactd) and the client's (Sources/qactl), which the one
        // executable's main runs by the name it was started as.
        .target(
            name: "QactdCommand",
            dependencies: [
                "QuickActionsDaemon", "QuickActionsProtocol", "SystemCalls",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/qactd"
        ),
        .target(
            name: "QactlCommand",
            dependencies: [
                "Varlink", "QuickActionsProtocol", "QuickActions", "Contacts", "SystemCalls",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/qactl"
        ),
        .executableTarget(
            name: "QactdMain",
            dependencies: ["QactdCommand", "QactlCommand"],
            // The Swift runtime is linked in: the package needs no Swift toolchain, and `qactl`, a
            // short-lived process, does not resolve the runtime's shared libraries at each start.
            // lld for what follows: --icf=all folds identical functions (generic specialisations,
            // thunks); packed relative relocations (DT_RELR, glibc 2.36: Debian 12) take the
            // loader's table from 24 bytes a pointer to a bit; the executable exports no symbols
            // (nothing loads it as a library; the runtime's static-stdlib arguments export them);
            // the functions start-up runs are put together (see scripts/startup-order), so the
            // pages the kernel maps around them are few. It stays a PIE (address-space randomization).
            // libstdc++ is linked in too (linker/static-libstdc++): the runtime uses a few of its
            // functions, and the shared library costs every process over a MiB, mapped and relocated.
            linkerSettings: [
                .unsafeFlags([
                    "-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims",
                    "-L\(Context.packageDirectory)/linker/static-libstdc++",
                    "-use-ld=lld", "-Xlinker", "--icf=all", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                    "-Xlinker", "--no-export-dynamic",
                    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/linker/startup-order.txt",
                    "-Xlinker", "--no-warn-symbol-ordering",
                ])
            ]
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
