-- migrate:up
CREATE TABLE customers (
  id bigserial PRIMARY KEY,
  email text NOT NULL,
  full_name text NOT NULL,
  country char(2) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customers_email_idx ON customers (email);
CREATE TRIGGER customers_touch BEFORE UPDATE ON customers
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TABLE IF EXISTS customers;
