// swift-tools-version:6.0
import PackageDescription

// The benchmark harness lives in its own package so the library's build stays light.
// It measures Strongroom against the same loops written in C, in one process,
// on the same SQLCipher library and settings: `make bench` (release build).
let package = Package(
    name: "StrongroomBenchmarks",
    dependencies: [
        .package(name: "Strongroom", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Percentiles of the pool's latencies.
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", exact: "0.2.0"),
    ],
    targets: [
        // SQLCipher as pkg-config names it (SQLCipher 4 with PKG_CONFIG_PATH from
        // Scripts/sqlcipher4.sh: make bench measures both engines).
        .systemLibrary(
            name: "CSQLCipherLibrary",
            pkgConfig: "sqlcipher",
            providers: [.apt(["libsqlcipher-dev"])]
        ),
        .target(
            name: "CBenchmarkLoops",
            dependencies: ["CSQLCipherLibrary"],
            cSettings: [.unsafeFlags(["-O2"])],
            linkerSettings: [.linkedLibrary("crypto")]
        ),
        .executableTarget(
            name: "StrongroomBenchmarks",
            dependencies: [
                "CBenchmarkLoops",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Strongroom", package: "Strongroom"),
                .product(name: "StrongroomMigrations", package: "Strongroom"),
                .product(name: "StrongroomFields", package: "Strongroom"),
                .product(name: "StrongroomMacros", package: "Strongroom"),
            ]
        ),
        // The harness's own logic: the baseline check, the published report
        // and the README section, the refusals of its command line.
        .testTarget(
            name: "StrongroomBenchmarksTests",
            dependencies: ["StrongroomBenchmarks"]
        ),
    ]
)
