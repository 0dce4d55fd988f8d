-- migrate:up
CREATE TABLE coupons (
  id bigserial PRIMARY KEY,
  code text NOT NULL UNIQUE,
  percent_off smallint CHECK (percent_off BETWEEN 1 AND 100),
  amount_off_cents bigint,
  valid_from timestamptz NOT NULL,
  valid_until timestamptz,
  max_redemptions integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE coupons IS 'Coupons of the marketplace.';

CREATE TRIGGER coupons_touch BEFORE UPDATE ON coupons
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS coupons_touch ON coupons;
DROP TABLE IF EXISTS coupons;
