-- migrate:up
CREATE TABLE payouts (
  id bigserial PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  amount_cents bigint NOT NULL,
  currency char(3) NOT NULL,
  period_start date NOT NULL,
  period_end date NOT NULL,
  status text NOT NULL DEFAULT 'scheduled',
  paid_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE payouts IS 'Payouts of the marketplace.';
CREATE INDEX payouts_seller_id_idx ON payouts (seller_id);
CREATE INDEX payouts_status_idx ON payouts (status);
COMMENT ON COLUMN payouts.status IS 'One of the values documented in docs/states/payouts.md.';

CREATE TRIGGER payouts_touch BEFORE UPDATE ON payouts
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS payouts_touch ON payouts;
DROP TABLE IF EXISTS payouts;
