-- +goose Up
-- The order number buyers see: 16 random bytes in URL-safe base64, so that
-- nobody can count the shop's orders or guess another's confirmation page.
-- Older orders get one from gen_random_uuid's random bytes.
ALTER TABLE orders ADD COLUMN public_id TEXT;
UPDATE orders SET public_id = rtrim(translate(encode(decode(replace(gen_random_uuid()::text, '-', ''), 'hex'), 'base64'), '+/', '-_'), '=')
    WHERE public_id IS NULL;
ALTER TABLE orders ALTER COLUMN public_id SET NOT NULL;
ALTER TABLE orders ADD CONSTRAINT orders_public_id_key UNIQUE (public_id);

-- The price and currency each order was placed at, so that the
-- confirmation shows what was paid even after a price change (null for
-- older orders).
ALTER TABLE orders ADD COLUMN unit_price BIGINT CHECK (unit_price >= 0);
ALTER TABLE orders ADD COLUMN currency TEXT;

-- +goose Down
ALTER TABLE orders DROP COLUMN currency;
ALTER TABLE orders DROP COLUMN unit_price;
ALTER TABLE orders DROP COLUMN public_id;
