import SwiftDiagnostics
import SwiftSyntax

/// What `@Table` refuses, each with a sentence that says what to do.
enum TableDiagnostic: DiagnosticMessage {
    case notAStruct
    case missingType(String)
    case unsupportedType(property: String, type: String)
    case unknownSQLType(property: String, type: String)
    case letWithValue(String)
    case ignoredWithoutValue(String)
    case twoPrimaryKeys(String)
    case sealedPrimaryKey(String)
    case sealedWithoutPrimaryKey(String)
    case sealedDefault(String)
    case uniqueWithoutBlindIndex(property: String, mode: String)
    case sealedColumnType(property: String, type: String)
    case notALiteral(String)
    case unknownColumn(String)
    case storedInIfConfig(String)
    case attributeInIfConfig(String)
    case propertyWrapper(property: String, wrapper: String)
    case nestedOptional(property: String, type: String, single: String)
    case severalInOnePattern(pattern: String, first: String?)
    case truncatedUnique(index: String, bits: Int)
    case blindIndexWithoutSealedColumn(String)
    case notABlindIndex
    case blindIndexUnknownColumn(index: String, column: String)
    case blindIndexBits(index: String, bits: Int)
    case blindIndexNameTaken(String)

    var message: String {
        switch self {
        case .notAStruct:
            return "@Table applies to a struct"
        case .missingType(let property):
            return "@Table needs the type of '\(property)' written out; add a type annotation"
        case .unsupportedType(let property, let type):
            return "'\(property)' has type '\(type)', which no column can hold; mark it @Ignored or store it as Data"
        case .unknownSQLType(let property, let type):
            return "@Table cannot tell the SQL type of '\(property)' (\(type)); write it with @Column(type: \"TEXT\") (or INTEGER, REAL, BLOB), and make \(type) DatabaseValueConvertible"
        case .letWithValue(let property):
            return "'\(property)' is a 'let' with an initial value, so a row cannot set it; make it 'var', or mark it @Ignored"
        case .ignoredWithoutValue(let property):
            return "@Ignored '\(property)' needs an initial value: records read from the database get it"
        case .twoPrimaryKeys(let property):
            return "a second @PrimaryKey on '\(property)'; for a key of several columns, write @Table(primaryKey: [\"a\", \"b\"])"
        case .sealedPrimaryKey(let property):
            return "'\(property)' is the primary key, which sealed values are bound to: it cannot be sealed itself"
        case .sealedWithoutPrimaryKey(let property):
            return "'\(property)' is sealed randomized, which binds each value to its row's primary key; declare a @PrimaryKey, or seal it .deterministic"
        case .sealedColumnType(let property, let type):
            return "'\(property)' is sealed, so its column holds BLOB envelopes and is declared BLOB; type \"\(type)\" is not used: remove it"
        case .sealedDefault(let property):
            return "'\(property)' is sealed, so a default would be stored as plaintext by any INSERT that omits it; drop the default"
        case .uniqueWithoutBlindIndex(let property, let mode) where mode == "deterministic":
            return "'\(property)' is sealed deterministic, with no blind index for unique: to apply to; its envelopes are equal for equal values, so make the column itself unique with @Column(unique: true)"
        case .uniqueWithoutBlindIndex(let property, let mode):
            return "'\(property)' is sealed \(mode): equal values give different envelopes, so UNIQUE would hold for any values; seal it @Sealed(.indexed, unique: true) to make its blind index UNIQUE"
        case .notALiteral(let argument):
            return "@Table reads '\(argument)' when it compiles: write it as a literal"
        case .unknownColumn(let column):
            return "@Table(primaryKey:/unique:) names '\(column)', which is no column of this table"
        case .storedInIfConfig(let property):
            return "'\(property)' is a stored property inside #if, whose condition @Table cannot evaluate; declare it outside the #if (optional, if some builds have no value for it), or declare a type of its own for each configuration"
        case .attributeInIfConfig(let property):
            return "'\(property)' has attributes inside #if, whose condition @Table cannot evaluate; write its attributes outside the #if"
        case .propertyWrapper(let property, let wrapper):
            return "'\(property)' is wrapped by @\(wrapper), which @Table cannot read or write through; mark it @Ignored, or store the value in a plain property"
        case .nestedOptional(let property, let type, let single):
            return "'\(property)' has type '\(type)', a nested optional, which one column cannot hold (NULL cannot tell nil from .some(nil)); make it '\(single)'"
        case .truncatedUnique(let index, let bits):
            return "blind index '\(index)' is truncated to \(bits) bits: different values may share a truncated index value, so UNIQUE would refuse a value for another's sake; make it 128 bits to make it unique"
        case .blindIndexWithoutSealedColumn(let index):
            return "blind index '\(index)' covers no @Sealed column of this table: a blind index hides sealed values; index a plain column with @Indexed"
        case .blindIndexBits(let index, let bits):
            return "blind index '\(index)' is \(bits) bits long; a blind index has 1 to 128 bits"
        case .blindIndexNameTaken(let index):
            return "blind index '\(index)' is named like a column of this table or another of its blind indexes; its values need a column of their own: name it apart"
        case .blindIndexUnknownColumn(let index, let column):
            return "blind index '\(index)' names '\(column)', which is no column of this table"
        case .notABlindIndex:
            return "@Table(blindIndexes:) takes .index(\"name\", on: \"column\", bits:, transformations:, unique:) and .compound(\"name\", bits:, parts: [.init(\"column\", [transformations])], unique:), with literal names, bits and unique"
        case .severalInOnePattern(let pattern, let first):
            return "'\(pattern)' declares several properties in one pattern, which @Table cannot take apart; declare each on its own" + (first.map { " ('\($0)')" } ?? "")
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "StrongroomMacros", id: "\(self)".prefix { $0 != "(" }.description) }
    var severity: DiagnosticSeverity {
        if case .sealedColumnType = self { return .warning }
        return .error
    }
}

struct TableFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "StrongroomMacros", id: message) }
}
