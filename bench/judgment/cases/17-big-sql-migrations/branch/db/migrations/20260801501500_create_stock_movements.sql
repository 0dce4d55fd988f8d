-- migrate:up
CREATE TABLE stock_movements (
  id bigserial PRIMARY KEY,
  warehouse_id bigint NOT NULL REFERENCES warehouses (id),
  listing_id bigint NOT NULL REFERENCES listings (id),
  delta integer NOT NULL,
  reason text NOT NULL,
  reference text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE stock_movements IS 'Stock movements of the marketplace.';
CREATE INDEX stock_movements_warehouse_id_idx ON stock_movements (warehouse_id);
CREATE INDEX stock_movements_listing_id_idx ON stock_movements (listing_id);

CREATE TRIGGER stock_movements_touch BEFORE UPDATE ON stock_movements
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS stock_movements_touch ON stock_movements;
DROP TABLE IF EXISTS stock_movements;
