// swift-tools-version:6.1
import PackageDescription

// The peer: GRDB 7.10 on the system's plaintext SQLite, in a package and a
// process of its own. System SQLite must never share a binary with
// SQLCipher (their `sqlite3_*` symbols clash silently), so the benchmark
// harness runs this executable as a child and reads its timings.
let package = Package(
    name: "GRDBPeer",
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // The harness's C reads on GRDB's engine (the same system SQLite),
        // so that GRDB's layer is measured over its own C.
        .target(
            name: "CPlaintextLoops",
            cSettings: [.unsafeFlags(["-O2"])],
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        .executableTarget(
            name: "GRDBPeer",
            dependencies: ["CPlaintextLoops", .product(name: "GRDB", package: "GRDB.swift")]
        ),
    ]
)
