-- migrate:up
CREATE TABLE invoice_lines (
  id bigserial PRIMARY KEY,
  invoice_id bigint NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
  description text NOT NULL,
  quantity integer NOT NULL,
  unit_cents bigint NOT NULL,
  tax_rate_bp integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE invoice_lines IS 'Invoice lines of the marketplace.';
CREATE INDEX invoice_lines_invoice_id_idx ON invoice_lines (invoice_id);

CREATE TRIGGER invoice_lines_touch BEFORE UPDATE ON invoice_lines
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS invoice_lines_touch ON invoice_lines;
DROP TABLE IF EXISTS invoice_lines;
