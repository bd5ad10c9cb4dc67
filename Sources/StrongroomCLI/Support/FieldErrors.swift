import Strongroom
import StrongroomFields
import StrongroomMigrations

/// The CLI's import and export run sealing inside the library's typed
/// `finishing` step: other errors are carried through as StrongroomErrors.
enum FieldErrors {
    static func asStrongroomErrors(path: String, _ body: () throws -> Void) throws(StrongroomError) {
        do {
            try body()
        } catch let error as StrongroomError {
            throw error
        } catch let error as FieldError {
            throw StrongroomError(error.code == .misuse ? .misuse : .sealedValue, error.message, path: path)
        } catch let error as MigrationError {
            throw StrongroomError(.misuse, error.message, path: path)
        } catch {
            throw StrongroomError(.sqlite, "\(error)", path: path)
        }
    }
}
