-- migrate:up
CREATE TABLE gift_cards (
  id bigserial PRIMARY KEY,
  code_hash text NOT NULL UNIQUE,
  initial_cents bigint NOT NULL,
  balance_cents bigint NOT NULL,
  currency char(3) NOT NULL,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE gift_cards IS 'Gift cards of the marketplace.';

CREATE TRIGGER gift_cards_touch BEFORE UPDATE ON gift_cards
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS gift_cards_touch ON gift_cards;
DROP TABLE IF EXISTS gift_cards;
