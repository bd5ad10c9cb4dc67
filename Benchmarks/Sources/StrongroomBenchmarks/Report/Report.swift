import Foundation

/// Everything one run measured: written as `report.json` (every sample),
/// `report.md` (tables) and `report.svg` (charts).
struct Report: Codable, Sendable {
    var environment: Environment
    /// The command line's settings: rows, rounds, quick.
    var settings: [String: String]
    var workloads: [WorkloadResult]
    /// The same workloads on another SQLCipher engine, when the run was given its report.
    var engines: EngineComparison?

    /// Writes the three files into `directory` (created if needed).
    func write(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        try encoder.encode(self).write(to: URL(fileURLWithPath: "\(directory)/report.json"))
        try Data(MarkdownReport(report: self).text.utf8).write(to: URL(fileURLWithPath: "\(directory)/report.md"))
        try Data(SVGReport(report: self).text.utf8).write(to: URL(fileURLWithPath: "\(directory)/report.svg"))
    }
}

/// Formats a measure in its unit.
func formatted(_ value: Double, unit: String) -> String {
    guard value.isFinite else { return "–" }
    // Scaled by its size, not its sign: -9.17 ms, not -9170000 ns.
    if value < 0 { return "-" + formatted(-value, unit: unit) }
    if unit != "s" { return String(format: value >= 100 ? "%.0f %@" : "%.3g %@", value, unit) }
    if value >= 1 { return String(format: "%.3f s", value) }
    if value >= 1e-3 { return String(format: "%.2f ms", value * 1e3) }
    if value >= 1e-6 { return String(format: "%.1f µs", value * 1e6) }
    return String(format: "%.0f ns", value * 1e9)
}

/// Formats a row count: 10k, 1M.
func formattedSize(_ size: Int) -> String {
    if size >= 1_000_000 && size % 1_000_000 == 0 { return "\(size / 1_000_000)M" }
    if size >= 1000 && size % 1000 == 0 { return "\(size / 1000)k" }
    return "\(size)"
}
