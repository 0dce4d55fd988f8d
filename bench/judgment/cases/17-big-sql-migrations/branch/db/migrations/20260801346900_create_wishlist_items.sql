-- migrate:up
CREATE TABLE wishlist_items (
  id bigserial PRIMARY KEY,
  wishlist_id bigint NOT NULL REFERENCES wishlists (id) ON DELETE CASCADE,
  listing_id bigint NOT NULL REFERENCES listings (id),
  note text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE wishlist_items IS 'Wishlist items of the marketplace.';
CREATE INDEX wishlist_items_wishlist_id_idx ON wishlist_items (wishlist_id);
CREATE INDEX wishlist_items_listing_id_idx ON wishlist_items (listing_id);

CREATE TRIGGER wishlist_items_touch BEFORE UPDATE ON wishlist_items
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS wishlist_items_touch ON wishlist_items;
DROP TABLE IF EXISTS wishlist_items;
