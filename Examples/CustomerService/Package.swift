// swift-tools-version:6.2
import PackageDescription

// A JSON API for customers on Hummingbird 2 and Strongroom: an encrypted
// database, a sealed e-mail (with a blind index) and a sealed note. A package
// of its own, so that the library's build does not carry a web server.
let package = Package(
    name: "CustomerService",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Strongroom", path: "../.."),
        // traits: [] leaves out swift-configuration, which this example does not use.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "CustomerService",
            dependencies: [
                .product(name: "StrongroomMacros", package: "Strongroom"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The migrations, compiled into the binary: the service needs no
            // files beside it but its database and keys.
            resources: [.copy("Migrations")]
        ),
        // Runs the built service as a process: bad input, keys, shutdown,
        // SIGKILL under load, and a short load with wrk.
        .testTarget(
            name: "CustomerServiceTests",
            dependencies: [
                "CustomerService",
                .product(name: "Strongroom", package: "Strongroom"),
                .product(name: "StrongroomFields", package: "Strongroom"),
            ]
        ),
    ]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
