-- migrate:up
CREATE TABLE webhook_endpoints (
  id bigserial PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  url text NOT NULL,
  events text[] NOT NULL,
  secret_hash text NOT NULL,
  disabled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE webhook_endpoints IS 'Webhook endpoints of the marketplace.';
CREATE INDEX webhook_endpoints_seller_id_idx ON webhook_endpoints (seller_id);

CREATE TRIGGER webhook_endpoints_touch BEFORE UPDATE ON webhook_endpoints
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS webhook_endpoints_touch ON webhook_endpoints;
DROP TABLE IF EXISTS webhook_endpoints;
