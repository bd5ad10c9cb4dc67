import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// Reads a struct and its attributes into a ``TableShape``, diagnosing
/// what cannot be stored.
struct TableReader<Context: MacroExpansionContext> {
    let context: Context
    private(set) var failed = false

    init(context: Context) { self.context = context }

    static var sqlTypes: [String: String] {
        [
            "Int": "INTEGER", "Int8": "INTEGER", "Int16": "INTEGER", "Int32": "INTEGER", "Int64": "INTEGER",
            "UInt8": "INTEGER", "UInt16": "INTEGER", "UInt32": "INTEGER", "Bool": "INTEGER",
            "Double": "REAL", "Float": "REAL",
            "String": "TEXT", "Date": "TEXT", "UUID": "TEXT",
            "Data": "BLOB",
        ]
    }

    mutating func diagnose(_ node: some SyntaxProtocol, _ message: TableDiagnostic, fixIts: [FixIt] = []) {
        if message.severity == .error { failed = true }
        context.diagnose(Diagnostic(node: node, message: message, fixIts: fixIts))
    }

    mutating func read(_ structDecl: StructDeclSyntax, attribute: AttributeSyntax) -> TableShape? {
        let arguments = Self.arguments(of: attribute)
        let typeName = structDecl.name.text
        var tableName = typeName.prefix(1).lowercased() + typeName.dropFirst()
        if let nameArgument = arguments.first(where: { $0.label == nil }) {
            guard let name = string(nameArgument.expression, "the table's name") else { return nil }
            tableName = name
        }
        let access = structDecl.modifiers.contains { ["public", "package"].contains($0.name.text) }
            ? structDecl.modifiers.first { ["public", "package"].contains($0.name.text) }!.name.text + " " : ""
        var table = TableShape(access: access, name: tableName)
        var primaryKeyAttribute: AttributeSyntax?

        for item in structDecl.memberBlock.members {
            // The macro cannot evaluate an #if: a stored property there
            // would be neither stored nor read, so it is refused.
            if let ifConfig = item.decl.as(IfConfigDeclSyntax.self) {
                refuseStoredProperties(in: ifConfig)
                continue
            }
            guard let variable = item.decl.as(VariableDeclSyntax.self), Self.mayBeColumns(variable) else { continue }
            let attributes = Self.attributes(of: variable)
            if let ifConfig = Self.attributeInIfConfig(of: variable), attributes["Ignored"] == nil {
                let names = variable.bindings.filter { !Self.isComputed($0) }.map { Self.name(of: $0.pattern) }
                if !names.isEmpty { diagnose(ifConfig, .attributeInIfConfig(names.joined(separator: ", "))) }
                continue
            }
            for (binding, writtenType) in zip(variable.bindings, Self.writtenTypes(of: variable)) {
                if Self.isComputed(binding) { continue }
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
                    if attributes["Ignored"] == nil {
                        diagnose(binding.pattern, .severalInOnePattern(pattern: binding.pattern.trimmedDescription,
                                                                       first: Self.firstOfPattern(binding, specifier: variable.bindingSpecifier.text)))
                    }
                    continue
                }
                let name = pattern.identifier.text
                let bare = name.filter { $0 != "`" }
                if let ignored = attributes["Ignored"] {
                    if Self.needsValue(binding, writtenType) { diagnose(ignored, .ignoredWithoutValue(bare)) }
                    continue
                }
                if let wrapper = Self.propertyWrapper(of: variable) {
                    diagnose(wrapper, .propertyWrapper(property: bare, wrapper: Self.baseName(wrapper.attributeName)))
                    continue
                }
                if variable.bindingSpecifier.tokenKind == .keyword(.let), binding.initializer != nil {
                    let fix = FixIt(message: TableFixIt(message: "make it 'var'"), changes: [
                        .replace(oldNode: Syntax(variable.bindingSpecifier), newNode: Syntax(TokenSyntax.keyword(.var, leadingTrivia: variable.bindingSpecifier.leadingTrivia, trailingTrivia: variable.bindingSpecifier.trailingTrivia))),
                    ])
                    diagnose(variable.bindingSpecifier, .letWithValue(bare), fixIts: [fix])
                    continue
                }
                guard let type = writtenType else {
                    diagnose(pattern, .missingType(bare))
                    continue
                }
                let wrapped = Self.unwrapOptional(type)
                if let wrapped, Self.unwrapOptional(wrapped) != nil {
                    var single = wrapped
                    while let inner = Self.unwrapOptional(single) { single = inner }
                    diagnose(type, .nestedOptional(property: bare, type: type.trimmedDescription, single: single.trimmedDescription + "?"))
                    continue
                }
                let base = wrapped ?? type
                var column: [(label: String?, expression: ExprSyntax)] = []
                if let attribute = attributes["Column"] { column = Self.arguments(of: attribute) }
                var columnName = bare
                if let argument = column.first(where: { $0.label == nil }) {
                    guard let value = string(argument.expression, "the column's name") else { continue }
                    columnName = value
                }
                if Self.isUnstorable(base) {
                    let fix = FixIt(message: TableFixIt(message: "mark it @Ignored"), changes: [
                        .replace(oldNode: Syntax(variable), newNode: Syntax(Self.adding("@Ignored", to: variable))),
                    ])
                    diagnose(type, .unsupportedType(property: bare, type: base.trimmedDescription), fixIts: [fix])
                    continue
                }
                var sqlType = Self.sqlTypes[Self.baseName(base)] ?? (Self.isByteArray(base) ? "BLOB" : nil)
                if let argument = column.first(where: { $0.label == "type" }) {
                    guard let value = string(argument.expression, "type") else { continue }
                    sqlType = value
                    // A sealed column holds BLOB envelopes, whatever it seals.
                    if attributes["Sealed"] != nil && !["BLOB", ""].contains(value.uppercased().filter { $0 != " " }) {
                        diagnose(argument.expression, .sealedColumnType(property: bare, type: value))
                    }
                }
                // One rule (the sealing guide, the model's validation): a
                // sealed column is declared BLOB, whatever the property's type.
                if attributes["Sealed"] != nil { sqlType = "BLOB" }
                guard let sqlType else {
                    let fix = FixIt(message: TableFixIt(message: "add @Column(type: \"TEXT\")"), changes: [
                        .replace(oldNode: Syntax(variable), newNode: Syntax(Self.adding("@Column(type: \"TEXT\")", to: variable))),
                    ])
                    diagnose(type, .unknownSQLType(property: bare, type: base.trimmedDescription), fixIts: [fix])
                    continue
                }
                var defaultSQL: String?
                if let argument = column.first(where: { $0.label == "default" }) {
                    defaultSQL = string(argument.expression, "default")
                }
                if let argument = column.first(where: { $0.label == "unique" }), boolean(argument.expression, "unique") == true {
                    table.uniqueKeys.append([columnName])
                }
                if let argument = column.first(where: { $0.label == "references" }), let referenced = string(argument.expression, "references") {
                    let referencedColumn = column.first { $0.label == "column" }.flatMap { string($0.expression, "column") }
                    let onDelete = column.first { $0.label == "onDelete" }.flatMap { member($0.expression, "onDelete") } ?? "noAction"
                    let onUpdate = column.first { $0.label == "onUpdate" }.flatMap { member($0.expression, "onUpdate") } ?? "noAction"
                    table.foreignKeys.append(.init(column: columnName, table: referenced, referenced: referencedColumn, onDelete: onDelete, onUpdate: onUpdate))
                }
                if let primary = attributes["PrimaryKey"] {
                    if primaryKeyAttribute != nil {
                        let fix = FixIt(message: TableFixIt(message: "remove this @PrimaryKey"), changes: [
                            .replace(oldNode: Syntax(variable), newNode: Syntax(variable.with(\.attributes, variable.attributes.filter { Syntax($0) != Syntax(primary) })
                                .with(\.leadingTrivia, variable.leadingTrivia))),
                        ])
                        diagnose(primary, .twoPrimaryKeys(bare), fixIts: [fix])
                    }
                    primaryKeyAttribute = primary
                    table.primaryKey = [columnName]
                }
                if let indexed = attributes["Indexed"] {
                    let indexArguments = Self.arguments(of: indexed)
                    let indexName = indexArguments.first { $0.label == nil }.flatMap { string($0.expression, "the index's name") } ?? "\(tableName)_\(columnName)"
                    let unique = indexArguments.first { $0.label == "unique" }.flatMap { boolean($0.expression, "unique") } ?? false
                    table.indexes.append(.init(name: indexName, columns: [columnName], unique: unique))
                }
                var sealing: String?
                var indexColumn: String?
                if attributes["Sealed"] != nil, let argument = column.first(where: { $0.label == "default" }) {
                    diagnose(argument.expression, .sealedDefault(bare))
                }
                if let sealed = attributes["Sealed"] {
                    let sealedArguments = Self.arguments(of: sealed)
                    sealing = sealedArguments.first { $0.label == nil }.flatMap { member($0.expression, "mode") } ?? "randomized"
                    // UNIQUE belongs on the blind index, which is equal for equal values;
                    // randomized and deterministic envelopes have none.
                    let uniqueArgument = sealedArguments.first { $0.label == "unique" }
                    let unique = uniqueArgument.flatMap { boolean($0.expression, "unique") } ?? false
                    if sealing == "indexed" {
                        indexColumn = sealedArguments.first { $0.label == "indexColumn" }.flatMap { string($0.expression, "indexColumn") } ?? "\(columnName)_index"
                        table.indexes.append(.init(name: "\(tableName)_\(indexColumn!)", columns: [indexColumn!], unique: unique))
                    } else if unique, let uniqueArgument {
                        diagnose(uniqueArgument.expression, .uniqueWithoutBlindIndex(property: bare, mode: sealing ?? "randomized"))
                    }
                }
                table.properties.append(.init(name: name, column: columnName, sqlType: sqlType, optional: wrapped != nil,
                                              defaultSQL: defaultSQL, sealing: sealing, indexColumn: indexColumn))
            }
        }

        // Keys over several columns, from @Table's arguments.
        let columnNames = Set(table.properties.map { $0.column.lowercased() })
        if let argument = arguments.first(where: { $0.label == "primaryKey" }) {
            let names = strings(argument.expression, "primaryKey")
            if let primaryKeyAttribute, !names.isEmpty {
                diagnose(primaryKeyAttribute, .twoPrimaryKeys(table.primaryKey.first ?? ""))
            }
            for name in names where !columnNames.contains(name.lowercased()) { diagnose(argument.expression, .unknownColumn(name)) }
            if !names.isEmpty { table.primaryKey = names }
        }
        if let argument = arguments.first(where: { $0.label == "blindIndexes" }) {
            readBlindIndexes(argument.expression, into: &table, columnNames: columnNames)
        }
        // UNIQUE may name a blind index's column: an indexed column's own, or a declared 128-bit one.
        let indexColumns = Set(table.properties.compactMap { $0.indexColumn?.lowercased() } + table.blindIndexes.filter { $0.bits == 128 }.map { $0.name.lowercased() })
        if let argument = arguments.first(where: { $0.label == "unique" }), let array = argument.expression.as(ArrayExprSyntax.self) {
            for element in array.elements {
                let names = strings(element.expression, "unique")
                for name in names where !columnNames.contains(name.lowercased()) && !indexColumns.contains(name.lowercased()) {
                    if let truncated = table.blindIndexes.first(where: { $0.name.lowercased() == name.lowercased() }) {
                        diagnose(element.expression, .truncatedUnique(index: truncated.name, bits: truncated.bits))
                    } else {
                        diagnose(argument.expression, .unknownColumn(name))
                    }
                }
                table.uniqueKeys.append(names)
            }
        }
        // Sealed values are bound to the primary key.
        let keyColumns = Set(table.primaryKey.map { $0.lowercased() })
        for property in table.properties where property.sealing != nil {
            if keyColumns.contains(property.column.lowercased()) {
                diagnose(structDecl.name, .sealedPrimaryKey(property.column))
            } else if keyColumns.isEmpty && property.sealing != "deterministic" {
                diagnose(structDecl.name, .sealedWithoutPrimaryKey(property.column))
            }
        }
        return table
    }

    // MARK: Blind indexes

    /// `[.index("name", on: "column", bits: 16, transformations: […], unique: false), .compound("name", bits: 12, parts: [.init("a", […]), …])]`:
    /// the names, columns, bits and uniqueness are read here (literals); the
    /// whole expression goes into the definition as written.
    mutating func readBlindIndexes(_ expression: ExprSyntax, into table: inout TableShape, columnNames: Set<String>) {
        guard let array = expression.as(ArrayExprSyntax.self) else {
            diagnose(expression, .notALiteral("blindIndexes"))
            return
        }
        let sealed = Set(table.properties.filter { $0.sealing != nil }.map { $0.column.lowercased() })
        for element in array.elements {
            guard let call = element.expression.as(FunctionCallExprSyntax.self), let kind = call.calledExpression.as(MemberAccessExprSyntax.self)?.declName.baseName.text,
                  ["index", "compound"].contains(kind), let nameArgument = call.arguments.first, nameArgument.label == nil,
                  let name = string(nameArgument.expression, "a blind index's name") else {
                diagnose(element.expression, .notABlindIndex)
                continue
            }
            var bits = 128, unique = false
            if let argument = call.arguments.first(where: { $0.label?.text == "bits" }) {
                guard let literal = argument.expression.as(IntegerLiteralExprSyntax.self), let value = Int(literal.literal.text) else {
                    diagnose(argument.expression, .notALiteral("bits"))
                    continue
                }
                bits = value
            }
            if let argument = call.arguments.first(where: { $0.label?.text == "unique" }) { unique = boolean(argument.expression, "unique") ?? false }
            var columns: [String] = []
            if kind == "index", let on = call.arguments.first(where: { $0.label?.text == "on" }) {
                columns = string(on.expression, "on").map { [$0] } ?? []
            } else if let parts = call.arguments.first(where: { $0.label?.text == "parts" })?.expression.as(ArrayExprSyntax.self) {
                for part in parts.elements {
                    guard let partCall = part.expression.as(FunctionCallExprSyntax.self), let column = partCall.arguments.first,
                          let columnName = string(column.expression, "a part's column") else {
                        diagnose(part.expression, .notABlindIndex)
                        continue
                    }
                    columns.append(columnName)
                }
            }
            if !(1...128).contains(bits) { diagnose(element.expression, .blindIndexBits(index: name, bits: bits)) }
            if columnNames.contains(name.lowercased()) || table.blindIndexes.contains(where: { $0.name.lowercased() == name.lowercased() })
                || table.properties.contains(where: { $0.indexColumn?.lowercased() == name.lowercased() }) {
                diagnose(element.expression, .blindIndexNameTaken(name))
            }
            for column in columns where !columnNames.contains(column.lowercased()) { diagnose(element.expression, .blindIndexUnknownColumn(index: name, column: column)) }
            if !columns.contains(where: { sealed.contains($0.lowercased()) }) { diagnose(element.expression, .blindIndexWithoutSealedColumn(name)) }
            if unique && bits < 128 { diagnose(element.expression, .truncatedUnique(index: name, bits: bits)) }
            table.blindIndexes.append(.init(name: name, bits: bits, unique: unique, expression: element.expression.trimmedDescription))
            table.indexes.append(.init(name: "\(table.name)_\(name)", columns: [name], unique: unique))
        }
    }

    // MARK: Declaration forms

    /// Diagnoses each stored property `ifConfig` declares, in any of its
    /// clauses, nested ones too; an `@Ignored` one needs only its value.
    mutating func refuseStoredProperties(in ifConfig: IfConfigDeclSyntax) {
        for clause in ifConfig.clauses {
            guard case .decls(let members)? = clause.elements else { continue }
            for member in members {
                if let nested = member.decl.as(IfConfigDeclSyntax.self) {
                    refuseStoredProperties(in: nested)
                    continue
                }
                guard let variable = member.decl.as(VariableDeclSyntax.self), Self.mayBeColumns(variable) else { continue }
                let ignored = Self.attributes(of: variable)["Ignored"]
                for (binding, writtenType) in zip(variable.bindings, Self.writtenTypes(of: variable)) where !Self.isComputed(binding) {
                    let name = Self.name(of: binding.pattern)
                    if let ignored {
                        if Self.needsValue(binding, writtenType) { diagnose(ignored, .ignoredWithoutValue(name)) }
                        continue
                    }
                    diagnose(binding.pattern, .storedInIfConfig(name))
                }
            }
        }
    }

    /// False for `static`, `class` and `lazy` properties, which are no columns.
    static func mayBeColumns(_ variable: VariableDeclSyntax) -> Bool {
        !variable.modifiers.contains { ["static", "class", "lazy"].contains($0.name.text) }
    }

    /// True for a property with a getter (computed), false for a stored one,
    /// observers and all.
    static func isComputed(_ binding: PatternBindingSyntax) -> Bool {
        // Called, not passed as a closure: a static method of this generic
        // type as a closure captures Context's metatype, which is not
        // Sendable (Swift 6.3 warns, #SendableMetatypes, in a user's build).
        guard let accessors = binding.accessorBlock else { return false }
        return isComputed(accessors)
    }

    /// The name a pattern declares, without backticks (a tuple pattern as written).
    static func name(of pattern: PatternSyntax) -> String {
        pattern.as(IdentifierPatternSyntax.self).map { $0.identifier.text.filter { $0 != "`" } } ?? pattern.trimmedDescription
    }

    /// The type of each binding: its own annotation, or for a name with
    /// neither a type nor a value, the next one's (`var first, last: String`).
    static func writtenTypes(of variable: VariableDeclSyntax) -> [TypeSyntax?] {
        var types: [TypeSyntax?] = []
        var following: TypeSyntax?
        for binding in variable.bindings.reversed() {
            if let annotation = binding.typeAnnotation {
                following = annotation.type
            } else if binding.initializer != nil || binding.accessorBlock != nil {
                following = nil
            }
            types.append(following)
        }
        return types.reversed()
    }

    /// True when an `@Ignored` property has no initial value (an optional
    /// one starts as nil).
    static func needsValue(_ binding: PatternBindingSyntax, _ type: TypeSyntax?) -> Bool {
        binding.initializer == nil && !(type.map { unwrapOptional($0) != nil } ?? false)
    }

    /// The first property of a tuple pattern, declared on its own (`var x: Int`).
    static func firstOfPattern(_ binding: PatternBindingSyntax, specifier: String) -> String? {
        guard let pattern = binding.pattern.as(TuplePatternSyntax.self), let first = pattern.elements.first,
              let type = binding.typeAnnotation?.type.as(TupleTypeSyntax.self), let firstType = type.elements.first else { return nil }
        return "\(specifier) \(first.pattern.trimmedDescription): \(firstType.type.trimmedDescription)"
    }

    /// The `#if` among a property's attributes, if any.
    static func attributeInIfConfig(of variable: VariableDeclSyntax) -> IfConfigDeclSyntax? {
        for element in variable.attributes {
            if case .ifConfigDecl(let ifConfig) = element { return ifConfig }
        }
        return nil
    }

    /// The attributes `@Table` reads; any other custom attribute (a
    /// capitalized name, but a global actor's) is taken for a property wrapper.
    static var markers: Set<String> { ["PrimaryKey", "Column", "Sealed", "Indexed", "Ignored"] }

    static func propertyWrapper(of variable: VariableDeclSyntax) -> AttributeSyntax? {
        for element in variable.attributes {
            guard case .attribute(let attribute) = element else { continue }
            let name = baseName(attribute.attributeName)
            if let first = name.first, first.isUppercase, !markers.contains(name), !name.hasSuffix("Actor") { return attribute }
        }
        return nil
    }

    // MARK: Attribute arguments

    /// `variable` with `attribute` written first, on the same line.
    static func adding(_ attribute: String, to variable: VariableDeclSyntax) -> VariableDeclSyntax {
        let added = AttributeSyntax(stringLiteral: attribute).with(\.leadingTrivia, variable.leadingTrivia).with(\.trailingTrivia, .space)
        let rest = variable.with(\.leadingTrivia, [])
        return rest.with(\.attributes, AttributeListSyntax([.attribute(added)] + Array(rest.attributes)))
    }

    static func attributes(of variable: VariableDeclSyntax) -> [String: AttributeSyntax] {
        var found: [String: AttributeSyntax] = [:]
        for element in variable.attributes {
            guard let attribute = element.as(AttributeSyntax.self) else { continue }
            let name = attribute.attributeName.trimmedDescription.split(separator: ".").last.map(String.init) ?? ""
            found[name] = attribute
        }
        return found
    }

    static func arguments(of attribute: AttributeSyntax) -> [(label: String?, expression: ExprSyntax)] {
        guard case .argumentList(let list) = attribute.arguments else { return [] }
        return list.map { ($0.label?.text, $0.expression) }
    }

    mutating func string(_ expression: ExprSyntax, _ what: String) -> String? {
        if expression.is(NilLiteralExprSyntax.self) { return nil }
        // The literal's value, escapes resolved (`"a\"b"` is a"b); an
        // interpolation has none.
        guard let literal = expression.as(StringLiteralExprSyntax.self), let value = literal.representedLiteralValue else {
            diagnose(expression, .notALiteral(what))
            return nil
        }
        return value
    }

    mutating func strings(_ expression: ExprSyntax, _ what: String) -> [String] {
        guard let array = expression.as(ArrayExprSyntax.self) else {
            diagnose(expression, .notALiteral(what))
            return []
        }
        return array.elements.compactMap { string($0.expression, what) }
    }

    mutating func boolean(_ expression: ExprSyntax, _ what: String) -> Bool? {
        guard let literal = expression.as(BooleanLiteralExprSyntax.self) else {
            diagnose(expression, .notALiteral(what))
            return nil
        }
        return literal.literal.tokenKind == .keyword(.true)
    }

    mutating func member(_ expression: ExprSyntax, _ what: String) -> String? {
        guard let access = expression.as(MemberAccessExprSyntax.self) else {
            diagnose(expression, .notALiteral(what))
            return nil
        }
        return access.declName.baseName.text
    }

    // MARK: Types

    static func isComputed(_ accessors: AccessorBlockSyntax) -> Bool {
        switch accessors.accessors {
        case .getter: return true
        case .accessors(let list): return list.contains { ["get", "_read", "unsafeAddress"].contains($0.accessorSpecifier.text) }
        }
    }

    /// The wrapped type of `T?`, `T!` or `Optional<T>`, else nil.
    static func unwrapOptional(_ type: TypeSyntax) -> TypeSyntax? {
        if let optional = type.as(OptionalTypeSyntax.self) { return optional.wrappedType }
        if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return optional.wrappedType }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
           let argument = identifier.genericArgumentClause?.arguments.first {
            return TypeSyntax(fromProtocol: argument.argument.as(TypeSyntax.self) ?? TypeSyntax(stringLiteral: argument.argument.trimmedDescription))
        }
        // `Swift.Optional<T>`
        if let member = type.as(MemberTypeSyntax.self), member.name.text == "Optional", member.baseType.trimmedDescription == "Swift",
           let argument = member.genericArgumentClause?.arguments.first {
            return TypeSyntax(fromProtocol: argument.argument.as(TypeSyntax.self) ?? TypeSyntax(stringLiteral: argument.argument.trimmedDescription))
        }
        return nil
    }

    static func baseName(_ type: TypeSyntax) -> String {
        if let member = type.as(MemberTypeSyntax.self) { return member.name.text }
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text }
        return type.trimmedDescription
    }

    static func isByteArray(_ type: TypeSyntax) -> Bool {
        type.as(ArrayTypeSyntax.self).map { baseName($0.element) == "UInt8" } ?? false
    }

    /// Tuples, functions, dictionaries and arrays (but `[UInt8]`) hold no column value.
    static func isUnstorable(_ type: TypeSyntax) -> Bool {
        if type.is(TupleTypeSyntax.self) || type.is(FunctionTypeSyntax.self) || type.is(DictionaryTypeSyntax.self) { return true }
        if type.is(ArrayTypeSyntax.self) { return !isByteArray(type) }
        if let attributed = type.as(AttributedTypeSyntax.self) { return isUnstorable(attributed.baseType) }
        return false
    }
}
