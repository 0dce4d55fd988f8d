-- migrate:up
CREATE TABLE categories (
  id bigserial PRIMARY KEY,
  parent_id bigint REFERENCES categories (id),
  slug text NOT NULL UNIQUE,
  title text NOT NULL,
  position integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE categories IS 'Categories of the marketplace.';
CREATE INDEX categories_parent_id_idx ON categories (parent_id);

CREATE TRIGGER categories_touch BEFORE UPDATE ON categories
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS categories_touch ON categories;
DROP TABLE IF EXISTS categories;
