-- migrate:up
CREATE TABLE cart_items (
  id bigserial PRIMARY KEY,
  cart_id bigint NOT NULL REFERENCES carts (id) ON DELETE CASCADE,
  listing_id bigint NOT NULL REFERENCES listings (id),
  quantity integer NOT NULL CHECK (quantity > 0),
  unit_price_cents bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE cart_items IS 'Cart items of the marketplace.';
CREATE INDEX cart_items_cart_id_idx ON cart_items (cart_id);
CREATE INDEX cart_items_listing_id_idx ON cart_items (listing_id);

CREATE TRIGGER cart_items_touch BEFORE UPDATE ON cart_items
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS cart_items_touch ON cart_items;
DROP TABLE IF EXISTS cart_items;
