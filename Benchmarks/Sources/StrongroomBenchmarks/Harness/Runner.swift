import Foundation

/// Runs workloads the same way for every contender: one warm-up round
/// (not recorded), then `rounds` rounds in which every contender runs once,
/// in an order rotated each round and reversed every other round (A B C,
/// C B A, B C A, B A C, …), so that no contender always runs first, last,
/// or after the same neighbour. Progress goes to standard error.
struct Runner {
    let rounds: Int
    let warmUp: Bool
    private(set) var results: [WorkloadResult] = []
    private let started = DispatchTime.now().uptimeNanoseconds

    init(rounds: Int, warmUp: Bool) {
        self.rounds = max(rounds, 1)
        self.warmUp = warmUp
    }

    /// Measures `contenders` as one workload; `figures` adds figures derived
    /// from the samples (which targets may name) before the targets are evaluated.
    @discardableResult
    mutating func measure(_ name: String, group: String, size: Int, unit: String = "s", lowerIsBetter: Bool = true,
                          targets: [Target] = [], notes: [String] = [], rounds: Int? = nil,
                          _ contenders: [Contender], figures: (inout WorkloadResult) -> Void = { _ in }) throws -> WorkloadResult {
        progress("\(name) (\(size))")
        var results = contenders.map { ContenderResult(name: $0.name, role: $0.role, samples: Samples(), ownC: $0.ownC) }
        if warmUp {
            for contender in contenders { _ = try contender.run() }
        }
        let count = rounds ?? self.rounds
        for round in 0..<count {
            for i in 0..<contenders.count {
                let rotated = (i + round / 2) % contenders.count
                let index = round % 2 == 0 ? rotated : contenders.count - 1 - rotated
                results[index].samples.add(try contenders[index].run())
            }
        }
        var result = WorkloadResult(name: name, group: group, size: size, unit: unit, lowerIsBetter: lowerIsBetter,
                                    contenders: results, targets: targets, notes: notes)
        figures(&result)
        result.evaluateTargets()
        self.results.append(result)
        return result
    }

    /// A workload measured elsewhere (its own loop of rounds): recorded as is.
    mutating func record(_ result: WorkloadResult) {
        var result = result
        result.evaluateTargets()
        progress("\(result.name) (\(result.size))")
        results.append(result)
    }

    func progress(_ message: String) {
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        FileHandle.standardError.write(Data(String(format: "[%6.1f s] %@\n", elapsed, message).utf8))
    }
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}
