-- migrate:up
CREATE TABLE feature_flags (
  id bigserial PRIMARY KEY,
  key text NOT NULL UNIQUE,
  enabled boolean NOT NULL DEFAULT false,
  rollout_percent smallint NOT NULL DEFAULT 0,
  description text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE feature_flags IS 'Feature flags of the marketplace.';

CREATE TRIGGER feature_flags_touch BEFORE UPDATE ON feature_flags
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS feature_flags_touch ON feature_flags;
DROP TABLE IF EXISTS feature_flags;
