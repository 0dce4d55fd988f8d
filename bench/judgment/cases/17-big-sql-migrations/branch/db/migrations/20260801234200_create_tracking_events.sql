-- migrate:up
CREATE TABLE tracking_events (
  id bigserial PRIMARY KEY,
  shipment_id bigint NOT NULL REFERENCES shipments (id) ON DELETE CASCADE,
  occurred_at timestamptz NOT NULL,
  location text,
  code text NOT NULL,
  description text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE tracking_events IS 'Tracking events of the marketplace.';
CREATE INDEX tracking_events_shipment_id_idx ON tracking_events (shipment_id);
CREATE INDEX tracking_events_code_idx ON tracking_events (code);

CREATE TRIGGER tracking_events_touch BEFORE UPDATE ON tracking_events
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS tracking_events_touch ON tracking_events;
DROP TABLE IF EXISTS tracking_events;
