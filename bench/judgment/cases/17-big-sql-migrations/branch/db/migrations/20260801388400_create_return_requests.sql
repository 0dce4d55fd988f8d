-- migrate:up
CREATE TABLE return_requests (
  id bigserial PRIMARY KEY,
  order_id bigint NOT NULL REFERENCES orders (id),
  reason text NOT NULL,
  status text NOT NULL DEFAULT 'open',
  label_url text,
  received_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE return_requests IS 'Return requests of the marketplace.';
CREATE INDEX return_requests_order_id_idx ON return_requests (order_id);
CREATE INDEX return_requests_status_idx ON return_requests (status);
COMMENT ON COLUMN return_requests.status IS 'One of the values documented in docs/states/return_requests.md.';

CREATE TRIGGER return_requests_touch BEFORE UPDATE ON return_requests
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS return_requests_touch ON return_requests;
DROP TABLE IF EXISTS return_requests;
