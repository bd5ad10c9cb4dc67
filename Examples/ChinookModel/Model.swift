// The Chinook app's model, declared once in Swift: the schema that
// Migrations/ 0001-0005 produce (the imported Chinook schema, customer
// notes, loyalty tiers, an invoice date index, Customer.Fax dropped).
// Column names are Chinook's own, so the properties carry them.
import Foundation
import StrongroomMacros

enum LoyaltyTier: String, DatabaseValueConvertible {
    case standard, silver, gold
}

@Table("Artist")
struct Artist {
    @PrimaryKey var ArtistId: Int64
    @Column(type: "NVARCHAR(120)") var Name: String?
}

@Table("Album")
struct Album {
    @PrimaryKey var AlbumId: Int64
    @Column(type: "NVARCHAR(160)") var Title: String
    @Column(references: "Artist", column: "ArtistId") @Indexed("IFK_AlbumArtistId") var ArtistId: Int64
}

@Table("Genre")
struct Genre {
    @PrimaryKey var GenreId: Int64
    @Column(type: "NVARCHAR(120)") var Name: String?
}

@Table("MediaType")
struct MediaType {
    @PrimaryKey var MediaTypeId: Int64
    @Column(type: "NVARCHAR(120)") var Name: String?
}

@Table("Track")
struct Track {
    @PrimaryKey var TrackId: Int64
    @Column(type: "NVARCHAR(200)") var Name: String
    @Column(references: "Album", column: "AlbumId") @Indexed("IFK_TrackAlbumId") var AlbumId: Int64?
    @Column(references: "MediaType", column: "MediaTypeId") @Indexed("IFK_TrackMediaTypeId") var MediaTypeId: Int64
    @Column(references: "Genre", column: "GenreId") @Indexed("IFK_TrackGenreId") var GenreId: Int64?
    @Column(type: "NVARCHAR(220)") var Composer: String?
    var Milliseconds: Int64
    var Bytes: Int64?
    @Column(type: "NUMERIC(10,2)") var UnitPrice: Double
}

@Table("Employee")
struct Employee {
    @PrimaryKey var EmployeeId: Int64
    @Column(type: "NVARCHAR(20)") var LastName: String
    @Column(type: "NVARCHAR(20)") var FirstName: String
    @Column(type: "NVARCHAR(30)") var Title: String?
    @Column(references: "Employee", column: "EmployeeId") @Indexed("IFK_EmployeeReportsTo") var ReportsTo: Int64?
    @Column(type: "DATETIME") var BirthDate: Date?
    @Column(type: "DATETIME") var HireDate: Date?
    @Column(type: "NVARCHAR(70)") var Address: String?
    @Column(type: "NVARCHAR(40)") var City: String?
    @Column(type: "NVARCHAR(40)") var State: String?
    @Column(type: "NVARCHAR(40)") var Country: String?
    @Column(type: "NVARCHAR(10)") var PostalCode: String?
    @Column(type: "NVARCHAR(24)") var Phone: String?
    @Column(type: "NVARCHAR(24)") var Fax: String?
    @Column(type: "NVARCHAR(60)") var Email: String?
}

@Table("Customer")
struct Customer {
    @PrimaryKey var CustomerId: Int64
    @Column(type: "NVARCHAR(40)") var FirstName: String
    @Column(type: "NVARCHAR(20)") var LastName: String
    @Column(type: "NVARCHAR(80)") var Company: String?
    @Column(type: "NVARCHAR(70)") var Address: String?
    @Column(type: "NVARCHAR(40)") var City: String?
    @Column(type: "NVARCHAR(40)") var State: String?
    @Column(type: "NVARCHAR(40)") var Country: String?
    @Column(type: "NVARCHAR(10)") var PostalCode: String?
    @Column(type: "NVARCHAR(24)") var Phone: String?
    @Column(type: "NVARCHAR(60)") var Email: String
    @Column(references: "Employee", column: "EmployeeId") @Indexed("IFK_CustomerSupportRepId") var SupportRepId: Int64?
    @Column(type: "TEXT", default: "'standard'") var LoyaltyTier: LoyaltyTier
}

@Table("CustomerNote")
struct CustomerNote {
    @PrimaryKey var NoteId: Int64?
    @Column(references: "Customer", column: "CustomerId", onDelete: .cascade) @Indexed("IX_CustomerNote_CustomerId") var CustomerId: Int64
    var Body: String
    @Column(default: "strftime('%Y-%m-%d %H:%M:%f', 'now')") var CreatedAt: String
}

@Table("Invoice")
struct Invoice {
    @PrimaryKey var InvoiceId: Int64
    @Column(references: "Customer", column: "CustomerId") @Indexed("IFK_InvoiceCustomerId") var CustomerId: Int64
    @Column(type: "DATETIME") @Indexed("IX_Invoice_InvoiceDate") var InvoiceDate: Date
    @Column(type: "NVARCHAR(70)") var BillingAddress: String?
    @Column(type: "NVARCHAR(40)") var BillingCity: String?
    @Column(type: "NVARCHAR(40)") var BillingState: String?
    @Column(type: "NVARCHAR(40)") var BillingCountry: String?
    @Column(type: "NVARCHAR(10)") var BillingPostalCode: String?
    @Column(type: "NUMERIC(10,2)") var Total: Double
}

@Table("InvoiceLine")
struct InvoiceLine {
    @PrimaryKey var InvoiceLineId: Int64
    @Column(references: "Invoice", column: "InvoiceId") @Indexed("IFK_InvoiceLineInvoiceId") var InvoiceId: Int64
    @Column(references: "Track", column: "TrackId") @Indexed("IFK_InvoiceLineTrackId") var TrackId: Int64
    @Column(type: "NUMERIC(10,2)") var UnitPrice: Double
    var Quantity: Int64
}

@Table("Playlist")
struct Playlist {
    @PrimaryKey var PlaylistId: Int64
    @Column(type: "NVARCHAR(120)") var Name: String?
}

@Table("PlaylistTrack", primaryKey: ["PlaylistId", "TrackId"])
struct PlaylistTrack {
    @Column(references: "Playlist", column: "PlaylistId") @Indexed("IFK_PlaylistTrackPlaylistId") var PlaylistId: Int64
    @Column(references: "Track", column: "TrackId") @Indexed("IFK_PlaylistTrackTrackId") var TrackId: Int64
}

/// The change the demo makes to the model: listeners review tracks.
@Table("TrackReview")
struct TrackReview {
    @PrimaryKey var ReviewId: Int64?
    @Column(references: "Track", column: "TrackId", onDelete: .cascade) @Indexed("IX_TrackReview_TrackId") var TrackId: Int64
    var Stars: Int
    var Body: String?
}

enum ChinookModel {
    static var tables: [any TableModel.Type] { [
        Artist.self, Album.self, Genre.self, MediaType.self, Track.self, Employee.self, Customer.self,
        CustomerNote.self, Invoice.self, InvoiceLine.self, Playlist.self, PlaylistTrack.self,
    ] }

    /// The model today, or with the next change (`TrackReview`).
    static func schema(next: Bool) -> DatabaseSchema {
        DatabaseSchema(tables + (next ? [TrackReview.self] : []))
    }
}
