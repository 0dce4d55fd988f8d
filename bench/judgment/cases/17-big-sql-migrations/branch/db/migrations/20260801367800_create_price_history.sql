-- migrate:up
CREATE TABLE price_history (
  id bigserial PRIMARY KEY,
  listing_id bigint NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
  price_cents bigint NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE price_history IS 'Price history of the marketplace.';
CREATE INDEX price_history_listing_id_idx ON price_history (listing_id);

CREATE TRIGGER price_history_touch BEFORE UPDATE ON price_history
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS price_history_touch ON price_history;
DROP TABLE IF EXISTS price_history;
