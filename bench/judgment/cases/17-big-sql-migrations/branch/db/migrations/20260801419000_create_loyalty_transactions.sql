-- migrate:up
CREATE TABLE loyalty_transactions (
  id bigserial PRIMARY KEY,
  account_id bigint NOT NULL REFERENCES loyalty_accounts (id),
  points bigint NOT NULL,
  reason text NOT NULL,
  order_id bigint REFERENCES orders (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE loyalty_transactions IS 'Loyalty transactions of the marketplace.';
CREATE INDEX loyalty_transactions_account_id_idx ON loyalty_transactions (account_id);
CREATE INDEX loyalty_transactions_order_id_idx ON loyalty_transactions (order_id);

CREATE TRIGGER loyalty_transactions_touch BEFORE UPDATE ON loyalty_transactions
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS loyalty_transactions_touch ON loyalty_transactions;
DROP TABLE IF EXISTS loyalty_transactions;
