-- +goose Up
-- One row per buyer (visitor id) of a room that caps orders per buyer
-- (maxPerBuyer). An order's transaction locks its buyer's row before it
-- sums the buyer's placed orders, so that two orders of one buyer (two
-- passes from two admissions) cannot both pass the cap. The orders
-- themselves are the count: orders_idempotency_key (room, visitor, …)
-- indexes them by buyer.
CREATE TABLE buyer_locks (
    room    TEXT NOT NULL,
    visitor TEXT NOT NULL,
    PRIMARY KEY (room, visitor)
);

-- +goose Down
DROP TABLE buyer_locks;
