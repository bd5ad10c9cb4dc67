// The example's routes (Examples/CustomerService), unchanged but for the
// database's module and error type (GRDB's DatabaseError): the same routes,
// JSON, statuses, headers and error answers. A test holds them so.

import Foundation
import Hummingbird
import Logging
import NIOHTTP1
import GRDB

/// The API's routes, on a ``CustomerStore``.
///
/// | route | answer |
/// |---|---|
/// | `POST /customers` | 201, the stored customer with its `id` |
/// | `GET /customers/{id}` | 200 or 404 |
/// | `PATCH /customers/{id}` | 200 with the changed customer, or 404 |
/// | `DELETE /customers/{id}` | 204 or 404 |
/// | `GET /customers?after={id}&limit={n}` | 200, `{"customers": […], "next": id or null}` |
/// | `GET /customers?email={address}` | 200 or 404 |
/// | `GET /health` | 200 while the process serves |
/// | `GET /ready` | 200 when the database answers, 503 otherwise |
struct Routes: Sendable {
    let store: CustomerStore
    let logger: Logger
    /// The largest request body taken; a larger one is a 413.
    let maximumBodySize: Int
    static let defaultPageSize = 20
    static let maximumPageSize = 100

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: ErrorMiddleware(logger: logger))
        router.post("customers") { request, context in try await create(request, context) }
        router.get("customers") { request, _ in try await list(request) }
        router.get("customers/:id") { _, context in try await get(context) }
        router.patch("customers/:id") { request, context in try await update(request, context) }
        router.delete("customers/:id") { _, context in try await delete(context) }
        router.get("health") { _, _ in try Self.json(["status": "ok"]) }
        router.get("ready") { _, _ in
            guard await store.isReady() else {
                throw RequestError(.serviceUnavailable, "not_ready", "The database does not answer yet.", retryAfter: 1)
            }
            return try Self.json(["status": "ready"])
        }
        return router
    }

    func create(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let input = try CustomerInput.forCreating(try await body(of: request))
        let customer = try await store.create(input)
        var response = try Self.json(CustomerJSON(customer: customer), status: .created)
        response.headers[.location] = "/customers/\(customer.id!)"
        return response
    }

    func get(_ context: BasicRequestContext) async throws -> Response {
        let id = try Self.id(context)
        guard let customer = try await store.customer(id: id) else { throw RequestError.notFound("Customer \(id)") }
        return try Self.json(CustomerJSON(customer: customer))
    }

    func list(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        if let email = query["email"] {
            if query["after"] != nil || query["limit"] != nil {
                throw RequestError(.badRequest, "bad_query", "Give either email=, or after= and limit=, not both.")
            }
            let address = try EmailAddress.normalized(String(email))
            guard let customer = try await store.customer(email: address) else {
                throw RequestError.notFound("A customer with this e-mail address")
            }
            return try Self.json(CustomerJSON(customer: customer))
        }
        let after = try query["after"].map { text throws(RequestError) in
            guard let after = Int64(text), after >= 0 else {
                throw RequestError(.badRequest, "bad_query", "after= takes the id a page starts after (the previous page's \"next\"), a whole number from 0.")
            }
            return after
        } ?? Int64(0)
        let limit = try query["limit"].map { text throws(RequestError) in
            guard let limit = Int(text), (1...Self.maximumPageSize).contains(limit) else {
                throw RequestError(.badRequest, "bad_query", "limit= takes a page size from 1 to \(Self.maximumPageSize).")
            }
            return limit
        } ?? Self.defaultPageSize
        let customers = try await store.customers(after: after, limit: limit)
        let next = customers.count == limit ? customers.last?.id : nil
        return try Self.json(CustomerPage(customers: customers.map(CustomerJSON.init), next: next))
    }

    func update(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let id = try Self.id(context)
        let input = try CustomerInput.forUpdating(try await body(of: request))
        guard let customer = try await store.update(id: id, input) else { throw RequestError.notFound("Customer \(id)") }
        return try Self.json(CustomerJSON(customer: customer))
    }

    func delete(_ context: BasicRequestContext) async throws -> Response {
        let id = try Self.id(context)
        guard try await store.delete(id: id) else { throw RequestError.notFound("Customer \(id)") }
        return Response(status: .noContent)
    }

    /// The body of a JSON request, up to ``maximumBodySize`` bytes.
    private func body(of request: Request) async throws -> Data {
        guard let type = request.headers[.contentType], type.lowercased().hasPrefix("application/json") else {
            throw RequestError(.unsupportedMediaType, "unsupported_media_type", "Send the body as JSON, with Content-Type: application/json.")
        }
        do {
            return Data(buffer: try await request.body.collect(upTo: maximumBodySize))
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw RequestError(.contentTooLarge, "body_too_large", "The body is over \(maximumBodySize) bytes.")
        }
    }

    private static func id(_ context: BasicRequestContext) throws(RequestError) -> Int64 {
        guard let text = context.parameters.get("id"), let id = Int64(text), id > 0 else {
            throw RequestError(.badRequest, "bad_id", "A customer id is a whole number from 1.")
        }
        return id
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        json(data: try encoder.encode(value), status: status)
    }

    static func json(data: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Turns every failure into a JSON answer: ``RequestError``s as they are,
/// Hummingbird's own (no such route, 405) with their status, database
/// failures by their code (``RequestError/init(_:)``, GRDB's `DatabaseError`), anything else a 500
/// logged by its type, never by a value.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let answer = answer(to: error, request)
            var response = Routes.json(data: answer.body, status: HTTPResponse.Status(code: answer.status.rawValue))
            if let seconds = answer.retryAfter { response.headers[.retryAfter] = String(seconds) }
            return response
        }
    }

    private func answer(to error: any Error, _ request: Request) -> RequestError {
        switch error {
        case let error as RequestError:
            return error
        case let error as DatabaseError:
            let answer = RequestError(error)
            if answer.status == .internalError {
                logger.error("request failed", metadata: ["route": "\(request.method) \(request.uri.path)", "code": "\(error.extendedResultCode.rawValue)", "error": "\(error.message ?? "")"])
            } else if answer.status != .conflict {
                logger.warning("request refused", metadata: ["route": "\(request.method) \(request.uri.path)", "code": "\(error.extendedResultCode.rawValue)"])
            }
            return answer
        case let error as any HTTPResponseError:
            let status = RequestError.Status(rawValue: error.status.code) ?? .badRequest
            return RequestError(status, status == .notFound ? "not_found" : "http_\(error.status.code)", error.status.reasonPhrase)
        case is HTTPParserError:
            // The client's bytes, not the service's failure: no error-level line for it.
            logger.debug("malformed request", metadata: ["route": "\(request.method) \(request.uri.path)"])
            return RequestError(.badRequest, "bad_request", "The request is not valid HTTP/1.1 (its body's framing): send it again, well formed.")
        case is CancellationError:
            return RequestError(.serviceUnavailable, "cancelled", "The request was cancelled.", retryAfter: 1)
        default:
            logger.error("request failed", metadata: ["route": "\(request.method) \(request.uri.path)", "error": "\(type(of: error))"])
            return RequestError(.internalError, "internal", "The service failed to answer: the failure is logged.")
        }
    }
}
