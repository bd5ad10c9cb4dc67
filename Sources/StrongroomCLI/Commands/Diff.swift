import ArgumentParser
import Foundation
import Strongroom
import StrongroomMigrations

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the next migration from the model's schema file, or check that the migrations reach it.",
        discussion: """
        Replays the migrations in memory, compares the schema they give with the model's \
        schema file (Migrations/schema.sql, written by the app from its Swift model), and \
        writes Migrations/NNNN_NAME.sql with the steps between them: ADD COLUMN where SQLite \
        allows it, the runner's rebuild otherwise, tables and indexes created and dropped, \
        columns sealed or opened. The migration is replayed too before it is written: it \
        must reach the model.

        Data-losing steps (a dropped table or column, a NOT NULL column without a default, \
        a narrowed type, a sealed column opened) are refused unless --allow-destructive, \
        and marked in the file. Changes it cannot write safely (a primary key changed or a \
        rename under sealed values, a rebuild that would drop CHECK, COLLATE, AUTOINCREMENT \
        or WITHOUT ROWID) are refused: write those by hand. A rename is a drop and an add unless you say it is one: \
        --rename old=new for a table, --rename table.old=new for a column (the table's new name).

        With --check nothing is written: exit 0 when the migrations reach the model, 1 \
        (listing the differences) when they do not.
        """
    )

    @OptionGroup var migrationOptions: MigrationOptions

    @Option(help: ArgumentHelp("The model's schema file (default: schema.sql in the migrations directory).", valueName: "path"))
    var model: String?

    @Option(help: ArgumentHelp("The new migration's description, in its file name.", valueName: "name"))
    var name = "model"

    @Option(help: ArgumentHelp("A rename: old=new (a table) or table.old=new (a column); repeat for several.", valueName: "rename"))
    var rename: [String] = []

    @Flag(name: .customLong("allow-destructive"), help: "Write steps that lose data (marked in the file).")
    var allowDestructive = false

    @Flag(help: "Write nothing: exit 1 when the migrations do not reach the model.")
    var check = false

    func validate() throws {
        guard name.range(of: "^[A-Za-z0-9_]+$", options: .regularExpression) != nil else {
            throw ValidationError("--name takes letters, digits and underscores only (it goes in the file name).")
        }
        _ = try renames()
    }

    func renames() throws -> [SchemaDiff.Rename] {
        try rename.map { spec in
            let sides = spec.split(separator: "=", omittingEmptySubsequences: false).map(String.init)
            guard sides.count == 2, !sides[0].isEmpty, !sides[1].isEmpty, !sides[1].contains(".") else {
                throw ValidationError("--rename \(spec): write old=new for a table, table.old=new for a column.")
            }
            let from = sides[0].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            switch from.count {
            case 1: return .table(from: from[0], to: sides[1])
            case 2 where !from[0].isEmpty && !from[1].isEmpty: return .column(table: from[0], from: from[1], to: sides[1])
            default: throw ValidationError("--rename \(spec): write old=new for a table, table.old=new for a column.")
            }
        }
    }

    func run() throws {
        try CommandFailure.reporting(json: false) {
            let directory = migrationOptions.migrations
            let modelPath = model ?? directory + "/schema.sql"
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: modelPath, isDirectory: &isDirectory) else {
                throw StrongroomError(.notFound, "There is no model schema file at \(modelPath); write it from the app's model (DatabaseSchema.writeSchemaFile(to:)), or name it with --model.", path: modelPath)
            }
            guard !isDirectory.boolValue else {
                throw StrongroomError(.notFound, "\(modelPath) is a directory, not a model schema file; name the file with --model (by default schema.sql in the migrations directory).", path: modelPath)
            }
            let migrator = try Migrator(directory: directory)
            let current = try migrator.replayedSchema()
            let desired: DatabaseSchema
            do {
                desired = try DatabaseSchema.read(file: modelPath)
            } catch {
                CommandFailure.fail(code: "invalid_model", message: "The model schema file \(modelPath) does not run: \(error). Regenerate it from the app's model.", status: 65, json: false)
            }
            if check {
                let differences = desired.differences(from: current)
                if differences.isEmpty {
                    print("The migrations in \(directory) reach the model (\(modelPath)).")
                    return
                }
                print("The migrations in \(directory) do not reach the model (\(modelPath)); \(differences.count) difference(s):")
                for difference in differences { print("  - \(difference)") }
                print("Write the missing migration with `strongroom diff`.")
                throw ExitCode(1)
            }
            let plan = SchemaDiff.plan(from: current, to: desired, renames: try renames())
            if !plan.refusals.isEmpty {
                print("The next migration cannot be written from the model; nothing was written:")
                for refusal in plan.refusals { print("  - \(refusal)") }
                throw ExitCode(1)
            }
            guard !plan.steps.isEmpty else {
                print("The migrations in \(directory) already reach the model: nothing to write.")
                return
            }
            if !plan.destructiveSteps.isEmpty && !allowDestructive {
                print("The next migration would lose data; nothing was written:")
                for step in plan.destructiveSteps { print("  - \(step.destructive!)") }
                print("If a change is a rename, say so with --rename; if the loss is intended, run again with --allow-destructive (the steps are marked in the file).")
                throw ExitCode(1)
            }
            let version = (migrator.migrations.map(\.version).max() ?? 0) + 1
            let file = String(format: "%04d_%@.sql", version, name)
            // The new migration must take the replayed schema to the model.
            var next = migrator
            try next.register(Migration(version: version, description: name, sql: plan.sql, file: file))
            let reached = desired.differences(from: try next.replayedSchema())
            guard reached.isEmpty else {
                CommandFailure.fail(code: "unreachable_model", message: "The migration written from the model would not reach it (\(reached.map(\.description).joined(separator: "; "))); nothing was written. Write this change by hand.", status: 65, json: false)
            }
            let path = directory + "/" + file
            guard !FileManager.default.fileExists(atPath: path) else {
                throw StrongroomError(.outputExists, "\(path) exists already; nothing was written.", path: path)
            }
            try plan.sql.write(toFile: path, atomically: true, encoding: .utf8)
            print("Wrote \(path): \(plan.steps.count) step(s)\(plan.destructiveSteps.isEmpty ? "" : ", \(plan.destructiveSteps.count) destructive (marked)").")
        }
    }
}
