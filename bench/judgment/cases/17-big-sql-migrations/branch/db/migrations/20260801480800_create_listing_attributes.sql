-- migrate:up
CREATE TABLE listing_attributes (
  id bigserial PRIMARY KEY,
  listing_id bigint NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
  name text NOT NULL,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE listing_attributes IS 'Listing attributes of the marketplace.';
CREATE INDEX listing_attributes_listing_id_idx ON listing_attributes (listing_id);

CREATE TRIGGER listing_attributes_touch BEFORE UPDATE ON listing_attributes
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS listing_attributes_touch ON listing_attributes;
DROP TABLE IF EXISTS listing_attributes;
