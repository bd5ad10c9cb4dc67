public import SwiftSyntax
public import SwiftSyntaxMacros

/// `@PrimaryKey`, `@Column`, `@Sealed`, `@Indexed`, `@Ignored`: marks that
/// `@Table` reads; they expand to nothing themselves.
public struct MarkerMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        []
    }
}
