/// An error from the crypto layer. It never carries secret bytes.
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for matching in `catch`.
    public enum Code: Sendable, Hashable {
        case invalidArgument
        case libraryFailure
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
