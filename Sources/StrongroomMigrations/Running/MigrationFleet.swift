import Foundation
public import Strongroom

/// Migrates many database files, several at a time. Each file is migrated
/// atomically on its own; one failure never stops the others.
///
/// ```swift
/// let results = MigrationFleet.migrate(paths, with: migrator, jobs: 2) { path in
///     Configuration(key: try KeyFile.read(at: path + ".key"))
/// }
/// for result in results where !result.succeeded { print(result.path, result.error ?? "") }
/// ```
public enum MigrationFleet {
    /// What happened to one file.
    public struct Result: Sendable, Codable {
        /// The database file.
        public let path: String
        /// The version before, when the file could be opened.
        public let fromVersion: Int?
        /// The version after (or where it stayed, on failure), when known.
        public let toVersion: Int?
        /// The number of migrations applied.
        public let appliedCount: Int
        /// Why it failed, nil on success.
        public let error: String?
        /// The error's code (a ``MigrationError/Code`` or `StrongroomError/Code` raw value).
        public let errorCode: String?
        /// True when the file was migrated (or already up to date).
        public var succeeded: Bool { error == nil }
    }

    /// Migrates every file in `paths` with up to `jobs` running at once.
    /// Results come back in the order of `paths`.
    public static func migrate(_ paths: [String], with migrator: Migrator, to target: Int? = nil, jobs: Int,
                               configuration: @escaping @Sendable (String) throws -> Configuration) -> [Result] {
        let results = ResultSlots(count: paths.count)
        let next = NextIndex()
        let workers = max(1, min(jobs, paths.count))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while let index = next.take(below: paths.count) {
                results.set(index, migrateOne(paths[index], with: migrator, to: target, configuration: configuration))
            }
        }
        return results.values
    }

    static func migrateOne(_ path: String, with migrator: Migrator, to target: Int?, configuration: (String) throws -> Configuration) -> Result {
        var from: Int?
        var connection: Connection?
        do {
            var config = try configuration(path)
            config.createIfMissing = false
            let db = try Connection(path: path, configuration: config)
            connection = db
            from = try migrator.currentVersion(db)
            let report = try migrator.migrate(db, to: target)
            return Result(path: path, fromVersion: report.fromVersion, toVersion: report.toVersion, appliedCount: report.applied.count, error: nil, errorCode: nil)
        } catch let error as MigrationError {
            // Migrations before the failing one were applied, each atomic.
            let now = connection.flatMap { try? migrator.currentVersion($0) }
            return Result(path: path, fromVersion: from, toVersion: now, appliedCount: error.appliedBeforeFailure.count, error: error.message, errorCode: error.code.rawValue)
        } catch let error as StrongroomError {
            return Result(path: path, fromVersion: from, toVersion: nil, appliedCount: 0, error: error.message, errorCode: error.code.rawValue)
        } catch {
            return Result(path: path, fromVersion: from, toVersion: nil, appliedCount: 0, error: "\(error)", errorCode: nil)
        }
    }
}

/// Result slots written by the workers.
private final class ResultSlots: @unchecked Sendable {
    // Sendable: `storage` is guarded by `lock`.
    private let lock = NSLock()
    private var storage: [MigrationFleet.Result?]
    init(count: Int) { storage = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: MigrationFleet.Result) { lock.lock(); storage[index] = value; lock.unlock() }
    var values: [MigrationFleet.Result] { lock.lock(); defer { lock.unlock() }; return storage.map { $0! } }
}

/// The next file for a worker to take.
private final class NextIndex: @unchecked Sendable {
    // Sendable: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value = 0
    func take(below limit: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard value < limit else { return nil }
        value += 1
        return value - 1
    }
}

extension MigrationFleet.Result: CustomStringConvertible {
    /// "tenant-1.db: migrated from version 2 to 5 (3 applied)", or
    /// "tenant-2.db: failed at version 2: …".
    public var description: String {
        if let error {
            return "\(path): failed\(toVersion.map { " at version \($0)" } ?? ""): \(error)"
        }
        guard appliedCount > 0 else { return "\(path): already at version \(toVersion ?? 0)" }
        return "\(path): migrated from version \(fromVersion ?? 0) to \(toVersion ?? 0) (\(appliedCount) applied)"
    }
}
