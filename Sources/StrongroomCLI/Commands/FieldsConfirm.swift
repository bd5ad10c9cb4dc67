import ArgumentParser
import Strongroom
import StrongroomFields

extension Fields {
    /// `strongroom fields confirm`: the operator vouches for the registry as it stands.
    struct Confirm: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign the registry of sealed columns and blind indexes with the field keyring, after checking it.",
            discussion: "The tools that seal, re-seal and write index values refuse a registry no signature covers, or one changed since it was signed. Run this once the rows it prints are the ones you recorded: after a migration run without --field-keys, or on a database made by an older Strongroom.")
        @Option(help: ArgumentHelp("The database file.", valueName: "path")) var database: String
        @OptionGroup var key: KeyOptions
        @OptionGroup var keyring: FieldKeyOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            try CommandFailure.reporting(json: output.json) {
                let (queue, fieldKeys) = try Fields.openForIndexes(database, key: key, keyring: keyring)
                // Every row exactly as the signature covers it, in the transaction that signs it.
                let lines: [String] = try queue.write { db in
                    // The keyring must be the database's before it signs anything.
                    try FieldKeyCheck.verify(fieldKeys, in: db)
                    let lines = try RegistrySignature.describeRows(in: db)
                    try RegistrySignature.confirm(fieldKeys, in: db)
                    return lines
                }
                if output.json {
                    Output.json(["database": database, "signed_under_key_id": "\(fieldKeys.activeKeyID)", "rows": lines.joined(separator: "\n")])
                } else {
                    for line in lines { print(line) }
                    print("Signed the registry of \(database) (\(lines.count) entries) under field key \(fieldKeys.activeKeyID): the tools act on exactly these.")
                }
            }
        }
    }
}
