import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct StrongroomMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [TableMacro.self, MarkerMacro.self]
}
