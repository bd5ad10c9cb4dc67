// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets, in their own package so the library's build stays light.
// `make fuzz` (Scripts/fuzz.sh) builds them in release with
//   -Xswiftc -enable-testing -Xswiftc -sanitize=address
//   -Xswiftc -sanitize-coverage=<what -sanitize=fuzzer instruments>
//   -Xlinker libclang_rt.fuzzer_no_main-<arch>.a
// so that every module, the library's included, carries libFuzzer's coverage
// and AddressSanitizer, and targets reach internal parsers with
// `@testable import`; each target then runs on its corpus in Corpus/<name>/.
// Not `--sanitize=fuzzer`: SwiftPM would link libFuzzer's `main` into the
// `@Table` macro's plugin too, which has its own (see FuzzMain).
let package = Package(
    name: "StrongroomFuzz",
    dependencies: [
        .package(name: "Strongroom", path: ".."),
    ],
    targets: [
        // Reads structured values out of a fuzzer's bytes; reports a broken
        // invariant as a crash libFuzzer saves.
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
        // libFuzzer's driver, LLVMFuzzerRunDriver.
        .systemLibrary(name: "CLibFuzzer"),
        // sqlite3_complete, the migration splitter's oracle.
        .systemLibrary(name: "CSQLiteComplete", pkgConfig: "sqlcipher"),
        .executableTarget(
            name: "FuzzEnvelope",
            dependencies: ["FuzzSupport", .product(name: "StrongroomFields", package: "Strongroom")]
        ),
        .executableTarget(
            name: "FuzzKeyFile",
            dependencies: ["FuzzSupport", .product(name: "Strongroom", package: "Strongroom")]
        ),
        .executableTarget(
            name: "FuzzKeyring",
            dependencies: ["FuzzSupport", .product(name: "StrongroomFields", package: "Strongroom")]
        ),
        .executableTarget(
            name: "FuzzMigrationFile",
            dependencies: ["FuzzSupport", "CSQLiteComplete", .product(name: "StrongroomMigrations", package: "Strongroom")]
        ),
        .executableTarget(
            name: "FuzzDDLParser",
            dependencies: ["FuzzSupport", .product(name: "StrongroomMigrations", package: "Strongroom")]
        ),
        .executableTarget(
            name: "FuzzRowDecoder",
            dependencies: ["FuzzSupport", .product(name: "StrongroomMacros", package: "Strongroom")]
        ),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    if target.type == .executable {
        // No top-level code: an `@main` type hands over to libFuzzer's driver.
        settings.append(.unsafeFlags(["-parse-as-library"]))
    }
    target.swiftSettings = settings
}
