-- migrate:up
CREATE TABLE carts (
  id bigserial PRIMARY KEY,
  customer_id bigint REFERENCES customers (id),
  session_key text,
  currency char(3) NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE carts IS 'Carts of the marketplace.';
CREATE INDEX carts_customer_id_idx ON carts (customer_id);

CREATE TRIGGER carts_touch BEFORE UPDATE ON carts
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS carts_touch ON carts;
DROP TABLE IF EXISTS carts;
