import Foundation

/// `report.svg`: bars per workload and contender with their ratios to C
/// and to GRDB labelled, then log-log growth charts (time against rows)
/// for the workloads measured at several sizes.
struct SVGReport {
    let report: Report

    private static let width = 980.0
    private static let labelWidth = 250.0
    private static let barSpace = 420.0

    /// A colour per contender: grey for C, blues for ours, oranges for
    /// GRDB, green for tools, in the order they come.
    private struct Colors {
        static let ours = ["#1f5fa8", "#4f8fd8", "#86b6ea", "#0b3d73", "#9fc5f0", "#2a7abf"]
        static let peers = ["#d9822b", "#f0a85a", "#b35c00"]
        var oursUsed = 0, peersUsed = 0

        mutating func next(for role: Role) -> String {
            switch role {
            case .c: return "#777"
            case .tool: return "#4a9a5a"
            case .peer: defer { peersUsed += 1 }; return Self.peers[peersUsed % Self.peers.count]
            case .ours: defer { oursUsed += 1 }; return Self.ours[oursUsed % Self.ours.count]
            }
        }
    }

    var text: String {
        var body: [String] = []
        var y = 20.0
        let e = report.environment
        body.append(text(10, y, "Strongroom benchmark report, \(e.date.prefix(10)): \(e.cpuModel), \(e.cores) cores, \(e.memoryGiB) GiB, \(e.diskKind)", size: 14, weight: "bold"))
        y += 18
        body.append(text(10, y, "SQLCipher \(e.sqlcipher) / SQLite \(e.sqlcipherSQLite); GRDB on system SQLite \(e.systemSQLite); medians, bars scaled per workload; lower is faster unless marked higher is better", size: 11, fill: "#555"))
        y += 16

        // Bars: the largest size of each workload.
        var largest: [String: WorkloadResult] = [:]
        var order: [String] = []
        for w in report.workloads {
            if largest[w.name] == nil { order.append(w.name) }
            if largest[w.name].map({ $0.size <= w.size }) ?? true { largest[w.name] = w }
        }
        for name in order {
            guard let w = largest[name] else { continue }
            y += 18
            body.append(text(10, y, "\(w.name) (\(formattedSize(w.size)))\(w.lowerIsBetter ? "" : ", higher is better")", size: 12, weight: "bold"))
            let scale = w.contenders.map { $0.samples.median }.filter(\.isFinite).max() ?? 1
            // Shorter bars where the labels also carry latencies, so that they fit.
            let barSpace = w.latencies == nil ? Self.barSpace : Self.barSpace - 160
            let c = w.c
            var colors = Colors()
            for r in w.contenders {
                y += 16
                let color = colors.next(for: r.role)
                let length = r.samples.median.isFinite && scale > 0 ? max(1, r.samples.median / scale * barSpace) : 1
                body.append(text(Self.labelWidth - 6, y, r.name, size: 11, anchor: "end"))
                body.append("<rect x=\"\(Self.labelWidth)\" y=\"\(y - 10)\" width=\"\(String(format: "%.1f", length))\" height=\"12\" fill=\"\(color)\"/>")
                var label = formatted(r.samples.median, unit: w.unit)
                if let c, r.name != c.name { label += String(format: "  %.2fx C", r.samples.median / c.samples.median) }
                if r.role == .ours, w.contenders.contains(where: { $0.role == .peer }) {
                    label += String(format: "  %.2fx GRDB", r.samples.median / w.peerMedian(like: r))
                }
                // Where each operation was timed (the async pool): its p99, and ours over GRDB's.
                if let p99 = w.latencies?[r.name]?.p99 {
                    label += "  p99 \(formatted(p99 / 1e6, unit: "s"))"
                    if r.role == .ours, let ratio = w.peer(like: r).flatMap({ w.p99Ratio(r.name, to: $0.name) }) {
                        label += String(format: " (%.2fx GRDB)", ratio)
                    }
                }
                body.append(text(Self.labelWidth + length + 6, y, label, size: 11))
            }
            y += 6
        }

        // Growth: workloads measured at several sizes, log-log.
        let grown = order.filter { name in Set(report.workloads.filter { $0.name == name }.map(\.size)).count > 1 }
        if !grown.isEmpty {
            y += 30
            body.append(text(10, y, "Growth: median time against rows (log-log)", size: 13, weight: "bold"))
            y += 10
            let panelWidth = 300.0, panelHeight = 220.0
            for (i, name) in grown.enumerated() {
                let x0 = 20 + Double(i % 3) * (panelWidth + 25)
                let y0 = y + Double(i / 3) * (panelHeight + 60)
                body.append(contentsOf: growthPanel(name: name, x: x0, y: y0, width: panelWidth, height: panelHeight))
            }
            y += Double((grown.count + 2) / 3) * (panelHeight + 60)
        }
        let height = y + 20
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width))" height="\(Int(height))" viewBox="0 0 \(Int(Self.width)) \(Int(height))" font-family="sans-serif">
            <rect width="100%" height="100%" fill="white"/>
            \(body.joined(separator: "\n"))
            </svg>

            """
    }

    private func growthPanel(name: String, x: Double, y: Double, width: Double, height: Double) -> [String] {
        let runs = report.workloads.filter { $0.name == name }.sorted { $0.size < $1.size }
        var series: [String: [(Double, Double)]] = [:]
        var roles: [String: Role] = [:]
        var names: [String] = []
        for w in runs {
            for r in w.contenders where r.samples.median.isFinite && r.samples.median > 0 {
                if series[r.name] == nil { names.append(r.name) }
                series[r.name, default: []].append((Double(w.size), r.samples.median))
                roles[r.name] = r.role
            }
        }
        let xs = series.values.flatMap { $0.map(\.0) }, ys = series.values.flatMap { $0.map(\.1) }
        guard let xMin = xs.min(), let xMax = xs.max(), let yMin = ys.min(), let yMax = ys.max(), xMax > xMin else { return [] }
        let lx0 = log10(xMin), lx1 = log10(xMax), ly0 = floor(log10(yMin)), ly1 = ceil(log10(yMax))
        func px(_ v: Double) -> Double { x + 40 + (log10(v) - lx0) / (lx1 - lx0) * (width - 50) }
        func py(_ v: Double) -> Double { y + 20 + height - 30 - (log10(v) - ly0) / max(ly1 - ly0, 1) * (height - 40) }
        var out = [text(x, y + 12, name, size: 11, weight: "bold")]
        out.append("<rect x=\"\(x + 40)\" y=\"\(y + 20)\" width=\"\(width - 50)\" height=\"\(height - 30)\" fill=\"none\" stroke=\"#ccc\"/>")
        var decade = ly0
        while decade <= ly1 {
            let v = pow(10, decade)
            out.append(text(x + 36, py(v) + 4, formatted(v, unit: runs[0].unit), size: 9, anchor: "end", fill: "#555"))
            decade += 1
        }
        for size in Set(runs.map(\.size)).sorted() {
            out.append(text(px(Double(size)), y + height + 4, formattedSize(size), size: 9, anchor: "middle", fill: "#555"))
        }
        var colors = Colors()
        for (i, n) in names.enumerated() {
            let color = colors.next(for: roles[n] ?? .ours)
            let points = (series[n] ?? []).map { String(format: "%.1f,%.1f", px($0.0), py($0.1)) }.joined(separator: " ")
            out.append("<polyline points=\"\(points)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"/>")
            out.append(text(x + 46, y + 32 + Double(i) * 11, n, size: 9, fill: color))
        }
        return out
    }

    private func text(_ x: Double, _ y: Double, _ content: String, size: Int, weight: String = "normal", anchor: String = "start", fill: String = "#222") -> String {
        let escaped = content.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        return String(format: "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" font-weight=\"%@\" text-anchor=\"%@\" fill=\"%@\">%@</text>", x, y, size, weight, anchor, fill, escaped)
    }
}
