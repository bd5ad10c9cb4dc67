import ArgumentParser

/// `--batch-size`: rows per transaction of a resumable rewrite (`fields
/// rotate`, `fields index add` and `rebuild`).
struct BatchOptions: ParsableArguments {
    @Option(name: .customLong("batch-size"), help: "Rows per transaction.") var batchSize = 1000

    func validate() throws {
        guard batchSize > 0 else { throw ValidationError("--batch-size must be at least 1.") }
    }
}
