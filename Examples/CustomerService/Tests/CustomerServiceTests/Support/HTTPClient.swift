import Foundation

/// An answer read off the wire.
struct HTTPAnswer: Sendable {
    let status: Int
    /// Header names lowercased.
    let headers: [String: String]
    let body: Data

    /// The body as a JSON object.
    var json: [String: any Sendable]? {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: any Sendable]
    }

    /// `error.code` of an error body.
    var errorCode: String? { (json?["error"] as? [String: any Sendable])?["code"] as? String }
}

/// A failure to talk to the service at all (refused, reset, timed out): what
/// a client sees while the service is down.
struct HTTPFailure: Error, CustomStringConvertible {
    let description: String
}

/// One HTTP/1.1 keep-alive connection over a blocking socket: no client
/// library between the test and the server (no retries, no pooling), so a
/// request is sent exactly once and an answer is exactly what came back.
final class HTTPConnection {
    private let socket: Int32
    private var buffer: [UInt8] = []

    init(port: Int, timeout: Double = 30) throws {
        socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HTTPFailure(description: "socket: errno \(errno)") }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        try connectToLoopback(socket, port: port)
    }

    deinit { if socket >= 0 { close(socket) } }

    /// Sends one request and reads its answer.
    func send(_ method: String, _ path: String, json: String? = nil, body: Data? = nil,
              contentType: String? = "application/json", headers: [String: String] = [:]) throws -> HTTPAnswer {
        let content = json.map { Data($0.utf8) } ?? body
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if let content {
            if let contentType { head += "Content-Type: \(contentType)\r\n" }
            head += "Content-Length: \(content.count)\r\n"
        }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try write(Array(head.utf8) + Array(content ?? Data()))
        return try readAnswer()
    }

    /// Sends `text` as it is (a request written by hand), and reads the answer.
    func sendRaw(_ text: String) throws -> HTTPAnswer {
        try write(Array(text.utf8))
        return try readAnswer()
    }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Foundation.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw HTTPFailure(description: "send: errno \(errno)") }
            sent += count
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw HTTPFailure(description: count == 0 ? "connection closed" : "recv: errno \(errno)") }
        buffer += chunk[..<count]
    }

    private func readAnswer() throws -> HTTPAnswer {
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            if let range = buffer.firstRange(of: separator) { end = range.lowerBound } else { try fill() }
        }
        let head = String(decoding: buffer[..<end!], as: UTF8.self)
        buffer.removeFirst(end! + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw HTTPFailure(description: "bad status line: \(head)") }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < length { try fill() }
        let body = Data(buffer[..<length])
        buffer.removeFirst(length)
        return HTTPAnswer(status: status, headers: headers, body: body)
    }
}

/// A request on a connection of its own.
func request(_ port: Int, _ method: String, _ path: String, json: String? = nil, body: Data? = nil,
             contentType: String? = "application/json") throws -> HTTPAnswer {
    try HTTPConnection(port: port).send(method, path, json: json, body: body, contentType: contentType)
}

/// A socket that writes what it is given and reads nothing: a client that stalls.
final class RawSocket {
    private let socket: Int32

    init(port: Int) throws {
        socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HTTPFailure(description: "socket: errno \(errno)") }
        try connectToLoopback(socket, port: port)
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Foundation.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw HTTPFailure(description: "send: errno \(errno)")
        }
    }

    deinit { if socket >= 0 { close(socket) } }
}

/// Connects `socket` to 127.0.0.1:`port`, or throws. The socket is left
/// to its owner's deinit, which runs when the init that called this throws
/// (the object is whole by then): closing it here as well closed its number
/// twice, and the second close could take the socket another test had just
/// opened under that number (its send or connect then failed with EBADF).
private func connectToLoopback(_ socket: Int32, port: Int) throws {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        throw HTTPFailure(description: "connect to port \(port): errno \(errno)")
    }
}
