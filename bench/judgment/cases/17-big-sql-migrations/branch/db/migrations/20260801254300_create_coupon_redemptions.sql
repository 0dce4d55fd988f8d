-- migrate:up
CREATE TABLE coupon_redemptions (
  id bigserial PRIMARY KEY,
  coupon_id bigint NOT NULL REFERENCES coupons (id),
  order_id bigint NOT NULL REFERENCES orders (id),
  customer_id bigint NOT NULL REFERENCES customers (id),
  discount_cents bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE coupon_redemptions IS 'Coupon redemptions of the marketplace.';
CREATE INDEX coupon_redemptions_coupon_id_idx ON coupon_redemptions (coupon_id);
CREATE INDEX coupon_redemptions_order_id_idx ON coupon_redemptions (order_id);
CREATE INDEX coupon_redemptions_customer_id_idx ON coupon_redemptions (customer_id);

CREATE TRIGGER coupon_redemptions_touch BEFORE UPDATE ON coupon_redemptions
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS coupon_redemptions_touch ON coupon_redemptions;
DROP TABLE IF EXISTS coupon_redemptions;
