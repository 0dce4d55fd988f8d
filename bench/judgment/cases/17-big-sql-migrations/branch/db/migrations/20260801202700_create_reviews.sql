-- migrate:up
CREATE TABLE reviews (
  id bigserial PRIMARY KEY,
  listing_id bigint NOT NULL REFERENCES listings (id),
  customer_id bigint NOT NULL REFERENCES customers (id),
  rating smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
  body text NOT NULL DEFAULT '',
  moderation_status text NOT NULL DEFAULT 'pending',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE reviews IS 'Reviews of the marketplace.';
CREATE INDEX reviews_listing_id_idx ON reviews (listing_id);
CREATE INDEX reviews_customer_id_idx ON reviews (customer_id);

CREATE TRIGGER reviews_touch BEFORE UPDATE ON reviews
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS reviews_touch ON reviews;
DROP TABLE IF EXISTS reviews;
