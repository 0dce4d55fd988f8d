-- migrate:up
CREATE TABLE search_synonyms (
  id bigserial PRIMARY KEY,
  term text NOT NULL,
  synonyms text[] NOT NULL,
  locale text NOT NULL DEFAULT 'en',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE search_synonyms IS 'Search synonyms of the marketplace.';

CREATE TRIGGER search_synonyms_touch BEFORE UPDATE ON search_synonyms
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS search_synonyms_touch ON search_synonyms;
DROP TABLE IF EXISTS search_synonyms;
