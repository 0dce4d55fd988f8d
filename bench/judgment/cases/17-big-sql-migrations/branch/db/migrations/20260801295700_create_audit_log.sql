-- migrate:up
CREATE TABLE audit_log (
  id bigserial PRIMARY KEY,
  actor_id bigint,
  actor_kind text NOT NULL,
  action text NOT NULL,
  subject_table text NOT NULL,
  subject_id bigint,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  ip inet,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE audit_log IS 'Audit log of the marketplace.';

CREATE TRIGGER audit_log_touch BEFORE UPDATE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS audit_log_touch ON audit_log;
DROP TABLE IF EXISTS audit_log;
