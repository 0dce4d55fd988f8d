-- migrate:up
CREATE TABLE listings (
  id bigserial PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  category_id bigint REFERENCES categories (id),
  title text NOT NULL,
  description text NOT NULL DEFAULT '',
  price_cents bigint NOT NULL CHECK (price_cents >= 0),
  currency char(3) NOT NULL,
  stock integer NOT NULL DEFAULT 0,
  status text NOT NULL DEFAULT 'draft',
  published_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE listings IS 'Listings of the marketplace.';
CREATE INDEX listings_seller_id_idx ON listings (seller_id);
CREATE INDEX listings_category_id_idx ON listings (category_id);
CREATE INDEX listings_status_idx ON listings (status);
COMMENT ON COLUMN listings.status IS 'One of the values documented in docs/states/listings.md.';

CREATE TRIGGER listings_touch BEFORE UPDATE ON listings
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS listings_touch ON listings;
DROP TABLE IF EXISTS listings;
