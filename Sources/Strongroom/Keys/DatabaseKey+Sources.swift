import Foundation
import StrongroomCrypto

/// Where keys come from: key files, the environment, standard input
/// (commands: ``KeyCommand``; systemd credentials: ``fromCredential(_:unwrappingWith:)``).
/// Never a command-line argument.
extension DatabaseKey {
    /// The raw key in the key file at `path`, unwrapped with a passphrase
    /// from `passphrase` when the file is wrapped. See ``KeyFile/read(at:unwrappingWith:)``.
    public static func load(keyFile path: String, unwrappingWith passphrase: PassphraseSource? = nil) throws(StrongroomError) -> DatabaseKey {
        try KeyFile.read(at: path, unwrappingWith: passphrase)
    }

    /// The raw key held, as 64 hex characters, by the environment variable `name`.
    ///
    /// ```swift
    /// // APP_DB_KEY=$(cat Keys/app.key) ./app
    /// let key = try DatabaseKey.fromEnvironment("APP_DB_KEY")
    /// ```
    ///
    /// - Throws: ``StrongroomError/Code/keyMissing`` when the variable is unset
    ///   or empty; ``StrongroomError/Code/malformedKey`` when it is not 64 hex
    ///   characters (the error never quotes it).
    public static func fromEnvironment(_ name: String) throws(StrongroomError) -> DatabaseKey {
        guard let pointer = getenv(name), pointer.pointee != 0 else {
            throw StrongroomError(.keyMissing, "The environment variable \(name) is not set or empty; set it to the 64 hex characters of the database key.")
        }
        let length = strlen(pointer)
        let hex = UnsafeRawBufferPointer(start: pointer, count: length)
        let trimmed = length == KeyFile.hexCharacterCount + 1 && hex[KeyFile.hexCharacterCount] == 0x0A
            ? UnsafeRawBufferPointer(rebasing: hex[0..<KeyFile.hexCharacterCount]) : hex
        guard trimmed.count == KeyFile.hexCharacterCount, let bytes = Hex.decodeSecret(trimmed) else {
            throw StrongroomError(.malformedKey, "The environment variable \(name) must hold the 64 hex characters of a 256-bit key.")
        }
        var key = try raw(bytes)
        key.source = .environment
        return key
    }

    /// ``fromEnvironment(_:)``, then the variable wiped, whether it held a key
    /// or not: its value overwritten with zeros in place, in every copy in the
    /// process's environment block, and the variable removed. `unsetenv` alone
    /// leaves the value in the block the process started with, which
    /// `/proc/PID/environ` and `ps e` show. Call it once, early, before the
    /// process starts others (which would inherit the variable).
    ///
    /// ```swift
    /// // APP_DB_KEY=$(cat Keys/app.key) ./app
    /// let key = try DatabaseKey.takeFromEnvironment("APP_DB_KEY")   // APP_DB_KEY is gone
    /// ```
    public static func takeFromEnvironment(_ name: String) throws(StrongroomError) -> DatabaseKey {
        defer { wipeEnvironmentVariable(name) }
        return try fromEnvironment(name)
    }

    private static func wipeEnvironmentVariable(_ name: String) {
        // Every copy: an environment block may hold the name twice, and getenv finds the first.
        let prefix = Array((name + "=").utf8CString.dropLast())
        var entry = environ
        while let variable = entry.pointee {
            if strncmp(variable, prefix, prefix.count) == 0 {
                let value = variable + prefix.count
                memset(value, 0, strlen(value))
            }
            entry += 1
        }
        unsetenv(name)
    }

    /// A passphrase read from standard input up to its end or its first
    /// newline (which is not part of the passphrase). Nothing is echoed.
    ///
    /// ```swift
    /// // printf '%s' "$PASSPHRASE" | ./app
    /// let key = try DatabaseKey.passphraseFromStandardInput()
    /// ```
    public static func passphraseFromStandardInput() throws(StrongroomError) -> DatabaseKey {
        var key = try passphrase(readSecretLine(from: STDIN_FILENO, limit: passphraseByteLimit))
        key.source = .standardInput
        return key
    }

    /// Reads up to the first newline or end of file into secure storage.
    static func readSecretLine(from fd: Int32, limit: Int) throws(StrongroomError) -> SecureBytes {
        let scratch = SecureBytes(count: limit) { _ in }
        var length = 0
        var sawNewline = false
        var lineEndedInCR = false
        scratch.withUnsafeBytes { raw in
            let buffer = UnsafeMutableRawBufferPointer(mutating: raw)
            var byte: UInt8 = 0
            while length < limit {
                let n = read(fd, &byte, 1)
                if n <= 0 { break }
                if byte == 0x0A { sawNewline = true; break }
                buffer[length] = byte
                length += 1
            }
            byte = 0
        }
        if length == limit && !sawNewline {
            // The limit counts the passphrase: its newline, or the end of input, may follow.
            var next: UInt8 = 0
            var ended = read(fd, &next, 1) != 1 || next == 0x0A
            if !ended && next == 0x0D {
                ended = read(fd, &next, 1) != 1 || next == 0x0A
                lineEndedInCR = true
            }
            next = 0
            if !ended {
                throw StrongroomError(.malformedKey, "The passphrase on standard input is longer than \(limit) bytes.")
            }
        }
        // A CR before the newline ends the line, not the passphrase (once: any before it are the passphrase's).
        var end = length
        if !lineEndedInCR { scratch.withUnsafeBytes { if end > 0 && $0[end - 1] == 0x0D { end -= 1 } } }
        return scratch.withUnsafeBytes { bytes in SecureBytes(copying: bytes[0..<end]) }
    }
}
