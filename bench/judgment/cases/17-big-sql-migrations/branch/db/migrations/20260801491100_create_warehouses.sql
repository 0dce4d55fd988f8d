-- migrate:up
CREATE TABLE warehouses (
  id bigserial PRIMARY KEY,
  seller_id bigint REFERENCES sellers (id),
  name text NOT NULL,
  address jsonb NOT NULL,
  timezone text NOT NULL DEFAULT 'UTC',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE warehouses IS 'Warehouses of the marketplace.';
CREATE INDEX warehouses_seller_id_idx ON warehouses (seller_id);

CREATE TRIGGER warehouses_touch BEFORE UPDATE ON warehouses
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS warehouses_touch ON warehouses;
DROP TABLE IF EXISTS warehouses;
