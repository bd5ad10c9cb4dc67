import SwiftDiagnostics
public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@Table`: writes a struct's `TableRecord` conformance (reading a row by
/// position, binding a record's values) and its `TableModel` conformance
/// (the table's definition), in one extension, so the struct keeps its
/// memberwise initializer.
public struct TableMacro: ExtensionMacro {
    public static func expansion(of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
                                 providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
                                 in context: some MacroExpansionContext) throws -> [ExtensionDeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: TableDiagnostic.notAStruct))
            return []
        }
        var reader = TableReader(context: context)
        guard let table = reader.read(structDecl, attribute: node), !reader.failed else { return [] }
        return [try ExtensionDeclSyntax(SyntaxNodeString(stringLiteral: table.extensionSource(for: type.trimmedDescription)))]
    }
}

/// A table as the struct declares it.
struct TableShape {
    struct Property {
        let name: String          // as written in Swift (may have backticks)
        let column: String
        let sqlType: String
        let optional: Bool
        let defaultSQL: String?
        let sealing: String?      // randomized, deterministic, indexed
        let indexColumn: String?
    }

    struct ForeignKey {
        let column: String, table: String, referenced: String?, onDelete: String, onUpdate: String
    }

    struct Index {
        let name: String, columns: [String], unique: Bool
    }

    /// A blind index of `@Table(blindIndexes:)`: its name, bits and
    /// uniqueness as read, and its expression, copied into the definition.
    struct BlindIndexDeclaration {
        let name: String, bits: Int, unique: Bool, expression: String
    }

    let access: String
    let name: String
    var properties: [Property] = []
    var primaryKey: [String] = []
    var uniqueKeys: [[String]] = []
    var foreignKeys: [ForeignKey] = []
    var indexes: [Index] = []
    var blindIndexes: [BlindIndexDeclaration] = []

    func extensionSource(for type: String) -> String {
        let columns = properties.map { literal($0.column) }.joined(separator: ", ")
        var reads = "", binds = ""
        for (position, property) in properties.enumerated() {
            reads += "        self.\(property.name) = try row.decode(at: \(position))\n"
            binds += "        try binder.bind(self.\(property.name), at: \(position))\n"
        }
        var definitions = properties.map { property in
            var arguments = "\(literal(property.column)), type: \(literal(property.sqlType))"
            if !property.optional { arguments += ", notNull: true" }
            if let defaultSQL = property.defaultSQL { arguments += ", defaultSQL: \(literal(defaultSQL))" }
            if let sealing = property.sealing { arguments += ", sealing: .\(sealing)" }
            if let indexColumn = property.indexColumn { arguments += ", sealedIndexColumn: \(literal(indexColumn))" }
            return "            StrongroomMigrations.ColumnDefinition(\(arguments)),\n"
        }
        // The blind index columns of indexed sealed columns, and of the declared blind indexes, which inserts fill.
        for property in properties {
            if let indexColumn = property.indexColumn {
                definitions.append("            StrongroomMigrations.ColumnDefinition(\(literal(indexColumn)), type: \"BLOB\"),\n")
            }
        }
        for index in blindIndexes {
            definitions.append("            StrongroomMigrations.ColumnDefinition(\(literal(index.name)), type: \"BLOB\"),\n")
        }
        let foreignKeys = self.foreignKeys.map { key in
            var text = "StrongroomMigrations.ForeignKeyDefinition([\(literal(key.column))], references: \(literal(key.table))"
            if let referenced = key.referenced { text += ", columns: [\(literal(referenced))]" }
            if key.onDelete != "noAction" { text += ", onDelete: .\(key.onDelete)" }
            if key.onUpdate != "noAction" { text += ", onUpdate: .\(key.onUpdate)" }
            return text + ")"
        }
        let indexes = self.indexes.map { index in
            "StrongroomMigrations.IndexDefinition(\(literal(index.name)), columns: [\(index.columns.map(literal).joined(separator: ", "))]\(index.unique ? ", unique: true" : ""))"
        }
        let sealed = properties.filter { $0.sealing != nil }.map { literal($0.column) }
        var sealedColumns = sealed.isEmpty ? "" : "\n\n    \(access)static let databaseSealedColumns: [String] = [\(sealed.joined(separator: ", "))]"
        // The row key sealed values are bound to, as declared: a read refuses a table the adversary gave another key.
        if !sealed.isEmpty && !primaryKey.isEmpty {
            sealedColumns += "\n\n    \(access)static let databaseRowKey: [String] = [\(primaryKey.map(literal).joined(separator: ", "))]"
        }
        var tableArguments = ""
        if !primaryKey.isEmpty { tableArguments += ",\n        primaryKey: [\(primaryKey.map(literal).joined(separator: ", "))]" }
        if !uniqueKeys.isEmpty { tableArguments += ",\n        uniqueKeys: [\(uniqueKeys.map { "[" + $0.map(literal).joined(separator: ", ") + "]" }.joined(separator: ", "))]" }
        if !foreignKeys.isEmpty { tableArguments += ",\n        foreignKeys: [\(foreignKeys.joined(separator: ", "))]" }
        if !indexes.isEmpty { tableArguments += ",\n        indexes: [\(indexes.joined(separator: ", "))]" }
        if !blindIndexes.isEmpty {
            tableArguments += ",\n        blindIndexes: ([\(blindIndexes.map(\.expression).joined(separator: ", "))] as [StrongroomMacros.TableBlindIndex]).map { $0.blindIndex(in: \(literal(name))) }"
        }
        return """
            extension \(type): Strongroom.TableRecord, StrongroomMigrations.TableModel {
                \(access)static let databaseTableName = \(literal(name))

                \(access)static let databaseColumnNames: [String] = [\(columns)]

                \(access)init(row: borrowing Strongroom.RowView) throws(Strongroom.StrongroomError) {
            \(reads)    }

                \(access)func encode(to binder: inout Strongroom.RecordBinder) throws(Strongroom.StrongroomError) {
            \(binds)    }\(sealedColumns)

                \(access)static let tableDefinition = StrongroomMigrations.TableDefinition(
                    \(literal(name)),
                    columns: [
            \(definitions.joined())        ]\(tableArguments)
                )
            }
            """
    }

    func literal(_ text: String) -> String {
        "\"" + text.map { $0 == "\\" || $0 == "\"" ? "\\\($0)" : String($0) }.joined() + "\""
    }
}
