-- migrate:up
CREATE TABLE refunds (
  id bigserial PRIMARY KEY,
  payment_id bigint NOT NULL REFERENCES payments (id),
  amount_cents bigint NOT NULL,
  reason text NOT NULL,
  requested_by bigint,
  status text NOT NULL DEFAULT 'requested',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE refunds IS 'Refunds of the marketplace.';
CREATE INDEX refunds_payment_id_idx ON refunds (payment_id);
CREATE INDEX refunds_status_idx ON refunds (status);
COMMENT ON COLUMN refunds.status IS 'One of the values documented in docs/states/refunds.md.';

CREATE TRIGGER refunds_touch BEFORE UPDATE ON refunds
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS refunds_touch ON refunds;
DROP TABLE IF EXISTS refunds;
