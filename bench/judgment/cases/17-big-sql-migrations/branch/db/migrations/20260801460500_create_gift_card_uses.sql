-- migrate:up
CREATE TABLE gift_card_uses (
  id bigserial PRIMARY KEY,
  gift_card_id bigint NOT NULL REFERENCES gift_cards (id),
  order_id bigint NOT NULL REFERENCES orders (id),
  amount_cents bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE gift_card_uses IS 'Gift card uses of the marketplace.';
CREATE INDEX gift_card_uses_gift_card_id_idx ON gift_card_uses (gift_card_id);
CREATE INDEX gift_card_uses_order_id_idx ON gift_card_uses (order_id);

CREATE TRIGGER gift_card_uses_touch BEFORE UPDATE ON gift_card_uses
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS gift_card_uses_touch ON gift_card_uses;
DROP TABLE IF EXISTS gift_card_uses;
