-- migrate:up
CREATE TABLE sellers (
  id bigserial PRIMARY KEY,
  display_name text NOT NULL,
  legal_name text NOT NULL,
  country char(2) NOT NULL,
  vat_number text,
  payout_currency char(3) NOT NULL DEFAULT 'EUR',
  status text NOT NULL DEFAULT 'pending',
  onboarded_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE sellers IS 'Sellers of the marketplace.';
CREATE INDEX sellers_status_idx ON sellers (status);
COMMENT ON COLUMN sellers.status IS 'One of the values documented in docs/states/sellers.md.';

CREATE TRIGGER sellers_touch BEFORE UPDATE ON sellers
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS sellers_touch ON sellers;
DROP TABLE IF EXISTS sellers;
