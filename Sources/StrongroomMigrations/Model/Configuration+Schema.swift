public import Strongroom
public import StrongroomFields

extension Configuration {
    /// Seals the sealed columns of `schema` (the application's model: its
    /// `@Table` types), with their blind indexes and each table's declared
    /// primary key as the row key its values are bound to: the one
    /// declaration drives the connection too.
    ///
    /// ```swift
    /// var configuration = Configuration(key: databaseKey)
    /// configuration.seal(AppModel.schema, keyring: try FieldKeyring.load(from: "Keys/fields.keyring"))
    /// ```
    ///
    /// The same as `seal(schema.sealedColumns, indexes: schema.blindIndexes,
    /// keyring:, context:, rowKeys: schema.rowKeys)`.
    public mutating func seal(_ schema: DatabaseSchema, keyring: FieldKeyring, context: FieldContext? = nil) {
        seal(schema.sealedColumns, indexes: schema.blindIndexes, keyring: keyring, context: context, rowKeys: schema.rowKeys)
    }
}
