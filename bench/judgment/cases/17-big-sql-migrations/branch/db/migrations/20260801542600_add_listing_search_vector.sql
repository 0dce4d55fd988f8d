-- migrate:up
ALTER TABLE listings ADD COLUMN search tsvector
  GENERATED ALWAYS AS (to_tsvector('simple', title || ' ' || description)) STORED;
CREATE INDEX listings_search_idx ON listings USING gin (search);

-- migrate:down
DROP INDEX IF EXISTS listings_search_idx;
ALTER TABLE listings DROP COLUMN IF EXISTS search;
