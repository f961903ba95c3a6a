-- +goose Up
-- A visitor's redemptions of a room's codes, found by visitor: a code
-- redeemed for a join that then waited for its proof of work is still
-- theirs at the next join.
CREATE INDEX access_redemptions_visitor_idx ON access_redemptions (visitor);

-- +goose Down
DROP INDEX access_redemptions_visitor_idx;
