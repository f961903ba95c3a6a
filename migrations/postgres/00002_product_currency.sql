-- +goose Up
-- Prices are in the smallest unit of an ISO 4217 currency.
ALTER TABLE products ADD COLUMN currency TEXT NOT NULL DEFAULT 'KRW'
    CONSTRAINT products_currency_check CHECK (currency ~ '^[A-Z]{3}$');

-- +goose Down
ALTER TABLE products DROP COLUMN currency;
