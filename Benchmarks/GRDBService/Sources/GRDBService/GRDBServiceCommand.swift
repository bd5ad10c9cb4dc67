import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// `GRDBService --host 127.0.0.1 --port 8080 --database PATH [--readers N]`
///
/// The benchmark's GRDB peer of Examples/CustomerService: the same routes
/// and answers on GRDB 7.10 and the system's plaintext SQLite (no key, no
/// sealed column). Opens the database, migrates it, then serves until
/// SIGTERM or SIGINT, when it stops accepting, answers the requests in
/// flight, checkpoints and truncates the WAL, closes the pool and exits 0.
@main
struct GRDBServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "GRDBService",
        abstract: "The customer service's JSON API on GRDB 7.10 and a plaintext SQLite database (a benchmark peer).")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port, logged once listening).")
    var port = 8080

    @Option(help: ArgumentHelp("The database file (created and migrated when missing).", valueName: "path"))
    var database: String

    @Option(help: "Reader connections in the pool (GRDB's maximumReaderCount; the writer is one more).")
    var readers = 4

    @Option(name: .customLong("max-body"), help: "The largest request body in bytes; a larger one gets 413.")
    var maximumBodySize = 16_384

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port takes 0 to 65535.") }
        guard (1...64).contains(readers) else { throw ValidationError("--readers takes 1 to 64.") }
        guard maximumBodySize >= 256 else { throw ValidationError("--max-body takes 256 bytes or more.") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level takes trace, debug, info, notice, warning, error or critical.") }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "grdb-service")
        let store: CustomerStore
        do {
            store = try CustomerStore.open(path: database, readers: readers, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("GRDBService: cannot start: \(error)\n".utf8))
            throw ExitCode(78) // EX_CONFIG
        }
        let routes = Routes(store: store, logger: logger, maximumBodySize: maximumBodySize)
        let app = Application(
            router: routes.router(),
            // As the example: a connection that sends nothing for 30 s is closed.
            server: .http1(configuration: HTTP1Channel.Configuration(idleTimeout: TimeAmount.seconds(30))),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "GRDBService"),
            onServerRunning: { channel in
                logger.notice("listening", metadata: ["address": "\(host)", "port": "\(channel.localAddress?.port ?? 0)"])
            },
            logger: logger)
        // Stopped in reverse order: the server first, the database last.
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: DatabaseService(store: store, logger: logger)), .init(service: app)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
        logger.notice("stopped")
    }
}
