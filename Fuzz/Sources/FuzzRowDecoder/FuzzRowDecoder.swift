/// Fuzzes reading rows: the input gives a conversion policy, a Swift type
/// and three column values (NULL, INTEGER, REAL, TEXT, TEXT that is not
/// UTF-8, BLOB), selected in one row of an in-memory connection
/// (`SELECT ?1 AS v, ?1 AS o`, `CAST(? AS TEXT)` for raw text).
///
/// The first value is read as the chosen type (and its optional) every way
/// the library reads a row, and every way must agree with `Row.decode`, the
/// reference, on the value or on the failure: `RowView.decode` (the fast
/// paths), a `Decodable` struct (`RowDecoder`), a `@Table` struct
/// (`TableRecord`), `fetchOne(T.self)` for a single value (NULL is nil).
/// Failures are `StrongroomError`s, never traps; a value read gives itself
/// back through its own `databaseValue` (a `Date` to the millisecond);
/// `row[0]` and `withTextBytes` give what was stored (TEXT that is not UTF-8
/// as its bytes, never repaired). The three values are also read together
/// into a `Decodable` and a `@Table` struct of several types, one of them
/// JSON, against the same references.
import Foundation
import FuzzSupport
import StrongroomMacros

nonisolated(unsafe) let strict = try! Connection.inMemory()
nonisolated(unsafe) let lossless: Connection = {
    var configuration = Configuration.plaintext
    configuration.valueConversion = .lossless
    return try! Connection.inMemory(configuration: configuration)
}()

@main
struct Main {
    static func main() { FuzzMain.run(fuzz, seeds: seeds) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let db = input.choice(2) == 0 ? strict : lossless
    let probe = probes[input.choice(probes.count)]
    let values = (0..<3).map { _ in Value(&input) }
    probe.check(db, values[0])
    checkMixed(db, values)
    return 0
}

// MARK: Values

/// A column value as the input gives it, and how the query selects it.
struct Value {
    enum Kind: CaseIterable { case null, integer, real, text, rawText, blob }
    let kind: Kind
    let argument: DatabaseValue
    /// `?n` or `CAST(?n AS TEXT)`: the latter makes TEXT of any bytes.
    func expression(_ n: Int) -> String { kind == .rawText ? "CAST(?\(n) AS TEXT)" : "?\(n)" }

    init(_ input: inout FuzzInput) {
        kind = Kind.allCases[input.choice(Kind.allCases.count)]
        switch kind {
        case .null: argument = .null
        case .integer: argument = .integer(Int64(bitPattern: input.uint64()))
        case .real: argument = .real(Double(bitPattern: input.uint64()))
        case .text: argument = .text(String(decoding: input.piece(maximum: 64), as: UTF8.self))
        case .rawText, .blob: argument = .blob(input.piece(maximum: 64))
        }
    }

    /// What SQLite stores: a REAL NaN is NULL; raw text is its bytes.
    var stored: DatabaseValue {
        switch (kind, argument) {
        case (.real, .real(let d)) where d.isNaN: return .null
        case (.rawText, .blob(let bytes)):
            if let text = String(validating: bytes, as: UTF8.self) { return .text(text) }
            return .blob(bytes)
        default: return argument
        }
    }
}

// MARK: One type, every path

protocol Probe {
    associatedtype T: DatabaseValueConvertible & Decodable
    associatedtype Record: TableRecord
    associatedtype Decoded: Decodable
    static func fast(_ row: RowView) throws(StrongroomError) -> T
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> T?
    static func values(_ record: Record) -> (T, T?)
    static func values(_ decoded: Decoded) -> (T, T?)
    static func same(_ a: T, _ b: T) -> Bool
}

struct AnyProbe: Sendable {
    let check: @Sendable (Connection, Value) -> Void
    init<P: Probe>(_ probe: P.Type) { check = { db, value in checkProbe(P.self, db, value) } }
}

func checkProbe<P: Probe>(_ probe: P.Type, _ db: Connection, _ value: Value) {
    let sql = "SELECT \(value.expression(1)) AS v, \(value.expression(1)) AS o"
    let arguments = StatementArguments([value.argument])
    let what = "\(P.T.self) from \(value.kind) \(value.stored) (\(db === strict ? "strict" : "lossless"))"

    // The reference, and the fast paths, on the same row.
    var reference: Result<P.T, StrongroomError>!
    var referenceOptional: Result<P.T?, StrongroomError>!
    var viewed: Result<P.T, StrongroomError>!
    var viewedOptional: Result<P.T?, StrongroomError>!
    do {
        try db.cachedStatement(sql: sql).forEachRow(arguments: arguments) { row in
            let copy = try row.copy()
            let stored = try copy.decode(DatabaseValue.self, at: 0)
            invariant(sameValue(stored, value.stored), "\(what): the row holds \(stored)")
            invariant(sameValue(row[0], stored), "\(what): row[0] is \(row[0])")
            if case .text(let text) = value.stored {
                try row.withTextBytes(at: 0) { bytes in
                    invariant(bytes.map(Array.init) == Array(text.utf8), "\(what): withTextBytes gives other bytes")
                }
            } else if value.kind == .rawText, case .blob(let raw) = value.stored {
                try row.withTextBytes(at: 0) { bytes in
                    invariant(bytes.map(Array.init) == raw, "\(what): withTextBytes gives other bytes than the TEXT stored")
                }
            }
            reference = Result { () throws(StrongroomError) in try copy.decode(P.T.self, at: 0) }
            referenceOptional = Result { () throws(StrongroomError) in try copy.decode(P.T?.self, at: 1) }
            viewed = Result { () throws(StrongroomError) in try P.fast(row) }
            viewedOptional = Result { () throws(StrongroomError) in try P.fastOptional(row) }
        }
    } catch {
        fail("\(what): reading the row failed: \(error)")
    }
    agree(viewed, reference, P.same, "\(what): RowView.decode")
    agree(viewedOptional, referenceOptional, { sameOptional($0, $1, P.same) }, "\(what): RowView.decode (optional)")
    if value.stored.isNull {
        invariant(referenceOptional.map { $0 == nil } == .success(true), "\(what): NULL does not read as nil")
    }

    // Read as a @Table record and as a Decodable struct: both properties, or a failure.
    let expected: Result<(P.T, P.T?), StrongroomError>
    switch (reference!, referenceOptional!) {
    case (.success(let v), .success(let o)): expected = .success((v, o))
    case (.failure(let error), _), (_, .failure(let error)): expected = .failure(error)
    }
    let same = { (a: (P.T, P.T?), b: (P.T, P.T?)) in P.same(a.0, b.0) && sameOptional(a.1, b.1, P.same) }
    let record = Result { () throws(StrongroomError) in try db.fetchOne(P.Record.self, sql: sql, arguments: arguments).map(P.values) }
    agree(record.map { $0! }, expected, same, "\(what): @Table record")
    let decoded = Result { () throws(StrongroomError) in try db.fetchOne(P.Decoded.self, sql: sql, arguments: arguments).map(P.values) }
    agree(decoded.map { $0! }, expected, same, "\(what): Decodable struct")

    // A single value: NULL is nil, anything else reads as the reference.
    let single = Result { () throws(StrongroomError) in try db.fetchOne(P.T.self, sql: "SELECT \(value.expression(1))", arguments: arguments) }
    if value.stored.isNull {
        invariant(single.map { $0 == nil } == .success(true), "\(what): fetchOne of NULL is not nil")
    } else {
        agree(single.map { $0! }, reference, P.same, "\(what): fetchOne(\(P.T.self).self)")
    }

    // A value read gives itself back through its own encoding.
    if case .success(let read) = reference {
        let encoded = read.databaseValue
        guard let back = P.T.fromDatabaseValue(encoded) else {
            fail("\(what): \(read) encodes as \(encoded), which does not read back")
        }
        invariant(roundTrips(read, back, P.same), "\(what): \(read) encodes as \(encoded), which reads back as \(back)")
    }
}

/// `actual` is what `expected` is: the same value, or a failure too.
func agree<T>(_ actual: Result<T, StrongroomError>, _ expected: Result<T, StrongroomError>, _ same: (T, T) -> Bool, _ what: String) {
    switch (actual, expected) {
    case (.success(let a), .success(let b)):
        invariant(same(a, b), "\(what) gives \(a), Row.decode gives \(b)")
    case (.failure, .failure):
        break
    case (.success(let a), .failure(let error)):
        fail("\(what) gives \(a), Row.decode fails: \(error.message)")
    case (.failure(let error), .success(let b)):
        fail("\(what) fails (\(error.message)), Row.decode gives \(b)")
    }
}

func sameOptional<T>(_ a: T?, _ b: T?, _ same: (T, T) -> Bool) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (let a?, let b?): return same(a, b)
    default: return false
    }
}

/// Equal, or for a `Date` the same to the millisecond (what its text keeps).
func roundTrips<T>(_ read: T, _ back: T, _ same: (T, T) -> Bool) -> Bool {
    if let read = read as? Date, let back = back as? Date {
        let a = read.timeIntervalSince1970, b = back.timeIntervalSince1970
        return same(read as! T, back as! T) || abs(a - b) < 0.001
    }
    return same(read, back)
}

/// The same value: same type and bytes (REAL by its bits, TEXT by its UTF-8).
func sameValue(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.integer(let x), .integer(let y)): return x == y
    case (.real(let x), .real(let y)): return x.bitPattern == y.bitPattern
    case (.text(let x), .text(let y)): return Array(x.utf8) == Array(y.utf8)
    case (.blob(let x), .blob(let y)): return x == y
    default: return false
    }
}

extension Probe where T: Equatable {
    static func same(_ a: T, _ b: T) -> Bool { a == b }
}

// MARK: The probes: each type, as a @Table record and a Decodable struct

enum Genre: String, DatabaseValueConvertible, Decodable { case rock, jazz, métal }
enum Level: Int, DatabaseValueConvertible, Decodable { case low = 1, high = 9 }

@Table("probe") struct Int64Record { var v: Int64; var o: Int64? }
@Table("probe") struct IntRecord { var v: Int; var o: Int? }
@Table("probe") struct Int32Record { var v: Int32; var o: Int32? }
@Table("probe") struct Int8Record { var v: Int8; var o: Int8? }
@Table("probe") struct UInt8Record { var v: UInt8; var o: UInt8? }
@Table("probe") struct UInt32Record { var v: UInt32; var o: UInt32? }
@Table("probe") struct BoolRecord { var v: Bool; var o: Bool? }
@Table("probe") struct DoubleRecord { var v: Double; var o: Double? }
@Table("probe") struct FloatRecord { var v: Float; var o: Float? }
@Table("probe") struct StringRecord { var v: String; var o: String? }
@Table("probe") struct DataRecord { var v: Data; var o: Data? }
@Table("probe") struct BytesRecord { var v: [UInt8]; var o: [UInt8]? }
@Table("probe") struct DateRecord { var v: Date; var o: Date? }
@Table("probe") struct UUIDRecord { var v: UUID; var o: UUID? }
@Table("probe") struct GenreRecord { @Column(type: "TEXT") var v: Genre; @Column(type: "TEXT") var o: Genre? }
@Table("probe") struct LevelRecord { @Column(type: "INTEGER") var v: Level; @Column(type: "INTEGER") var o: Level? }

struct Int64Row: Decodable { var v: Int64; var o: Int64? }
struct IntRow: Decodable { var v: Int; var o: Int? }
struct Int32Row: Decodable { var v: Int32; var o: Int32? }
struct Int8Row: Decodable { var v: Int8; var o: Int8? }
struct UInt8Row: Decodable { var v: UInt8; var o: UInt8? }
struct UInt32Row: Decodable { var v: UInt32; var o: UInt32? }
struct BoolRow: Decodable { var v: Bool; var o: Bool? }
struct DoubleRow: Decodable { var v: Double; var o: Double? }
struct FloatRow: Decodable { var v: Float; var o: Float? }
struct StringRow: Decodable { var v: String; var o: String? }
struct DataRow: Decodable { var v: Data; var o: Data? }
struct BytesRow: Decodable { var v: [UInt8]; var o: [UInt8]? }
struct DateRow: Decodable { var v: Date; var o: Date? }
struct UUIDRow: Decodable { var v: UUID; var o: UUID? }
struct GenreRow: Decodable { var v: Genre; var o: Genre? }
struct LevelRow: Decodable { var v: Level; var o: Level? }

enum Int64Probe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> Int64 { try row.decode(Int64.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> Int64? { try row.decode(Int64?.self, at: 1) }
    static func values(_ r: Int64Record) -> (Int64, Int64?) { (r.v, r.o) }
    static func values(_ r: Int64Row) -> (Int64, Int64?) { (r.v, r.o) }
}
enum IntProbe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> Int { try row.decode(Int.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> Int? { try row.decode(Int?.self, at: 1) }
    static func values(_ r: IntRecord) -> (Int, Int?) { (r.v, r.o) }
    static func values(_ r: IntRow) -> (Int, Int?) { (r.v, r.o) }
}
enum Int32Probe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> Int32 { try row.decode(Int32.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> Int32? { try row.decode(Int32?.self, at: 1) }
    static func values(_ r: Int32Record) -> (Int32, Int32?) { (r.v, r.o) }
    static func values(_ r: Int32Row) -> (Int32, Int32?) { (r.v, r.o) }
}
enum Int8Probe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> Int8 { try row.decode(Int8.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> Int8? { try row.decode(Int8?.self, at: 1) }
    static func values(_ r: Int8Record) -> (Int8, Int8?) { (r.v, r.o) }
    static func values(_ r: Int8Row) -> (Int8, Int8?) { (r.v, r.o) }
}
enum UInt8Probe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> UInt8 { try row.decode(UInt8.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> UInt8? { try row.decode(UInt8?.self, at: 1) }
    static func values(_ r: UInt8Record) -> (UInt8, UInt8?) { (r.v, r.o) }
    static func values(_ r: UInt8Row) -> (UInt8, UInt8?) { (r.v, r.o) }
}
enum UInt32Probe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> UInt32 { try row.decode(UInt32.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> UInt32? { try row.decode(UInt32?.self, at: 1) }
    static func values(_ r: UInt32Record) -> (UInt32, UInt32?) { (r.v, r.o) }
    static func values(_ r: UInt32Row) -> (UInt32, UInt32?) { (r.v, r.o) }
}
enum BoolProbe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> Bool { try row.decode(Bool.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> Bool? { try row.decode(Bool?.self, at: 1) }
    static func values(_ r: BoolRecord) -> (Bool, Bool?) { (r.v, r.o) }
    static func values(_ r: BoolRow) -> (Bool, Bool?) { (r.v, r.o) }
}
enum DoubleProbe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> Double { try row.decode(Double.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> Double? { try row.decode(Double?.self, at: 1) }
    static func values(_ r: DoubleRecord) -> (Double, Double?) { (r.v, r.o) }
    static func values(_ r: DoubleRow) -> (Double, Double?) { (r.v, r.o) }
    static func same(_ a: Double, _ b: Double) -> Bool { a.bitPattern == b.bitPattern }
}
enum FloatProbe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> Float { try row.decode(Float.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> Float? { try row.decode(Float?.self, at: 1) }
    static func values(_ r: FloatRecord) -> (Float, Float?) { (r.v, r.o) }
    static func values(_ r: FloatRow) -> (Float, Float?) { (r.v, r.o) }
    static func same(_ a: Float, _ b: Float) -> Bool { a.bitPattern == b.bitPattern }
}
enum StringProbe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> String { try row.decode(String.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> String? { try row.decode(String?.self, at: 1) }
    static func values(_ r: StringRecord) -> (String, String?) { (r.v, r.o) }
    static func values(_ r: StringRow) -> (String, String?) { (r.v, r.o) }
    static func same(_ a: String, _ b: String) -> Bool { Array(a.utf8) == Array(b.utf8) }
}
enum DataProbe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> Data { try row.decode(Data.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> Data? { try row.decode(Data?.self, at: 1) }
    static func values(_ r: DataRecord) -> (Data, Data?) { (r.v, r.o) }
    static func values(_ r: DataRow) -> (Data, Data?) { (r.v, r.o) }
}
enum BytesProbe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> [UInt8] { try row.decode([UInt8].self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> [UInt8]? { try row.decode([UInt8]?.self, at: 1) }
    static func values(_ r: BytesRecord) -> ([UInt8], [UInt8]?) { (r.v, r.o) }
    static func values(_ r: BytesRow) -> ([UInt8], [UInt8]?) { (r.v, r.o) }
}
enum DateProbe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> Date { try row.decode(Date.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> Date? { try row.decode(Date?.self, at: 1) }
    static func values(_ r: DateRecord) -> (Date, Date?) { (r.v, r.o) }
    static func values(_ r: DateRow) -> (Date, Date?) { (r.v, r.o) }
    static func same(_ a: Date, _ b: Date) -> Bool { a.timeIntervalSince1970.bitPattern == b.timeIntervalSince1970.bitPattern }
}
enum UUIDProbe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> UUID { try row.decode(UUID.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> UUID? { try row.decode(UUID?.self, at: 1) }
    static func values(_ r: UUIDRecord) -> (UUID, UUID?) { (r.v, r.o) }
    static func values(_ r: UUIDRow) -> (UUID, UUID?) { (r.v, r.o) }
}
enum GenreProbe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> Genre { try row.decode(Genre.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> Genre? { try row.decode(Genre?.self, at: 1) }
    static func values(_ r: GenreRecord) -> (Genre, Genre?) { (r.v, r.o) }
    static func values(_ r: GenreRow) -> (Genre, Genre?) { (r.v, r.o) }
}
enum LevelProbe: Probe {
    static func fast(_ row: RowView) throws(StrongroomError) -> Level { try row.decode(Level.self, at: 0) }
    static func fastOptional(_ row: RowView) throws(StrongroomError) -> Level? { try row.decode(Level?.self, at: 1) }
    static func values(_ r: LevelRecord) -> (Level, Level?) { (r.v, r.o) }
    static func values(_ r: LevelRow) -> (Level, Level?) { (r.v, r.o) }
}

let probes: [AnyProbe] = [
    AnyProbe(Int64Probe.self), AnyProbe(IntProbe.self), AnyProbe(Int32Probe.self), AnyProbe(Int8Probe.self),
    AnyProbe(UInt8Probe.self), AnyProbe(UInt32Probe.self), AnyProbe(BoolProbe.self), AnyProbe(DoubleProbe.self),
    AnyProbe(FloatProbe.self), AnyProbe(StringProbe.self), AnyProbe(DataProbe.self), AnyProbe(BytesProbe.self),
    AnyProbe(DateProbe.self), AnyProbe(UUIDProbe.self), AnyProbe(GenreProbe.self), AnyProbe(LevelProbe.self),
]

// MARK: Several types in one row

struct Nested: Codable, Equatable { var x: Int?; var tags: [String]? }

struct MixedRow: Decodable { var i: Int64?; var s: String?; var d: Data?; var r: Double?; var b: Bool?; var u: UInt64?; var j: Nested? }
@Table("mixed") struct MixedRecord { var i: Int64?; var s: String?; var d: Data?; var r: Double?; var b: Bool? }

func checkMixed(_ db: Connection, _ values: [Value]) {
    let columns = [("i", 0), ("s", 1), ("d", 2), ("r", 0), ("b", 1), ("u", 2), ("j", 1)]
    let sql = "SELECT " + columns.map { "\(values[$0.1].expression($0.1 + 1)) AS \($0.0)" }.joined(separator: ", ")
    let arguments = StatementArguments(values.map(\.argument))
    let what = "a row of \(values.map { "\($0.kind) \($0.stored)" }) (\(db === strict ? "strict" : "lossless"))"
    guard let row = try? db.fetchOne(sql: sql, arguments: arguments) else { fail("\(what): no row") }

    // The references, property by property.
    func ref<T: DatabaseValueConvertible>(_ type: T.Type, _ index: Int) -> Result<T?, StrongroomError> {
        Result { () throws(StrongroomError) in try row.decode(T?.self, at: index) }
    }
    let i = ref(Int64.self, 0), s = ref(String.self, 1), d = ref(Data.self, 2), r = ref(Double.self, 3), b = ref(Bool.self, 4)
    // UInt64 is read as an Int64 in range; JSON from the text.
    let u = ref(Int64.self, 5).flatMap { n -> Result<UInt64?, StrongroomError> in
        guard let n else { return .success(nil) }
        guard let unsigned = UInt64(exactly: n) else { return .failure(StrongroomError(.conversion, "negative")) }
        return .success(unsigned)
    }
    let j = ref(String.self, 6).flatMap { text -> Result<Nested?, StrongroomError> in
        guard let text else { return .success(nil) }
        guard let nested = try? JSONDecoder().decode(Nested.self, from: Data(text.utf8)) else { return .failure(StrongroomError(.conversion, "not JSON")) }
        return .success(nested)
    }

    let record = Result { () throws(StrongroomError) in try db.fetchOne(MixedRecord.self, sql: sql, arguments: arguments)! }
    let recordExpected = Result { () throws(StrongroomError) in (try i.get(), try s.get(), try d.get(), try r.get(), try b.get()) }
    switch (record, recordExpected) {
    case (.success(let got), .success(let want)):
        invariant(got.i == want.0 && sameBytes(got.s, want.1) && got.d == want.2 && got.r?.bitPattern == want.3?.bitPattern && got.b == want.4,
                  "\(what): the @Table record reads \(got), the references \(want)")
    case (.failure, .failure): break
    case (.success(let got), .failure(let error)): fail("\(what): the @Table record reads \(got), a reference fails: \(error.message)")
    case (.failure(let error), .success(let want)): fail("\(what): the @Table record fails (\(error.message)), the references read \(want)")
    }

    let decoded = Result { () throws(StrongroomError) in try db.fetchOne(MixedRow.self, sql: sql, arguments: arguments)! }
    let decodedExpected = Result { () throws(StrongroomError) in (try i.get(), try s.get(), try d.get(), try r.get(), try b.get(), try u.get(), try j.get()) }
    switch (decoded, decodedExpected) {
    case (.success(let got), .success(let want)):
        invariant(got.i == want.0 && sameBytes(got.s, want.1) && got.d == want.2 && got.r?.bitPattern == want.3?.bitPattern && got.b == want.4
                  && got.u == want.5 && got.j == want.6,
                  "\(what): the Decodable struct reads \(got), the references \(want)")
    case (.failure, .failure): break
    case (.success(let got), .failure(let error)): fail("\(what): the Decodable struct reads \(got), a reference fails: \(error.message)")
    case (.failure(let error), .success(let want)): fail("\(what): the Decodable struct fails (\(error.message)), the references read \(want)")
    }
}

func sameBytes(_ a: String?, _ b: String?) -> Bool { a.map { Array($0.utf8) } == b.map { Array($0.utf8) } }

// MARK: Seeds

/// One input per type and kind of value: a policy byte, a type, then three values.
func seeds() -> [(name: String, bytes: [UInt8])] {
    let values: [(String, [UInt8])] = [
        ("null", [0]),
        ("integer", [1, 0, 0, 0, 0, 0, 0, 0, 42]),
        ("integer-max", [1, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        ("real", [2] + withUnsafeBytes(of: (2.5).bitPattern.bigEndian, Array.init)),
        ("real-integral", [2] + withUnsafeBytes(of: (7.0).bitPattern.bigEndian, Array.init)),
        ("text-number", [3, 2] + Array("42".utf8)),
        ("text-date", [3, 23] + Array("2024-02-29 12:34:56.789".utf8)),
        ("text-uuid", [3, 36] + Array("E621E1F8-C36C-495A-93FC-0C247A3E6E5F".utf8)),
        ("text-json", [3, 20] + Array("{\"x\":1,\"tags\":[\"a\"]}".utf8)),
        ("text-enum", [3, 4] + Array("jazz".utf8)),
        ("raw-text-invalid", [4, 3, 0x61, 0xFF, 0x62]),
        ("blob", [5, 4, 0, 1, 2, 255]),
    ]
    var out: [(name: String, bytes: [UInt8])] = []
    for (index, probe) in ["int64", "int", "int32", "int8", "uint8", "uint32", "bool", "double", "float", "string", "data", "bytes", "date", "uuid", "genre", "level"].enumerated() {
        for (policy, (label, value)) in values.enumerated() {
            let rest = values[(policy + 1) % values.count].1 + values[(policy + 5) % values.count].1
            out.append(("\(probe)-\(label)", [UInt8(policy % 2), UInt8(index)] + value + rest))
        }
    }
    return out
}
