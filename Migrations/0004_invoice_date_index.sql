-- Reports filter invoices by date.
CREATE INDEX IX_Invoice_InvoiceDate ON Invoice (InvoiceDate);
