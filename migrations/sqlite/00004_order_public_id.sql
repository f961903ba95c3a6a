-- +goose Up
-- The order number buyers see: 16 random bytes in URL-safe base64, so that
-- nobody can count the shop's orders or guess another's confirmation page.
-- Older orders get 16 random bytes in hex. SQLite cannot add a NOT NULL
-- column without a default: the application always sets it.
ALTER TABLE orders ADD COLUMN public_id TEXT;
UPDATE orders SET public_id = lower(hex(randomblob(16))) WHERE public_id IS NULL;
CREATE UNIQUE INDEX orders_public_id_key ON orders (public_id);

-- +goose Down
DROP INDEX orders_public_id_key;
ALTER TABLE orders DROP COLUMN public_id;
