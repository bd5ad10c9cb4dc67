/// How a sealed column is sealed.
public enum SealingMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// AES-256-GCM under a random nonce, bound to its table, column and row:
    /// equal values give different envelopes, and an envelope moved to
    /// another row or column does not open. The default.
    case randomized
    /// AES-256-SIV, bound to its table and column only: equal values give
    /// equal envelopes, so the column can be looked up (`WHERE email = ?`
    /// with the sealed value) and indexed, and equality between rows shows.
    /// An envelope moved to another row of the same column still opens.
    case deterministic
    /// Randomized, plus a blind index (HMAC-SHA256 of the value) kept in a
    /// companion column, for equality lookups without deterministic envelopes.
    case indexed
}
