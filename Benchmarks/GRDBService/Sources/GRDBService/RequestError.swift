// The example's (Examples/CustomerService), with GRDB's DatabaseError in place
// of StrongroomError: the same statuses, codes and messages.

import Foundation
import GRDB

/// An answer other than success: an HTTP status, a code a client can match,
/// and a message that says what to do. Its JSON body is
/// `{"error": {"code": "…", "message": "…"}}`. No message quotes a sealed
/// value or a key.
struct RequestError: Error, Sendable {
    enum Status: Int, Sendable {
        case badRequest = 400, notFound = 404, methodNotAllowed = 405, conflict = 409, contentTooLarge = 413
        case unsupportedMediaType = 415, unprocessable = 422, internalError = 500
        case serviceUnavailable = 503, insufficientStorage = 507
    }

    let status: Status
    let code: String
    let message: String
    /// Seconds a client should wait before trying again (503).
    var retryAfter: Int?

    init(_ status: Status, _ code: String, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    static func missingField(_ field: String) -> RequestError {
        RequestError(.unprocessable, "missing_field", "\"\(field)\" is required.")
    }

    static func notFound(_ what: String) -> RequestError {
        RequestError(.notFound, "not_found", "\(what) does not exist.")
    }

    /// The answer to a database failure, as the example maps Strongroom's:
    /// busy (503, try again), a full disk (507), a constraint (409, the
    /// UNIQUE e-mail). Anything else is a 500 whose details stay in the log.
    init(_ error: DatabaseError) {
        switch (error.resultCode, error.extendedResultCode) {
        case (.SQLITE_BUSY, _), (.SQLITE_LOCKED, _):
            self.init(.serviceUnavailable, "overloaded", "The service is busy: try again in a second.", retryAfter: 1)
        case (.SQLITE_INTERRUPT, _):
            self.init(.serviceUnavailable, "shutting_down", "The service is stopping: try again on another instance.", retryAfter: 1)
        case (.SQLITE_FULL, _):
            self.init(.insufficientStorage, "disk_full", "The database's disk is full: nothing was written.")
        case (_, .SQLITE_CONSTRAINT_UNIQUE), (_, .SQLITE_CONSTRAINT_PRIMARYKEY):
            self.init(.conflict, "conflict", "A customer with this e-mail address already exists.")
        case (.SQLITE_CONSTRAINT, _):
            self.init(.conflict, "conflict", "The change conflicts with the stored data: nothing was written.")
        default:
            self.init(.internalError, "internal", "The service failed to answer: the failure is logged with its code (\(error.extendedResultCode.rawValue)).")
        }
    }

    /// The JSON body.
    var body: Data {
        let object = ["error": ["code": code, "message": message]]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    }
}
