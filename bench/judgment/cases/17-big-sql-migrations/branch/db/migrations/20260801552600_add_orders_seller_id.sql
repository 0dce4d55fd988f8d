-- migrate:up
ALTER TABLE orders ADD COLUMN seller_id bigint REFERENCES sellers (id);
CREATE INDEX orders_seller_id_idx ON orders (seller_id);

-- migrate:down
ALTER TABLE orders DROP COLUMN IF EXISTS seller_id;
