-- +goose Up
-- The order number buyers see: 16 random bytes in URL-safe base64, so that
-- nobody can count the shop's orders or guess another's confirmation page.
-- Older orders get 16 random bytes in hex. SQLite cannot add a NOT NULL
-- column without a default: the application always sets it.
ALTER TABLE orders ADD COLUMN public_id TEXT;
UPDATE orders SET public_id = lower(hex(randomblob(16))) WHERE public_id IS NULL;
CREATE UNIQUE INDEX orders_public_id_key ON orders (public_id);

-- The price and currency each order was placed at, so that the
-- confirmation shows what was paid even after a price change (null for
-- older orders).
ALTER TABLE orders ADD COLUMN unit_price INTEGER CHECK (unit_price >= 0);
ALTER TABLE orders ADD COLUMN currency TEXT;

-- +goose Down
ALTER TABLE orders DROP COLUMN currency;
ALTER TABLE orders DROP COLUMN unit_price;
DROP INDEX orders_public_id_key;
ALTER TABLE orders DROP COLUMN public_id;
