import Foundation

/// The samples of one contender in one workload, in seconds (or in the
/// workload's unit), with their median, minimum and maximum.
struct Samples: Codable, Sendable {
    private(set) var values: [Double] = []

    mutating func add(_ value: Double) { values.append(value) }

    var median: Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
    var minimum: Double { values.min() ?? .nan }
    var maximum: Double { values.max() ?? .nan }

    enum CodingKeys: String, CodingKey { case values, median, minimum, maximum }
    init() {}
    init(from decoder: any Decoder) throws {
        values = try decoder.container(keyedBy: CodingKeys.self).decode([Double].self, forKey: .values)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(values, forKey: .values)
        try container.encode(median, forKey: .median)
        try container.encode(minimum, forKey: .minimum)
        try container.encode(maximum, forKey: .maximum)
    }
}

/// Who runs a workload: the same loop in C, Strongroom, the peer library,
/// or another tool (the `sqlcipher` shell, `openssl speed`, a variant).
enum Role: String, Codable, Sendable {
    case c = "C"
    case ours = "Strongroom"
    case peer = "GRDB"
    case tool
}

/// One contender of a workload: a name and a run that returns its measure.
struct Contender {
    let name: String
    let role: Role
    /// The C loop on this contender's engine, when it is not "C" (GRDB's
    /// side runs on the system's plaintext SQLite, and has its own C loop).
    var ownC: String? = nil
    let run: () throws -> Double

    init(name: String, role: Role, ownC: String? = nil, run: @escaping () throws -> Double) {
        self.name = name
        self.role = role
        self.ownC = ownC
        self.run = run
    }
}

/// A target a workload's figures must meet.
struct Target: Codable, Sendable {
    enum Kind: String, Codable, Sendable {
        /// `contender / against` (medians) at most `limit`.
        case ratioAtMost
        /// `against / contender` (medians) at least `limit`: a speed-up.
        case speedUpAtLeast
        /// `contender`'s median at most `limit` (in the workload's unit).
        case valueAtMost
        /// `contender`'s instructions per unit over `against`'s at most `limit`.
        case instructionRatioAtMost
        /// What `contender` adds to its own C loop's median, below what
        /// `against` adds to its own: one layer's overhead below another's,
        /// each over the same C loop on its own engine.
        case overheadBelow
        /// The same in instructions per unit.
        case instructionOverheadBelow
        /// `contender / against` (medians) at least `limit`: for a measure
        /// where higher is better (a throughput).
        case ratioAtLeast
        /// `contender`'s p99 latency over `against`'s at most `limit` (the
        /// workload's `latencies`).
        case p99RatioAtMost
    }
    let kind: Kind
    let contender: String
    let against: String?
    let limit: Double
    /// Filled when the report is made.
    var achieved: Double = .nan
    var met = false
    /// For the overhead targets: what `against` adds to its own C
    /// (`achieved` is what `contender` adds to its own).
    var compared: Double? = nil

    static func ratio(_ contender: String, to against: String, atMost limit: Double) -> Target {
        Target(kind: .ratioAtMost, contender: contender, against: against, limit: limit)
    }
    /// `contender`'s median at least `limit` times `against`'s: a throughput.
    static func ratio(_ contender: String, to against: String, atLeast limit: Double) -> Target {
        Target(kind: .ratioAtLeast, contender: contender, against: against, limit: limit)
    }
    /// `contender`'s p99 latency at most `limit` times `against`'s.
    static func p99(_ contender: String, to against: String, atMost limit: Double) -> Target {
        Target(kind: .p99RatioAtMost, contender: contender, against: against, limit: limit)
    }
    static func speedUp(_ contender: String, over against: String, atLeast limit: Double) -> Target {
        Target(kind: .speedUpAtLeast, contender: contender, against: against, limit: limit)
    }
    static func value(_ contender: String, atMost limit: Double) -> Target {
        Target(kind: .valueAtMost, contender: contender, against: nil, limit: limit)
    }
    static func instructions(_ contender: String, to against: String, atMost limit: Double) -> Target {
        Target(kind: .instructionRatioAtMost, contender: contender, against: against, limit: limit)
    }
    /// What `contender` adds to its own C loop, in time, below what `other`
    /// adds to its own (`limit` is unused: the comparison is the target).
    static func overhead(_ contender: String, below other: String) -> Target {
        Target(kind: .overheadBelow, contender: contender, against: other, limit: 1)
    }
    /// The same in instructions.
    static func instructionOverhead(_ contender: String, below other: String) -> Target {
        Target(kind: .instructionOverheadBelow, contender: contender, against: other, limit: 1)
    }

    var summary: String {
        switch kind {
        case .ratioAtMost: String(format: "%@ ≤ %.2fx of %@", contender, limit, against ?? "")
        case .speedUpAtLeast: String(format: "%@ ≥ %.1fx faster than %@", contender, limit, against ?? "")
        case .valueAtMost: String(format: "%@ ≤ %g", contender, limit)
        case .instructionRatioAtMost: String(format: "%@ ≤ %.2fx of %@, in instructions", contender, limit, against ?? "")
        case .overheadBelow: "\(contender) adds less to its C than \(against ?? "")"
        case .instructionOverheadBelow: "\(contender) adds less to its C than \(against ?? ""), in instructions"
        case .ratioAtLeast: String(format: "%@ ≥ %.2fx of %@", contender, limit, against ?? "")
        case .p99RatioAtMost: String(format: "%@'s p99 latency ≤ %.2fx of %@'s", contender, limit, against ?? "")
        }
    }
}

/// One contender's latencies per operation, in microseconds: over all
/// operations, and reads and writes apart where the workload has both.
struct Latencies: Codable, Sendable, Equatable {
    var p50: Double
    var p99: Double
    var readP50: Double? = nil
    var readP99: Double? = nil
    var writeP50: Double? = nil
    var writeP99: Double? = nil
    /// The 99.9th percentile, where the workload gives it (the service's, from wrk).
    var p999: Double? = nil

    /// Each figure the median of the runs' (nil when there are none).
    init?(medianOf runs: [Latencies]) {
        guard !runs.isEmpty else { return nil }
        func median(_ figure: (Latencies) -> Double?) -> Double? {
            var samples = Samples()
            runs.compactMap(figure).forEach { samples.add($0) }
            return samples.values.isEmpty ? nil : samples.median
        }
        self.init(p50: median(\.p50) ?? .nan, p99: median(\.p99) ?? .nan, readP50: median(\.readP50), readP99: median(\.readP99),
                  writeP50: median(\.writeP50), writeP99: median(\.writeP99), p999: median(\.p999))
    }

    init(p50: Double, p99: Double, readP50: Double? = nil, readP99: Double? = nil, writeP50: Double? = nil, writeP99: Double? = nil,
         p999: Double? = nil) {
        (self.p50, self.p99, self.readP50, self.readP99, self.writeP50, self.writeP99) = (p50, p99, readP50, readP99, writeP50, writeP99)
        self.p999 = p999
    }
}

/// What one contender measured.
struct ContenderResult: Codable, Sendable {
    let name: String
    let role: Role
    var samples: Samples
    /// The C loop on this contender's engine, when it is not "C".
    var ownC: String? = nil
}

/// One workload at one size: every contender's samples, the ratios to C
/// and to the peer, and the targets.
struct WorkloadResult: Codable, Sendable {
    let name: String
    /// Workloads that share a group are charted together.
    let group: String
    /// Rows (or values, files, seconds) the workload handles.
    let size: Int
    /// "s" unless stated (e.g. "ms", "tx/s").
    var unit = "s"
    /// Lower is better (times), or higher (throughput).
    var lowerIsBetter = true
    var contenders: [ContenderResult]
    var targets: [Target] = []
    /// Figures that are not samples (counts of lost writes, percentiles).
    var figures: [String: Double] = [:]
    var notes: [String] = []
    /// Instructions per row (or per lookup), by contender: counted by
    /// callgrind in a full run, nil in a quick one.
    var instructions: [String: Double]? = nil
    /// Latencies per operation, by contender (in microseconds): workloads
    /// that time every operation (the async pool); nil elsewhere.
    var latencies: [String: Latencies]? = nil

    func contender(_ name: String) -> ContenderResult? { contenders.first { $0.name == name } }

    /// The name of the C loop on `name`'s engine ("C" unless it has its own).
    func ownC(of name: String) -> String { contender(name)?.ownC ?? "C" }

    /// `name`'s median over its own C loop's (on its engine).
    func ratioToOwnC(_ name: String) -> Double? { ratio(name, to: ownC(of: name)) }

    /// What `name` adds to its own C loop (median minus median): a layer's
    /// overhead. A difference, not a ratio: our C loop also decrypts pages
    /// and GRDB's does not, and a ratio over the larger C would hide a larger layer.
    func overOwnC(_ name: String) -> Double? {
        guard let a = contender(name)?.samples.median, let c = contender(ownC(of: name))?.samples.median else { return nil }
        return a - c
    }

    /// The instructions per unit `name` adds to its own C loop's.
    func instructionsOverOwnC(_ name: String) -> Double? {
        guard let a = instructions?[name], let c = instructions?[ownC(of: name)] else { return nil }
        return a - c
    }

    /// `name`'s instructions per unit over `other`'s.
    func instructionRatio(_ name: String, to other: String) -> Double? {
        guard let a = instructions?[name], let b = instructions?[other], b > 0 else { return nil }
        return a / b
    }

    /// `name`'s instructions per unit over its own C loop's.
    func instructionRatioToOwnC(_ name: String) -> Double? { instructionRatio(name, to: ownC(of: name)) }

    /// The same loop in C that ratios are given against (other C variants,
    /// such as "C owning text", are contenders like any other).
    var c: ContenderResult? { contender("C") }

    /// `name`'s p99 latency over `other`'s.
    func p99Ratio(_ name: String, to other: String) -> Double? {
        guard let a = latencies?[name]?.p99, let b = latencies?[other]?.p99, a.isFinite, b > 0 else { return nil }
        return a / b
    }

    /// `name`'s median over `other`'s median.
    func ratio(_ name: String, to other: String) -> Double? {
        guard let a = contender(name)?.samples.median, let b = contender(other)?.samples.median, b > 0 else { return nil }
        return a / b
    }

    /// The median of `name`'s ratios to `other` round by round (the
    /// samples are recorded in round order, every contender once a round);
    /// nil when their rounds differ in number or a ratio cannot be taken.
    func pairedRatio(_ name: String, to other: String) -> Double? {
        guard let a = contender(name)?.samples.values, let b = contender(other)?.samples.values,
              !a.isEmpty, a.count == b.count, b.allSatisfy({ $0 > 0 }) else { return nil }
        var ratios = Samples()
        zip(a, b).forEach { ratios.add($0 / $1) }
        return ratios.median
    }

    /// `name`'s minimum over `other`'s minimum.
    func ratioOfMinimums(_ name: String, to other: String) -> Double? {
        guard let a = contender(name)?.samples.minimum, let b = contender(other)?.samples.minimum, a.isFinite, b > 0 else { return nil }
        return a / b
    }

    /// Evaluates the targets on the medians.
    mutating func evaluateTargets() {
        for i in targets.indices {
            let target = targets[i]
            switch target.kind {
            case .ratioAtMost:
                let r = ratio(target.contender, to: target.against ?? "") ?? .nan
                targets[i].achieved = r
                targets[i].met = r <= target.limit
            case .ratioAtLeast:
                let r = ratio(target.contender, to: target.against ?? "") ?? .nan
                targets[i].achieved = r
                targets[i].met = r >= target.limit
            case .p99RatioAtMost:
                let r = p99Ratio(target.contender, to: target.against ?? "") ?? .nan
                targets[i].achieved = r
                targets[i].met = r <= target.limit
            case .speedUpAtLeast:
                let r = ratio(target.against ?? "", to: target.contender) ?? .nan
                targets[i].achieved = r
                targets[i].met = r >= target.limit
            case .valueAtMost:
                let v = figures[target.contender] ?? contender(target.contender)?.samples.median ?? .nan
                targets[i].achieved = v
                targets[i].met = v <= target.limit
            case .instructionRatioAtMost:
                let r = instructionRatio(target.contender, to: target.against ?? "") ?? .nan
                targets[i].achieved = r
                targets[i].met = r <= target.limit
            case .overheadBelow, .instructionOverheadBelow:
                let inTime = target.kind == .overheadBelow
                let ours = (inTime ? overOwnC(target.contender) : instructionsOverOwnC(target.contender)) ?? .nan
                let theirs = (inTime ? overOwnC(target.against ?? "") : instructionsOverOwnC(target.against ?? "")) ?? .nan
                targets[i].achieved = ours
                targets[i].compared = theirs
                targets[i].met = ours < theirs
            }
        }
    }
}
