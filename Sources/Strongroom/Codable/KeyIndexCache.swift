/// Remembers which column (or parameter) each coding key maps to, in the
/// order a record's keys arrive, so that decoding or encoding the next record
/// of the same type costs one string comparison per key instead of a lookup.
struct KeyIndexCache {
    private var entries: [(name: String, index: Int32)] = []
    private var position = 0

    /// Starts a new record.
    @inline(__always)
    mutating func beginRecord() { position = 0 }

    /// The index for `key`, resolving and remembering it on a miss.
    @inline(__always)
    mutating func index(for key: String, resolve: (String) -> Int32?) -> Int32? {
        if position < entries.count && entries[position].name == key {
            position += 1
            return entries[position - 1].index
        }
        // The same key asked again (contains, then decodeNil, then decode).
        if position > 0 && entries[position - 1].name == key {
            return entries[position - 1].index
        }
        guard let index = resolve(key) else { return nil }
        if position < entries.count {
            entries[position] = (key, index)
        } else {
            entries.append((key, index))
        }
        position += 1
        return index
    }
}
