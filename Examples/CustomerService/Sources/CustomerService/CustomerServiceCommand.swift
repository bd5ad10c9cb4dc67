import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import StrongroomMacros

/// `CustomerService --host 127.0.0.1 --port 8080 --database PATH --key-… --field-keys-…`
///
/// Opens the database, migrates it, then serves until SIGTERM or SIGINT,
/// when it stops accepting, answers the requests in flight, checkpoints and
/// truncates the WAL, closes the pool and exits 0 (75 when the WAL could
/// not be checkpointed: a full disk).
@main
struct CustomerServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "CustomerService",
        abstract: "A JSON API for customers on an encrypted Strongroom database, e-mail and note sealed.")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port, logged once listening).")
    var port = 8080

    @Option(help: ArgumentHelp("The database file (created and migrated when missing).", valueName: "path"))
    var database: String

    @OptionGroup var keys: KeyOptions

    @Option(help: "Reader connections in the pool (the writer is one more).")
    var readers = 4

    @Option(name: .customLong("cache-size"), help: "Each connection's page cache, in MiB (readers + 1 connections): as the database grows, the process's memory grows by up to that many times this, then stays flat.")
    var cacheSizeMiB = 64

    @Option(name: .customLong("max-waiters"), help: "Requests that may wait for a connection; more get 503 with Retry-After.")
    var maximumWaiters = 256

    @Option(name: .customLong("max-wait-ms"), help: "Milliseconds a request may wait for a connection before a 503.")
    var maximumWaitMilliseconds = 2000

    @Flag(name: .customLong("group-commit"), inversion: .prefixedNo, help: "Run the creates and updates that wait for the writer together in one transaction (Configuration.groupsAsyncWrites); a failed one rolls it back and the others run again (Configuration.groupedWriteUndo).")
    var groupCommit = true

    @Option(name: .customLong("max-body"), help: "The largest request body in bytes; a larger one gets 413.")
    var maximumBodySize = 16_384

    @Option(help: ArgumentHelp("A directory of migrations to run instead of those built in (Migrations/NNNN_name.sql).", valueName: "path"))
    var migrations: String?

    @Option(name: .customLong("lock-timeout"), help: ArgumentHelp("Seconds to wait at start for another migration runner's lock before exiting with 75 (try again).", valueName: "seconds"))
    var lockTimeoutSeconds: Double = 30

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port takes 0 to 65535.") }
        guard (1...64).contains(readers) else { throw ValidationError("--readers takes 1 to 64.") }
        guard (1...4096).contains(cacheSizeMiB) else { throw ValidationError("--cache-size takes 1 to 4096 (MiB per connection).") }
        // At least 1: with none, a request could be refused while the writer
        // is still finishing the one before it (its checkpoint check).
        guard maximumWaiters >= 1 else { throw ValidationError("--max-waiters takes 1 or more.") }
        guard maximumWaitMilliseconds >= 0 else { throw ValidationError("--max-wait-ms takes 0 or more.") }
        guard maximumBodySize >= 256 else { throw ValidationError("--max-body takes 256 bytes or more.") }
        guard lockTimeoutSeconds >= 0, lockTimeoutSeconds <= 3600 else { throw ValidationError("--lock-timeout takes 0 to 3600 seconds.") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level takes trace, debug, info, notice, warning, error or critical.") }
    }

    /// A start that may succeed if tried again (EX_TEMPFAIL, 75: the unit
    /// restarts it): another migration runner's lock, another process's write
    /// lock. Anything else (a key, a keyring, a migration that fails) is
    /// configuration (EX_CONFIG, 78: the unit does not restart it).
    static func isTemporary(_ error: any Error) -> Bool {
        switch error {
        case let error as MigrationError:
            return error.code == .lockTimeout || error.underlying.map { isTemporary($0) } == true
        case let error as StrongroomError:
            return error.code == .busy || error.code == .connectionUnavailable
        default:
            return false
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "customer-service")
        let store: CustomerStore
        do {
            // Before any key is read: a core dump would hold the keys and opened values.
            try CoreDumps.disable()
            store = try await CustomerStore.open(CustomerStore.Settings(
                path: database, key: try keys.databaseKey(), keyring: try keys.fieldKeyring(),
                migrations: try ServiceMigrations.load(directory: migrations), readers: readers, cacheSizeKiB: cacheSizeMiB * 1024,
                maximumWaiters: maximumWaiters, maximumWait: .milliseconds(maximumWaitMilliseconds), groupsWrites: groupCommit,
                lockTimeout: .milliseconds(Int64(lockTimeoutSeconds * 1000))), logger: logger)
        } catch {
            // One line, and a non-zero exit: Strongroom's messages say what to do and quote no key.
            FileHandle.standardError.write(Data("CustomerService: cannot start: \(error)\n".utf8))
            throw ExitCode(Self.isTemporary(error) ? 75 : 78)
        }
        let routes = Routes(store: store, logger: logger, maximumBodySize: maximumBodySize)
        let app = Application(
            router: routes.router(),
            // A connection that sends nothing for 30 s is closed: idle clients cannot pile up.
            server: .http1(configuration: HTTP1Channel.Configuration(idleTimeout: TimeAmount.seconds(30))),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "CustomerService"),
            onServerRunning: { channel in
                logger.notice("listening", metadata: ["address": "\(host)", "port": "\(channel.localAddress?.port ?? 0)"])
            },
            logger: logger)
        // Stopped in reverse order: the server first, the database last. A
        // request that has not ended 3 s after SIGTERM (a client that stalls
        // mid-body) is cut off: the server is cancelled, and the database is
        // still checkpointed and closed (DatabaseService), well within 5 s.
        var configuration = ServiceGroupConfiguration(
            services: [.init(service: DatabaseService(store: store, logger: logger)), .init(service: app)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        configuration.maximumGracefulShutdownDuration = Duration.seconds(3)
        let group = ServiceGroup(configuration: configuration)
        do {
            try await group.run()
        } catch {
            FileHandle.standardError.write(Data("CustomerService: \(error)\n".utf8))
            throw ExitCode(75) // EX_TEMPFAIL
        }
        logger.notice("stopped")
    }
}
