import ArgumentParser
import Foundation
import Strongroom

/// Turns a library error into one sentence on stderr (and a JSON object on
/// stdout with --json) and a sysexits exit code.
enum CommandFailure {
    static func exitCode(for code: StrongroomError.Code) -> Int32 {
        switch code {
        case .wrongKey, .keyRequired, .plaintextDatabase, .notADatabase, .corrupt, .malformedKey,
             .conversion, .verificationFailed, .uniqueConstraint, .primaryKeyConstraint,
             .foreignKeyConstraint, .notNullConstraint, .checkConstraint, .constraint:
            return 65 // EX_DATAERR
        case .notFound, .keyMissing:
            return 66 // EX_NOINPUT
        case .outputExists, .cannotCreate:
            return 73 // EX_CANTCREAT
        case .busy:
            return 75 // EX_TEMPFAIL
        case .keyFilePermissions, .permissionDenied, .readOnly:
            return 77 // EX_NOPERM
        case .misuse:
            return 64 // EX_USAGE
        case .sqlcipherUnavailable, .sqlite:
            return 70 // EX_SOFTWARE
        }
    }

    /// Runs `body`; a ``StrongroomError`` becomes a message and an exit code.
    static func reporting(json: Bool, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as StrongroomError {
            let status = exitCode(for: error.code)
            Output.error("strongroom: \(error.message)")
            if json {
                Output.json(ErrorReport(error: .init(code: error.code.rawValue, message: error.message, exitCode: status)))
            }
            throw ExitCode(status)
        }
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
