-- migrate:up
CREATE TABLE wishlists (
  id bigserial PRIMARY KEY,
  customer_id bigint NOT NULL REFERENCES customers (id),
  name text NOT NULL DEFAULT 'Wishlist',
  is_public boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE wishlists IS 'Wishlists of the marketplace.';
CREATE INDEX wishlists_customer_id_idx ON wishlists (customer_id);

CREATE TRIGGER wishlists_touch BEFORE UPDATE ON wishlists
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS wishlists_touch ON wishlists;
DROP TABLE IF EXISTS wishlists;
