-- migrate:up
CREATE TABLE loyalty_accounts (
  id bigserial PRIMARY KEY,
  customer_id bigint NOT NULL UNIQUE REFERENCES customers (id),
  points bigint NOT NULL DEFAULT 0,
  tier text NOT NULL DEFAULT 'bronze',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE loyalty_accounts IS 'Loyalty accounts of the marketplace.';
COMMENT ON COLUMN loyalty_accounts.tier IS 'One of the values documented in docs/states/loyalty_accounts.md.';

CREATE TRIGGER loyalty_accounts_touch BEFORE UPDATE ON loyalty_accounts
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS loyalty_accounts_touch ON loyalty_accounts;
DROP TABLE IF EXISTS loyalty_accounts;
