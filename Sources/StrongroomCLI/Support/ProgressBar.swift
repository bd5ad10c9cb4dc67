import Foundation
import Strongroom
import StrongroomMigrations

/// A one-line progress bar on stderr, drawn only when stderr is a terminal.
final class ProgressBar: @unchecked Sendable {
    // Sendable: every mutable property is read and written under `lock`.
    private let lock = NSLock()
    private let enabled = isatty(STDERR_FILENO) == 1
    private var line = ""
    private var lastDrawn: UInt64 = 0

    func handle(_ event: MigrationEvent) {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        switch event {
        case .migrationStarted(let version, let description, let index, let count):
            line = "[\(index)/\(count)] \(version) \(description)"
            draw(line)
        case .statementStarted(_, let index, let count):
            let width = 20
            let filled = count == 0 ? width : width * index / count
            draw("\(line) [\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] statement \(index)/\(count)")
        case .rowsCopied(_, let table, let rows):
            draw("\(line) rebuilt \(table): \(rows) rows copied")
        case .migrationFinished:
            draw("")
        }
    }

    /// An import's or export's progress, redrawn at most ten times a second.
    func handle(_ progress: PlaintextConversion.Progress) {
        switch progress.phase {
        case .copying:
            let megabytes = progress.completed / 1_000_000
            if let total = progress.total, total > 0 {
                let percent = min(99, 100 * progress.completed / total)
                draw(line: "copying: \(megabytes) MB written (about \(percent)% of \(total / 1_000_000) MB)")
            } else {
                draw(line: "copying: \(megabytes) MB written")
            }
        case .verifying:
            draw(line: "verifying the copy: \(progress.completed) rows read back and hashed")
        }
    }

    /// Draws one line, at most ten times a second.
    func draw(line text: String) {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        let now = DispatchTime.now().uptimeNanoseconds
        guard now - lastDrawn >= 100_000_000 else { return }
        lastDrawn = now
        draw(text)
    }

    /// Clears the line.
    func finish() {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        draw("")
    }

    private func draw(_ text: String) {
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
    }
}
