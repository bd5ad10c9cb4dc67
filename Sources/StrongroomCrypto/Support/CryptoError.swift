/// An error from the crypto layer. It never carries secret bytes.
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for matching in `catch`.
    public enum Code: Sendable, Hashable {
        /// A key, nonce, tag or buffer of the wrong size, or an input the
        /// algorithm does not take.
        case invalidArgument
        /// The tag does not match: the ciphertext, its associated data or
        /// the key is not the one it was sealed with.
        case authenticationFailed
        /// OpenSSL reported an error it should not have.
        case libraryFailure
    }

    /// What kind of failure, to match on.
    public let code: Code
    /// What went wrong and what to do; never key material.
    public let message: String

    /// An error with `code` and `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

extension CryptoError {
    /// Runs `body` and throws its ``CryptoError`` typed again: the standard
    /// library's `withUnsafeBytes` family rethrows untyped errors.
    static func typed<T>(_ body: () throws -> T) throws(CryptoError) -> T {
        do {
            return try body()
        } catch let error as CryptoError {
            throw error
        } catch {
            throw CryptoError(.libraryFailure, "Unexpected error: \(error)")
        }
    }
}
