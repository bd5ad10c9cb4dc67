public import Strongroom
import Foundation

/// Measures, on the real values, what a blind index would reveal at each
/// length: how many rows share each index value (the coincidences that
/// hide equality), the largest and smallest groups, and the largest length
/// that keeps every index value shared by at least k rows.
///
/// It opens every value the index covers with the keyring, inside one read
/// transaction, computes the index at each candidate length with that
/// length's own key, and counts. Nothing it returns holds a value.
///
/// ```swift
/// let plan = try queue.read { db in
///     try BlindIndexPlanner.plan(BlindIndex("email_folded", on: "email", in: "customer", bits: 16), in: db, keyring: keyring)
/// }
/// print(plan.recommendedBits ?? 0, plan.warnings)
/// ```
///
/// CipherSweet's formula gives the expected coincidences: C = R / 2^min(L, K)
/// for R rows, L bits and K bits of input (here K = log2 of the distinct
/// values measured), and its guidance is 2 ≤ C < √R. The planner reports
/// that expectation beside what the data gives: skewed data (many rows with
/// one value, a few alone) singles rows out at lengths the formula calls safe.
public enum BlindIndexPlanner {
    /// One candidate length.
    public struct Candidate: Sendable, Hashable, Codable {
        /// The length, in bits.
        public let bits: Int
        /// C = R / 2^min(bits, K): CipherSweet's expected rows per index value.
        public let expectedRowsPerValue: Double
        /// R / (distinct index values): what the data gives.
        public let measuredRowsPerValue: Double
        /// Distinct index values.
        public let indexValues: Int
        /// The most rows sharing one index value.
        public let largestGroup: Int
        /// The fewest rows sharing one index value.
        public let smallestGroup: Int
        /// Rows behind an index value fewer than k rows share: singled out.
        public let rowsSingledOut: Int
        /// Whether 2 ≤ C < √R holds for the measured C.
        public let withinGuidance: Bool
    }

    /// What the planner found.
    public struct Plan: Sendable, Hashable, Codable {
        /// The index measured (at its declared length).
        public let index: BlindIndex
        /// Rows of the table (R).
        public let rows: Int
        /// Rows with an index value (no part NULL).
        public let indexedRows: Int
        /// Distinct values after the transformations.
        public let distinctValues: Int
        /// log2 of ``distinctValues``: the input's bits (K).
        public let inputBits: Double
        /// The k the recommendation keeps.
        public let k: Int
        /// Each length measured, ascending.
        public let candidates: [Candidate]
        /// The largest length at which, as at every shorter one, every
        /// index value is shared by at least k rows; nil when even 1 bit
        /// singles a row out.
        public let recommendedBits: Int?
        /// The declared length, measured.
        public let declared: Candidate
        /// Sentences for the user: an index that singles rows out, a low-entropy input.
        public let warnings: [String]
    }

    /// What the planner is doing, for a progress bar.
    public enum Phase: Sendable, Hashable {
        /// Reading and opening rows: done, of total.
        case reading(Int, of: Int)
        /// Measuring candidate lengths: done, of at most total.
        case measuring(Int, of: Int)
    }

    /// Plans `index` (its table, columns and transformations; the lengths
    /// tried are 1 bit up to 3 past the first that singles rows out, at least
    /// to `minimumBits`, and the declared one), on the rows of `db`.
    ///
    /// - Parameters:
    ///   - index: The index to plan: its table, columns, transformations, and
    ///     its declared length (measured too).
    ///   - db: A connection to the database, inside a read transaction for a
    ///     consistent count (`queue.read { db in … }`).
    ///   - keyring: The field keyring that opens the values (and would key the index).
    ///   - k: The fewest rows an index value must stand for (default 2).
    ///   - sealedColumns: The sealed columns (default: those the database records).
    ///   - maximumBits: The longest length tried (default 64).
    ///   - progress: Called as rows are read and lengths measured.
    /// - Returns: The counts at each length, the recommendation and the warnings.
    /// - Throws: ``FieldError`` for a value that does not open or that a
    ///   transformation refuses (naming its column and row), or a keyring the
    ///   database does not know; `StrongroomError` from SQLite.
    public static func plan(_ index: BlindIndex, in db: Connection, keyring: FieldKeyring, k: Int = 2, sealedColumns: [SealedColumn]? = nil,
                            maximumBits: Int = 64, progress: ((Phase) -> Void)? = nil) throws -> Plan {
        precondition(k >= 1, "k is at least 1")
        try index.validate()
        let cipher = try FieldCipher(keyring: keyring, contextRecordedIn: db)
        let inputs = try BlindIndexInputs(index, cipher: cipher, sealedColumns: try sealedColumns ?? SealedColumnRegistry.columns(in: db), in: db)
        let rows = try inputs.count(in: db)
        // Each distinct transformed value, as the message its index hashes
        // (the encoding of FieldCipher.indexTag), with how many rows hold it.
        var counts: [Message: Int] = [:]
        var read = 0, indexed = 0
        try inputs.forEach(after: nil, in: db) { row in
            read += 1
            if read % 50_000 == 0 { progress?(.reading(read, of: rows)) }
            guard let transformed = try index.transformed(row.values, row: FieldCipher.row(row.rowKey)) else { return }
            indexed += 1
            counts[Message(bytes: cipher.indexMessage(of: transformed)), default: 0] += 1
        }
        progress?(.reading(read, of: rows))
        let distinct = Array(counts)
        counts = [:]
        let inputBits = distinct.count > 1 ? log2(Double(distinct.count)) : 0
        let r = Double(indexed)
        func measure(_ bits: Int) throws -> Candidate {
            let candidate = index.withBits(bits)
            // Each thread its own cipher: one is not thread-safe.
            let cipher = FieldCipher(keyring: keyring, context: cipher.context)
            let mac = try cipher.indexMAC(for: candidate, keyID: keyring.activeKeyID)
            var groups: [Tag: Int] = [:]
            groups.reserveCapacity(min(distinct.count, 1 << min(bits, 24)))
            var tag = [UInt8](repeating: 0, count: 32)
            tag.withUnsafeMutableBytes { tag in
                for (message, count) in distinct {
                    message.bytes.withUnsafeBytes { mac.authenticationCode(for: $0, into: tag) }
                    groups[Tag(UnsafeRawBufferPointer(tag), bits: bits), default: 0] += count
                }
            }
            let sizes = groups.values
            let expected = r / pow(2, min(Double(bits), inputBits))
            let measured = groups.isEmpty ? 0 : r / Double(groups.count)
            return Candidate(bits: bits, expectedRowsPerValue: expected, measuredRowsPerValue: measured, indexValues: groups.count,
                             largestGroup: sizes.max() ?? 0, smallestGroup: sizes.min() ?? 0, rowsSingledOut: sizes.filter { $0 < k }.reduce(0, +),
                             withinGuidance: measured >= 2 && measured < r.squareRoot())
        }
        // Two lengths at a time (one per core) until 3 past the first that
        // singles rows out, and at least to log2(R) + 2.
        let floor = min(maximumBits, Int(log2(max(r, 2)).rounded(.up)) + 2)
        var candidates: [Candidate] = []
        var firstFailing: Int?
        var bits = 1
        while bits <= maximumBits {
            let batch = Array(bits...min(bits + 1, maximumBits))
            let results = try measureInParallel(batch, measure)
            candidates += results
            for candidate in results where firstFailing == nil && candidate.smallestGroup < k { firstFailing = candidate.bits }
            progress?(.measuring(candidates.count, of: maximumBits))
            bits = batch.last! + 1
            if let firstFailing, bits > firstFailing + 3, bits > floor { break }
        }
        let declared = try candidates.first { $0.bits == index.bits } ?? measure(index.bits)
        let recommended = firstFailing.map { $0 - 1 } ?? candidates.last?.bits
        var warnings: [String] = []
        if declared.rowsSingledOut > 0 {
            warnings.append("At its declared \(index.bits) bits, \(index) singles out \(declared.rowsSingledOut) of \(indexed) rows: their index value is shared by fewer than \(k) rows, so it tells a database-key holder which rows hold equal values and which stand alone. "
                + (recommended.map { $0 >= 1 && $0 < index.bits ? "Use \($0) bits or fewer." : "" } ?? "Even 1 bit does: index more columns together (a compound index) or none."))
        }
        if distinct.count > 0, distinct.count * 2 <= indexed {
            warnings.append("\(index.table).\(index.name)'s input repeats: \(indexed) rows hold \(distinct.count) distinct values, so at a length that tells them apart, group sizes show how often each occurs. Combine it with another column in a compound index, or keep it short.")
        }
        return Plan(index: index, rows: rows, indexedRows: indexed, distinctValues: distinct.count, inputBits: inputBits, k: k,
                    candidates: candidates, recommendedBits: recommended.flatMap { $0 >= 1 ? $0 : nil }, declared: declared, warnings: warnings)
    }

    /// An index's message as a dictionary key, hashed as one run of bytes
    /// (an array of bytes is hashed byte by byte: most of the planner's
    /// reading time on a million values).
    private struct Message: Hashable {
        let bytes: [UInt8]
        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// The first `bits` of a tag (up to 128), as a dictionary key.
    private struct Tag: Hashable {
        let high: UInt64, low: UInt64
        init(_ tag: UnsafeRawBufferPointer, bits: Int) {
            var high: UInt64 = 0, low: UInt64 = 0
            for i in 0..<8 { high = high << 8 | UInt64(tag[i]) }
            for i in 8..<16 { low = low << 8 | UInt64(tag[i]) }
            if bits < 64 {
                high &= ~(UInt64.max >> UInt64(bits))
                low = 0
            } else if bits < 128 {
                low &= bits == 64 ? 0 : ~(UInt64.max >> UInt64(bits - 64))
            }
            self.high = high
            self.low = low
        }
    }

    private static func measureInParallel(_ lengths: [Int], _ measure: (Int) throws -> Candidate) throws -> [Candidate] {
        var results = [Result<Candidate, any Error>?](repeating: nil, count: lengths.count)
        results.withUnsafeMutableBufferPointer { slots in
            let slots = UnsafeSendable(slots)
            withoutActuallyEscaping(measure) { measure in
                let measure = UnsafeSendable(measure)
                DispatchQueue.concurrentPerform(iterations: lengths.count) { i in
                    slots.value[i] = Result { try measure.value(lengths[i]) }
                }
            }
        }
        return try results.map { try $0!.get() }
    }

    /// Handed to `concurrentPerform`, whose iterations write disjoint slots.
    private struct UnsafeSendable<T>: @unchecked Sendable {
        let value: T
        init(_ value: T) { self.value = value }
    }
}
