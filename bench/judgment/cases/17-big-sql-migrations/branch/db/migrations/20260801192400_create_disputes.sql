-- migrate:up
CREATE TABLE disputes (
  id bigserial PRIMARY KEY,
  payment_id bigint NOT NULL REFERENCES payments (id),
  provider_case_id text NOT NULL,
  reason text,
  amount_cents bigint NOT NULL,
  status text NOT NULL,
  evidence_due_by timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE disputes IS 'Disputes of the marketplace.';
CREATE INDEX disputes_payment_id_idx ON disputes (payment_id);
CREATE INDEX disputes_status_idx ON disputes (status);
COMMENT ON COLUMN disputes.status IS 'One of the values documented in docs/states/disputes.md.';

CREATE TRIGGER disputes_touch BEFORE UPDATE ON disputes
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS disputes_touch ON disputes;
DROP TABLE IF EXISTS disputes;
