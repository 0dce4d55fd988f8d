-- migrate:up
CREATE TABLE currency_rates (
  id bigserial PRIMARY KEY,
  base char(3) NOT NULL,
  quote char(3) NOT NULL,
  rate numeric(18, 8) NOT NULL,
  as_of date NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE currency_rates IS 'Currency rates of the marketplace.';

CREATE TRIGGER currency_rates_touch BEFORE UPDATE ON currency_rates
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS currency_rates_touch ON currency_rates;
DROP TABLE IF EXISTS currency_rates;
