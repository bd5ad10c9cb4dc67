import Foundation

/// Reads `NNNN_description.sql` files from a directory.
enum MigrationDirectory {
    /// The model's schema file, which sits beside the migrations and is none.
    static let schemaFileName = "schema.sql"

    /// The migrations in `path`, by version. Files not ending in `.sql`,
    /// hidden files and the model's `schema.sql` are ignored; a `.sql` file with a malformed name, or two
    /// files with one version, is an error naming the file.
    static func load(_ path: String) throws(MigrationError) -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue {
                throw MigrationError(.directoryUnreadable, "\(path) is a file, not a directory: give the migrations directory (the one that holds the NNNN_description.sql files).")
            }
            throw MigrationError(.directoryUnreadable, "Cannot read the migrations directory \(path); check that it exists.")
        }
        var migrations: [Migration] = []
        var fileByVersion: [Int: String] = [:]
        for name in names.sorted() where name.hasSuffix(".sql") && !name.hasPrefix(".") && name != schemaFileName {
            let (version, description) = try parse(name: name)
            if let other = fileByVersion[version] {
                throw MigrationError(.duplicateVersion, "Migrations \(other) and \(name) both have version \(version); give each file its own number.", version: version, file: name)
            }
            fileByVersion[version] = name
            let filePath = path + "/" + name
            guard let data = FileManager.default.contents(atPath: filePath) else {
                throw MigrationError(.directoryUnreadable, "Cannot read the migration file \(filePath).", version: version, file: name)
            }
            migrations.append(Migration(version: version, description: description, sql: String(decoding: data, as: UTF8.self), file: name))
        }
        return migrations.sorted { $0.version < $1.version }
    }

    /// `0003_add_email.sql` → (3, "add email").
    static func parse(name: String) throws(MigrationError) -> (Int, String) {
        let stem = name.dropLast(4)
        let digits = stem.prefix(while: { $0.isASCII && $0.isNumber })
        let rest = stem.dropFirst(digits.count)
        guard !digits.isEmpty, let version = Int(digits), version > 0, rest.first == "_", rest.count > 1 else {
            throw MigrationError(.malformedName, "The migration file \(name) must be named NNNN_description.sql (for example 0003_add_email.sql), with a version above 0.", file: name)
        }
        return (version, String(rest.dropFirst()).replacingOccurrences(of: "_", with: " "))
    }
}
