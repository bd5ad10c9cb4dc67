import Strongroom

extension DatabaseValue {
    /// True for a BLOB shaped like a Strongroom envelope (format version 1,
    /// a known algorithm, longer than a blind index): a sealed value handed
    /// out as stored.
    var looksLikeEnvelope: Bool {
        guard case .blob(let bytes) = self, bytes.count > 22 else { return false }
        return bytes[0] == 0x01 && (bytes[1] == 0x01 || bytes[1] == 0x02)
    }
}
