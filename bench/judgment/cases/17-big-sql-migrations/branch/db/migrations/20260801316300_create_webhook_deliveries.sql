-- migrate:up
CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  endpoint_id bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event text NOT NULL,
  payload jsonb NOT NULL,
  attempt integer NOT NULL DEFAULT 1,
  response_status integer,
  next_attempt_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE webhook_deliveries IS 'Webhook deliveries of the marketplace.';
CREATE INDEX webhook_deliveries_endpoint_id_idx ON webhook_deliveries (endpoint_id);

CREATE TRIGGER webhook_deliveries_touch BEFORE UPDATE ON webhook_deliveries
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS webhook_deliveries_touch ON webhook_deliveries;
DROP TABLE IF EXISTS webhook_deliveries;
