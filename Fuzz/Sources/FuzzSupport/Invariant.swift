#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stops the run when `condition` is false: the message goes to standard
/// error and the process aborts, which libFuzzer reports as a crash and
/// saves the input for (`crash-<sha1>`). A broken invariant is a finding
/// just as a trap is.
public func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    guard !condition() else { return }
    fail(message(), file: file, line: line)
}

/// Stops the run: `message` names what went wrong.
public func fail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let text = "INVARIANT FAILED at \(file):\(line): \(message)\n"
    _ = text.utf8CString.withUnsafeBufferPointer { buffer in
        write(2, buffer.baseAddress, buffer.count - 1)
    }
    abort()
}

/// The hex of `bytes`, for messages about public test data (never a key).
public func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef")
    var out = ""
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0F)])
    }
    return out
}
