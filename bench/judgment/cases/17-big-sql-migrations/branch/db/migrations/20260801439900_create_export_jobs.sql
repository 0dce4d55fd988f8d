-- migrate:up
CREATE TABLE export_jobs (
  id bigserial PRIMARY KEY,
  requested_by bigint NOT NULL,
  kind text NOT NULL,
  params jsonb NOT NULL DEFAULT '{}'::jsonb,
  status text NOT NULL DEFAULT 'queued',
  result_key text,
  finished_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE export_jobs IS 'Export jobs of the marketplace.';
COMMENT ON COLUMN export_jobs.kind IS 'One of the values documented in docs/states/export_jobs.md.';
CREATE INDEX export_jobs_status_idx ON export_jobs (status);
COMMENT ON COLUMN export_jobs.status IS 'One of the values documented in docs/states/export_jobs.md.';

CREATE TRIGGER export_jobs_touch BEFORE UPDATE ON export_jobs
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS export_jobs_touch ON export_jobs;
DROP TABLE IF EXISTS export_jobs;
