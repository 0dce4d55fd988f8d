-- migrate:up
CREATE TABLE payments (
  id bigserial PRIMARY KEY,
  order_id bigint NOT NULL REFERENCES orders (id),
  provider text NOT NULL,
  provider_reference text NOT NULL,
  amount_cents bigint NOT NULL,
  currency char(3) NOT NULL,
  status text NOT NULL,
  captured_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE payments IS 'Payments of the marketplace.';
CREATE INDEX payments_order_id_idx ON payments (order_id);
CREATE INDEX payments_status_idx ON payments (status);
COMMENT ON COLUMN payments.status IS 'One of the values documented in docs/states/payments.md.';

CREATE TRIGGER payments_touch BEFORE UPDATE ON payments
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS payments_touch ON payments;
DROP TABLE IF EXISTS payments;
