-- The model's schema, written by Strongroom from the app's table definitions.
-- Do not edit: regenerate it from the model. `strongroom diff` writes the next migration from it.

CREATE TABLE "Album" (
  "AlbumId" INTEGER NOT NULL PRIMARY KEY,
  "Title" NVARCHAR(160) NOT NULL,
  "ArtistId" INTEGER NOT NULL,
  FOREIGN KEY ("ArtistId") REFERENCES "Artist" ("ArtistId")
);
CREATE INDEX "IFK_AlbumArtistId" ON "Album" ("ArtistId");

CREATE TABLE "Artist" (
  "ArtistId" INTEGER NOT NULL PRIMARY KEY,
  "Name" NVARCHAR(120)
);

CREATE TABLE "Customer" (
  "CustomerId" INTEGER NOT NULL PRIMARY KEY,
  "FirstName" NVARCHAR(40) NOT NULL,
  "LastName" NVARCHAR(20) NOT NULL,
  "Company" NVARCHAR(80),
  "Address" NVARCHAR(70),
  "City" NVARCHAR(40),
  "State" NVARCHAR(40),
  "Country" NVARCHAR(40),
  "PostalCode" NVARCHAR(10),
  "Phone" NVARCHAR(24),
  "Email" NVARCHAR(60) NOT NULL,
  "SupportRepId" INTEGER,
  "LoyaltyTier" TEXT NOT NULL DEFAULT 'standard',
  FOREIGN KEY ("SupportRepId") REFERENCES "Employee" ("EmployeeId")
);
CREATE INDEX "IFK_CustomerSupportRepId" ON "Customer" ("SupportRepId");

CREATE TABLE "CustomerNote" (
  "NoteId" INTEGER PRIMARY KEY,
  "CustomerId" INTEGER NOT NULL,
  "Body" TEXT NOT NULL,
  "CreatedAt" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  FOREIGN KEY ("CustomerId") REFERENCES "Customer" ("CustomerId") ON DELETE CASCADE
);
CREATE INDEX "IX_CustomerNote_CustomerId" ON "CustomerNote" ("CustomerId");

CREATE TABLE "Employee" (
  "EmployeeId" INTEGER NOT NULL PRIMARY KEY,
  "LastName" NVARCHAR(20) NOT NULL,
  "FirstName" NVARCHAR(20) NOT NULL,
  "Title" NVARCHAR(30),
  "ReportsTo" INTEGER,
  "BirthDate" DATETIME,
  "HireDate" DATETIME,
  "Address" NVARCHAR(70),
  "City" NVARCHAR(40),
  "State" NVARCHAR(40),
  "Country" NVARCHAR(40),
  "PostalCode" NVARCHAR(10),
  "Phone" NVARCHAR(24),
  "Fax" NVARCHAR(24),
  "Email" NVARCHAR(60),
  FOREIGN KEY ("ReportsTo") REFERENCES "Employee" ("EmployeeId")
);
CREATE INDEX "IFK_EmployeeReportsTo" ON "Employee" ("ReportsTo");

CREATE TABLE "Genre" (
  "GenreId" INTEGER NOT NULL PRIMARY KEY,
  "Name" NVARCHAR(120)
);

CREATE TABLE "Invoice" (
  "InvoiceId" INTEGER NOT NULL PRIMARY KEY,
  "CustomerId" INTEGER NOT NULL,
  "InvoiceDate" DATETIME NOT NULL,
  "BillingAddress" NVARCHAR(70),
  "BillingCity" NVARCHAR(40),
  "BillingState" NVARCHAR(40),
  "BillingCountry" NVARCHAR(40),
  "BillingPostalCode" NVARCHAR(10),
  "Total" NUMERIC(10,2) NOT NULL,
  FOREIGN KEY ("CustomerId") REFERENCES "Customer" ("CustomerId")
);
CREATE INDEX "IFK_InvoiceCustomerId" ON "Invoice" ("CustomerId");
CREATE INDEX "IX_Invoice_InvoiceDate" ON "Invoice" ("InvoiceDate");

CREATE TABLE "InvoiceLine" (
  "InvoiceLineId" INTEGER NOT NULL PRIMARY KEY,
  "InvoiceId" INTEGER NOT NULL,
  "TrackId" INTEGER NOT NULL,
  "UnitPrice" NUMERIC(10,2) NOT NULL,
  "Quantity" INTEGER NOT NULL,
  FOREIGN KEY ("InvoiceId") REFERENCES "Invoice" ("InvoiceId"),
  FOREIGN KEY ("TrackId") REFERENCES "Track" ("TrackId")
);
CREATE INDEX "IFK_InvoiceLineInvoiceId" ON "InvoiceLine" ("InvoiceId");
CREATE INDEX "IFK_InvoiceLineTrackId" ON "InvoiceLine" ("TrackId");

CREATE TABLE "MediaType" (
  "MediaTypeId" INTEGER NOT NULL PRIMARY KEY,
  "Name" NVARCHAR(120)
);

CREATE TABLE "Playlist" (
  "PlaylistId" INTEGER NOT NULL PRIMARY KEY,
  "Name" NVARCHAR(120)
);

CREATE TABLE "PlaylistTrack" (
  "PlaylistId" INTEGER NOT NULL,
  "TrackId" INTEGER NOT NULL,
  PRIMARY KEY ("PlaylistId", "TrackId"),
  FOREIGN KEY ("PlaylistId") REFERENCES "Playlist" ("PlaylistId"),
  FOREIGN KEY ("TrackId") REFERENCES "Track" ("TrackId")
);
CREATE INDEX "IFK_PlaylistTrackPlaylistId" ON "PlaylistTrack" ("PlaylistId");
CREATE INDEX "IFK_PlaylistTrackTrackId" ON "PlaylistTrack" ("TrackId");

CREATE TABLE "Track" (
  "TrackId" INTEGER NOT NULL PRIMARY KEY,
  "Name" NVARCHAR(200) NOT NULL,
  "AlbumId" INTEGER,
  "MediaTypeId" INTEGER NOT NULL,
  "GenreId" INTEGER,
  "Composer" NVARCHAR(220),
  "Milliseconds" INTEGER NOT NULL,
  "Bytes" INTEGER,
  "UnitPrice" NUMERIC(10,2) NOT NULL,
  FOREIGN KEY ("AlbumId") REFERENCES "Album" ("AlbumId"),
  FOREIGN KEY ("MediaTypeId") REFERENCES "MediaType" ("MediaTypeId"),
  FOREIGN KEY ("GenreId") REFERENCES "Genre" ("GenreId")
);
CREATE INDEX "IFK_TrackAlbumId" ON "Track" ("AlbumId");
CREATE INDEX "IFK_TrackMediaTypeId" ON "Track" ("MediaTypeId");
CREATE INDEX "IFK_TrackGenreId" ON "Track" ("GenreId");
