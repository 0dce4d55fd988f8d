-- migrate:up
CREATE TABLE listing_images (
  id bigserial PRIMARY KEY,
  listing_id bigint NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
  url text NOT NULL,
  width integer NOT NULL,
  height integer NOT NULL,
  position integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE listing_images IS 'Listing images of the marketplace.';
CREATE INDEX listing_images_listing_id_idx ON listing_images (listing_id);

CREATE TRIGGER listing_images_touch BEFORE UPDATE ON listing_images
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS listing_images_touch ON listing_images;
DROP TABLE IF EXISTS listing_images;
