import ArgumentParser

/// `--migrations DIR`, shared by the commands that read migrations.
struct MigrationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The migrations directory (NNNN_description.sql files).", valueName: "dir"))
    var migrations = "Migrations"
}
