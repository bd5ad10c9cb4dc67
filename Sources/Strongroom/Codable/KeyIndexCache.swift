/// Remembers which column (or parameter) each coding key maps to, in the
/// order a record's keys arrive, so that decoding or encoding the next record
/// of the same type costs one string comparison per key instead of a lookup.
///
/// The state lives behind a pointer owned by this object: it is touched on
/// every key of every row, and a class's stored `var`s would pay Swift's
/// dynamic exclusivity checks on each access. A statement (and so its cache)
/// is used by one thread at a time.
final class KeyIndexCache {
    private struct State {
        /// `index` is -1 for a key that has no column or parameter, so a
        /// record's extra properties are looked up once, not on every record.
        var entries: [(name: String, index: Int32)] = []
        var position = 0
        /// Keys of the current record that found an index.
        var resolvedCount = 0
        /// Keys of the current record that found none.
        var unresolvedCount = 0
        /// Parameters 1...64 the current record bound, one bit each (bit
        /// 0 is parameter 1), so a key bound twice counts once.
        var boundParameters: UInt64 = 0
    }

    private let state: UnsafeMutablePointer<State>

    init() {
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Starts a new record.
    @inline(__always)
    func beginRecord() {
        state.pointee.position = 0
        state.pointee.resolvedCount = 0
        state.pointee.unresolvedCount = 0
        state.pointee.boundParameters = 0
    }

    /// Notes that parameter `index` was bound for the current record (an
    /// index above 64 is not tracked: see `boundParameterCount`).
    @inline(__always)
    func markBound(_ index: Int32) {
        guard index >= 1 && index <= 64 else { return }
        state.pointee.boundParameters |= 1 &<< UInt64(truncatingIfNeeded: index &- 1)
    }

    /// How many different parameters (among 1...64) the current record bound.
    var boundParameterCount: Int { state.pointee.boundParameters.nonzeroBitCount }

    /// How many keys of the current record found an index.
    var resolvedCount: Int { state.pointee.resolvedCount }

    /// How many keys of the current record found none.
    var unresolvedCount: Int { state.pointee.unresolvedCount }

    /// Forgets every lookup (the statement's columns changed).
    func forget() {
        state.pointee = State()
    }

    /// The index for `key`, resolving and remembering it on a miss.
    @inline(__always)
    func index(for key: String, resolve: (String) -> Int32?) -> Int32? {
        let position = state.pointee.position
        // Names compared byte for byte, as SQLite compares them: Swift's ==
        // takes an NFC and an NFD spelling (two columns) for one key.
        if position < state.pointee.entries.count && Self.sameName(state.pointee.entries[position].name, key) {
            state.pointee.position = position + 1
            return found(state.pointee.entries[position].index)
        }
        // The same key asked again (contains, then decodeNil, then decode).
        if position > 0 && Self.sameName(state.pointee.entries[position - 1].name, key) {
            let index = state.pointee.entries[position - 1].index
            return index < 0 ? nil : index
        }
        return resolveMiss(key, at: position, resolve: resolve)
    }

    /// The same name byte for byte. A key the same record type passes again
    /// is the same string, its representation bit for bit (a small string
    /// inline, or the same storage): two loads, no bytes read. Anything else
    /// is compared by its bytes.
    @inline(__always)
    static func sameName(_ a: String, _ b: String) -> Bool {
        let x = unsafeBitCast(a, to: (UInt64, UInt64).self), y = unsafeBitCast(b, to: (UInt64, UInt64).self)
        if x == y { return true }
        return ExactText(a) == ExactText(b)
    }

    @inline(__always)
    private func found(_ index: Int32) -> Int32? {
        guard index >= 0 else {
            state.pointee.unresolvedCount += 1
            return nil
        }
        state.pointee.resolvedCount += 1
        return index
    }

    private func resolveMiss(_ key: String, at position: Int, resolve: (String) -> Int32?) -> Int32? {
        let index = resolve(key) ?? -1
        if position < state.pointee.entries.count {
            state.pointee.entries[position] = (key, index)
        } else {
            state.pointee.entries.append((key, index))
        }
        state.pointee.position = position + 1
        return found(index)
    }
}
