-- A loyalty tier per customer, computed from what they have spent so far.
ALTER TABLE Customer ADD COLUMN LoyaltyTier TEXT NOT NULL DEFAULT 'standard';

UPDATE Customer
SET LoyaltyTier = CASE
    WHEN (SELECT sum(Total) FROM Invoice WHERE Invoice.CustomerId = Customer.CustomerId) >= 45 THEN 'gold'
    WHEN (SELECT sum(Total) FROM Invoice WHERE Invoice.CustomerId = Customer.CustomerId) >= 38 THEN 'silver'
    ELSE 'standard'
END;

-- Keep the tier valid on every later insert.
CREATE TRIGGER Customer_LoyaltyTier_Check
BEFORE INSERT ON Customer
WHEN NEW.LoyaltyTier NOT IN ('standard', 'silver', 'gold')
BEGIN
    SELECT RAISE(ABORT, 'LoyaltyTier must be standard, silver or gold');
END;
