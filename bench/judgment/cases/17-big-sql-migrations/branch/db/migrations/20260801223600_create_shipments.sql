-- migrate:up
CREATE TABLE shipments (
  id bigserial PRIMARY KEY,
  order_id bigint NOT NULL REFERENCES orders (id),
  carrier text NOT NULL,
  tracking_number text,
  shipped_at timestamptz,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE shipments IS 'Shipments of the marketplace.';
CREATE INDEX shipments_order_id_idx ON shipments (order_id);

CREATE TRIGGER shipments_touch BEFORE UPDATE ON shipments
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS shipments_touch ON shipments;
DROP TABLE IF EXISTS shipments;
