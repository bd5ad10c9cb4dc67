import Foundation
import StrongroomMigrations

/// A one-line progress bar on stderr, drawn only when stderr is a terminal.
final class ProgressBar: @unchecked Sendable {
    // Sendable: drawn from the migrating thread only; `lock` guards the state anyway.
    private let lock = NSLock()
    private let enabled = isatty(STDERR_FILENO) == 1
    private var line = ""

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

    private func draw(_ text: String) {
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
    }
}
