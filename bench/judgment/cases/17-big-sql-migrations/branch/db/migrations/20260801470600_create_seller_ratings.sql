-- migrate:up
CREATE TABLE seller_ratings (
  id bigserial PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  order_id bigint NOT NULL REFERENCES orders (id),
  rating smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
  comment text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE seller_ratings IS 'Seller ratings of the marketplace.';
CREATE INDEX seller_ratings_seller_id_idx ON seller_ratings (seller_id);
CREATE INDEX seller_ratings_order_id_idx ON seller_ratings (order_id);

CREATE TRIGGER seller_ratings_touch BEFORE UPDATE ON seller_ratings
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS seller_ratings_touch ON seller_ratings;
DROP TABLE IF EXISTS seller_ratings;
