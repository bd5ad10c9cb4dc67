import Foundation
public import Logging

/// Encrypting an existing plaintext database into a new file, and exporting an
/// encrypted database to plaintext on explicit request.
///
/// Both use SQLCipher's `sqlcipher_export` (the backup API does not work with
/// encrypted databases), copy `user_version` and `application_id` (which
/// `sqlcipher_export` leaves behind), and then prove the copy: every table's
/// row count and content hash must match the source, or the new file is
/// removed and ``StrongroomError/Code/verificationFailed`` is thrown.
/// The source is opened read-only and never modified; the output must not exist.
///
/// ```swift
/// let report = try PlaintextConversion.importPlaintext(from: "legacy.sqlite", to: "app.db", key: key)
/// print(report.tables.map { "\($0.name): \($0.rowCount)" })
/// ```
public enum PlaintextConversion {
    /// Your acknowledgement that an export writes every row unencrypted.
    public enum PlaintextAcknowledgement: Sendable {
        /// The output file will hold the data in plaintext; protecting it is up to you.
        case outputIsUnprotectedPlaintext
    }

    /// What a conversion copied, verified table by table.
    public struct Report: Sendable, Codable {
        /// Source and destination tables matched on these digests.
        public let tables: [TableDigest]
        /// The copied `PRAGMA user_version`.
        public let userVersion: Int
        /// The copied `PRAGMA application_id`.
        public let applicationID: Int
    }

    /// Encrypts the plaintext database at `source` into a new file at `destination`.
    ///
    /// - Throws: ``StrongroomError/Code/keyRequired`` when `source` is not plaintext;
    ///   ``StrongroomError/Code/outputExists`` when `destination` exists;
    ///   ``StrongroomError/Code/verificationFailed`` when the copy differs.
    public static func importPlaintext(from source: String, to destination: String, key: DatabaseKey, logger: Logger? = nil) throws(StrongroomError) -> Report {
        if try FileHeader.size(of: source) == 0 {
            throw StrongroomError(.notADatabase, "\(source) is an empty file, not a database.", path: source)
        }
        return try convert(source, from: .plaintext, to: destination, as: .encrypted(key), logger: logger)
    }

    /// Writes a **plaintext** copy of the encrypted database at `source` to `destination`.
    ///
    /// ```swift
    /// try PlaintextConversion.exportPlaintext(from: "app.db", key: key, to: "debug.sqlite",
    ///                                         .outputIsUnprotectedPlaintext)
    /// ```
    public static func exportPlaintext(from source: String, key: DatabaseKey, to destination: String, _ acknowledgement: PlaintextAcknowledgement, logger: Logger? = nil) throws(StrongroomError) -> Report {
        try convert(source, from: .encrypted(key), to: destination, as: .plaintext, logger: logger)
    }

    private static func convert(_ source: String, from sourceEncryption: Configuration.Encryption, to destination: String,
                                as destinationEncryption: Configuration.Encryption, logger: Logger?) throws(StrongroomError) -> Report {
        var sourceConfiguration = Configuration(encryption: sourceEncryption)
        sourceConfiguration.readOnlyMainAllowingAttach = true
        sourceConfiguration.createIfMissing = false
        var destinationConfiguration = Configuration(encryption: destinationEncryption)
        let destinationKey = destinationConfiguration.key
        if destinationKey == nil {
            // A plaintext export is meant to be handed over: one file, no -wal.
            destinationConfiguration.journalMode = .delete
        }
        if let logger {
            sourceConfiguration.logger = logger
            destinationConfiguration.logger = logger
        }
        if FileManager.default.fileExists(atPath: destination) {
            throw StrongroomError(.outputExists, "\(destination) already exists; it will not be overwritten. Choose a new path.", path: destination)
        }
        let sourceConnection: Connection
        do {
            sourceConnection = try Connection(path: source, configuration: sourceConfiguration)
        } catch where error.code == .keyRequired {
            throw StrongroomError(.keyRequired, "\(source) is not a plaintext SQLite database (it is encrypted already, or not a database).", path: source)
        }
        var created = false
        do throws(StrongroomError) {
            let userVersion = try sourceConnection.fetchOne(Int.self, sql: "PRAGMA user_version") ?? 0
            let applicationID = try sourceConnection.fetchOne(Int.self, sql: "PRAGMA application_id") ?? 0
            // The key is bound, never pasted into the SQL text. An empty key
            // attaches a plaintext database.
            let keyBytes = destinationKey?.sqlcipherKeyBytes()
            let attach = try sourceConnection.prepare(sql: "ATTACH DATABASE ?1 AS strongroom_target KEY ?2")
            try attach.bind(.text(destination), at: 1)
            try attach.bindSecret(keyBytes, at: 2)
            created = true
            defer { attach.clearBindings() }
            try attach.run()
            do throws(StrongroomError) {
                try sourceConnection.execute(sql: "SELECT sqlcipher_export('strongroom_target')")
                try sourceConnection.execute(sql: "PRAGMA strongroom_target.user_version = \(userVersion)")
                try sourceConnection.execute(sql: "PRAGMA strongroom_target.application_id = \(applicationID)")
            } catch {
                try? sourceConnection.execute(sql: "DETACH DATABASE strongroom_target")
                throw error
            }
            try sourceConnection.execute(sql: "DETACH DATABASE strongroom_target")

            let expected = try sourceConnection.tableDigests()
            let copy = try Connection(path: destination, configuration: destinationConfiguration)
            let actual = try copy.tableDigests()
            let copiedVersion = try copy.fetchOne(Int.self, sql: "PRAGMA user_version") ?? 0
            let copiedApplicationID = try copy.fetchOne(Int.self, sql: "PRAGMA application_id") ?? 0
            copy.close()
            guard actual == expected, copiedVersion == userVersion, copiedApplicationID == applicationID else {
                let differing = Set(expected).symmetricDifference(actual).map(\.name).sorted()
                throw StrongroomError(.verificationFailed, "The copy of \(source) differs from the source (tables: \(differing.joined(separator: ", ")); user_version \(copiedVersion) vs \(userVersion)); it was removed.", path: destination)
            }
            sourceConnection.logger.info("converted database", metadata: ["source": "\(source)", "destination": "\(destination)", "tables": "\(expected.count)"])
            return Report(tables: expected, userVersion: userVersion, applicationID: applicationID)
        } catch {
            if created { removeDatabaseFiles(destination) }
            throw error
        }
    }

    private static func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            unlink(path + suffix)
        }
    }
}
