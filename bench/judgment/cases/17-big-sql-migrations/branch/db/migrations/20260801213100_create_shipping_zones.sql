-- migrate:up
CREATE TABLE shipping_zones (
  id bigserial PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  name text NOT NULL,
  countries char(2)[] NOT NULL,
  base_cents bigint NOT NULL,
  per_item_cents bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE shipping_zones IS 'Shipping zones of the marketplace.';
CREATE INDEX shipping_zones_seller_id_idx ON shipping_zones (seller_id);

CREATE TRIGGER shipping_zones_touch BEFORE UPDATE ON shipping_zones
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS shipping_zones_touch ON shipping_zones;
DROP TABLE IF EXISTS shipping_zones;
