// swift-tools-version:6.0
import CompilerPluginSupport
import PackageDescription

// Layers, bottom to top:
//   CSQLCipher, CCrypto      thin C shims over libsqlcipher and libcrypto (pkg-config)
//   StrongroomCrypto         secret bytes, randomness, key derivation, digests; knows no SQL
//   Strongroom               connections, statements, rows, transactions, queue, pool, keys
//   StrongroomFields         sealed columns: field keyring, envelope format, field cipher (over Strongroom)
//   StrongroomMigrations     the migration runner: history, checksums, verify, rebuilds, fleet;
//                            the model (table definitions, schema SQL, validation, diff)
//   StrongroomMacros         `@Table` and its attributes (the plugin, StrongroomMacrosPlugin,
//                            is the only target that needs swift-syntax)
//   StrongroomCLI            the `strongroom` command, a thin client of the public API
let package = Package(
    name: "Strongroom",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Strongroom", targets: ["Strongroom"]),
        .library(name: "StrongroomCrypto", targets: ["StrongroomCrypto"]),
        .library(name: "StrongroomMigrations", targets: ["StrongroomMigrations"]),
        .library(name: "StrongroomFields", targets: ["StrongroomFields"]),
        .library(name: "StrongroomMacros", targets: ["StrongroomMacros"]),
        .executable(name: "strongroom", targets: ["StrongroomCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Metrics and traces of queues and pools, through the ecosystem's APIs:
        // nothing is recorded until the app bootstraps a backend.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // The `@Table` macro's plugin only; the `strongroom` command does not depend on it.
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        // `make docs`: builds the DocC archives (a plugin only; nothing links it).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLCipher",
            pkgConfig: "sqlcipher",
            providers: [.apt(["libsqlcipher-dev"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "StrongroomCrypto",
            dependencies: ["CCrypto"]
        ),
        .target(
            name: "Strongroom",
            dependencies: [
                "CSQLCipher",
                "StrongroomCrypto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "StrongroomFields",
            dependencies: [
                "Strongroom",
                "StrongroomCrypto",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "StrongroomMigrations",
            dependencies: [
                "Strongroom",
                "StrongroomCrypto",
                "StrongroomFields",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .macro(
            name: "StrongroomMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        .target(
            name: "StrongroomMacros",
            dependencies: ["Strongroom", "StrongroomFields", "StrongroomMigrations", "StrongroomMacrosPlugin"]
        ),
        .executableTarget(
            name: "StrongroomCLI",
            dependencies: [
                "Strongroom",
                "StrongroomCrypto",
                "StrongroomFields",
                "StrongroomMigrations",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A VFS for tests that makes writes to one file fail as on a full disk.
        .target(
            name: "CFaultVFS",
            dependencies: ["CSQLCipher"],
            path: "Tests/CFaultVFS"
        ),
        // A small app that reads sealed columns (make demo runs it).
        .executableTarget(
            name: "customer-lookup",
            dependencies: ["Strongroom", "StrongroomFields"],
            path: "Examples/CustomerLookup"
        ),
        // The FMDB movies tutorial and a sqlite3 C API photos program, ported
        // (the guide "Coming from FMDB and sqlite3"; make test runs both).
        .executableTarget(
            name: "movies",
            dependencies: ["Strongroom"],
            path: "Examples/Movies"
        ),
        // The Chinook app's model as @Table types: make demo validates the
        // migrated database against it and writes the next migration from it.
        .executableTarget(
            name: "chinook-model",
            dependencies: ["StrongroomMacros"],
            path: "Examples/ChinookModel"
        ),
        .executableTarget(
            name: "photos",
            dependencies: ["Strongroom"],
            path: "Examples/Photos"
        ),
        // The reliability tests' child process: a pool killed during rekey,
        // a pool under load, a process whose memory is dumped after its keys go.
        .executableTarget(
            name: "reliability-child",
            dependencies: ["Strongroom", "StrongroomFields"],
            path: "Tests/ReliabilityChild"
        ),
        .target(
            name: "StrongroomTestSupport",
            dependencies: ["CFaultVFS", .product(name: "Logging", package: "swift-log")],
            path: "Tests/StrongroomTestSupport"
        ),
        .testTarget(
            name: "StrongroomCryptoTests",
            dependencies: ["StrongroomCrypto"],
            // Wycheproof vectors (Apache-2.0, LICENSE beside them), read from the source tree.
            exclude: ["Vectors"]
        ),
        .testTarget(
            name: "StrongroomTests",
            dependencies: [
                "Strongroom",
                "StrongroomCrypto",
                "StrongroomTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            // A second reader and writer of wrapped key files, from Keys/README.md, run from the source tree.
            exclude: ["Decoder"]
        ),
        .testTarget(
            name: "StrongroomFieldsTests",
            dependencies: ["StrongroomFields", "Strongroom", "StrongroomCrypto", "StrongroomTestSupport"],
            // The Python decoder written from the format document, and the search of
            // decrypted pages, run from the source tree.
            exclude: ["Decoder", "PageSearch"]
        ),
        .testTarget(
            name: "StrongroomMigrationsTests",
            dependencies: ["StrongroomMigrations", "Strongroom", "StrongroomTestSupport", "StrongroomCLI"],
            // The ALTER TABLE corpus and the replay script, read from the source tree.
            exclude: ["Corpus"]
        ),
        // `make docs` in a scratch copy: a broken link or an undocumented symbol fails it.
        .testTarget(
            name: "DocumentationTests",
            dependencies: ["StrongroomTestSupport"]
        ),
        // Runs the example programs against encrypted databases.
        .testTarget(
            name: "ExampleTests",
            dependencies: ["movies", "photos", "chinook-model", "StrongroomTestSupport"]
        ),
        // The macro's expansions and diagnostics (no compiler needed), and
        // records declared with it, read and written for real.
        .testTarget(
            name: "StrongroomMacrosTests",
            dependencies: [
                "StrongroomMacros",
                "StrongroomMacrosPlugin",
                "StrongroomTestSupport",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ]
        ),
        .testTarget(
            name: "StrongroomCLITests",
            dependencies: ["StrongroomCLI", "Strongroom", "StrongroomFields", "StrongroomTestSupport"]
        ),
        // Issue 12's reliability suite: crashes (SIGKILL), faults, tampering,
        // leaks and load, on real files and real processes (make stress
        // runs it with 200 kills and 60 s of load, and writes RELIABILITY.md).
        .testTarget(
            name: "StrongroomReliabilityTests",
            dependencies: ["StrongroomCLI", "reliability-child", "Strongroom", "StrongroomFields", "StrongroomMigrations", "StrongroomTestSupport"],
            // The page classifier the tampering tests run, from the source tree.
            exclude: ["Tampering/page_kinds.py"]
        ),
    ]
)

for target in package.targets where target.type != .system && target.name != "CFaultVFS" {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
