import ArgumentParser
import Foundation
import Strongroom
import StrongroomFields
import StrongroomMigrations

/// Turns a library error into one sentence on stderr (and a JSON object on
/// stdout with --json) and a sysexits exit code.
enum CommandFailure {
    static func exitCode(for code: StrongroomError.Code) -> Int32 {
        switch code {
        case .wrongKey, .keyRequired, .plaintextDatabase, .notADatabase, .corrupt, .malformedKey,
             .conversion, .verificationFailed, .sealedValue, .uniqueConstraint, .primaryKeyConstraint,
             .foreignKeyConstraint, .notNullConstraint, .checkConstraint, .constraint, .untrustedSchema,
             .legacyCipherFormat, .wrongPassphrase, .wrongFieldKeyring, .untrustedRegistry:
            return 65 // EX_DATAERR
        case .notFound, .keyMissing:
            return 66 // EX_NOINPUT
        case .outputExists, .cannotCreate:
            return 73 // EX_CANTCREAT
        case .busy, .connectionUnavailable, .interrupted:
            return 75 // EX_TEMPFAIL
        case .keyCommandFailed:
            return 69 // EX_UNAVAILABLE: the program that holds the key did not give it
        case .rekeyFailed, .diskFull, .ioError, .fileMoved:
            return 74 // EX_IOERR (for rekey: the rewrite failed; the old key still opens the file)
        case .keyFilePermissions, .permissionDenied, .readOnly:
            return 77 // EX_NOPERM
        case .misuse, .alreadyCurrent, .closed:
            return 64 // EX_USAGE (for upgrade: the file needs none)
        case .sqlcipherUnavailable, .sqlite:
            return 70 // EX_SOFTWARE
        }
    }

    static func exitCode(for error: MigrationError) -> Int32 {
        switch error.code {
        case .directoryUnreadable: return 66
        case .lockTimeout: return 75
        case .invalidVersion: return 64
        case .database: return error.underlying.map { exitCode(for: $0.code) } ?? 70
        case .malformedName, .duplicateVersion, .migrationFailed, .foreignKeyViolation,
             .unsupportedRebuild, .databaseNewer, .checksumMismatch, .transactionControl, .untrustedSchema:
            return 65
        }
    }

    /// Runs `body`; a ``StrongroomError`` or ``MigrationError`` becomes a
    /// message and an exit code. With `sqlIsInput` (the SQL came from the
    /// user), an error SQLite reports about it is a data error (65).
    static func reporting(json: Bool, sqlIsInput: Bool = false, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as StrongroomError {
            let status = sqlIsInput && error.code == .sqlite ? 65 : exitCode(for: error.code)
            fail(code: error.code.rawValue, message: error.message, status: status, json: json)
        } catch let error as MigrationError {
            var message = error.message
            if let statement = error.statement { message += " Statement: \(statement)" }
            fail(code: error.code.rawValue, message: message, status: exitCode(for: error), json: json)
        } catch let error as FieldError {
            fail(code: error.code.rawValue, message: error.message, status: error.code == .misuse ? 64 : 65, json: json)
        }
    }

    /// One sentence on stderr (and the JSON report), then exit with `status`.
    static func fail(code: String, message: String, status: Int32, json: Bool) -> Never {
        Output.error("strongroom: \(message)")
        if json {
            Output.json(ErrorReport(error: .init(code: code, message: message, exitCode: status)))
        }
        StrongroomCommand.exit(withError: ExitCode(status))
    }

    struct ErrorReport: Encodable {
        struct Body: Encodable {
            let code: String
            let message: String
            let exitCode: Int32
        }
        let error: Body
    }
}
