-- migrate:up
CREATE TABLE tax_rates (
  id bigserial PRIMARY KEY,
  country char(2) NOT NULL,
  region text,
  category_id bigint REFERENCES categories (id),
  rate_bp integer NOT NULL,
  valid_from date NOT NULL,
  valid_until date,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE tax_rates IS 'Tax rates of the marketplace.';
CREATE INDEX tax_rates_category_id_idx ON tax_rates (category_id);

CREATE TRIGGER tax_rates_touch BEFORE UPDATE ON tax_rates
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS tax_rates_touch ON tax_rates;
DROP TABLE IF EXISTS tax_rates;
