-- migrate:up
CREATE TABLE invoices (
  id bigserial PRIMARY KEY,
  order_id bigint NOT NULL REFERENCES orders (id),
  number text NOT NULL UNIQUE,
  issued_at timestamptz NOT NULL,
  total_cents bigint NOT NULL,
  tax_cents bigint NOT NULL,
  pdf_url text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE invoices IS 'Invoices of the marketplace.';
CREATE INDEX invoices_order_id_idx ON invoices (order_id);

CREATE TRIGGER invoices_touch BEFORE UPDATE ON invoices
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS invoices_touch ON invoices;
DROP TABLE IF EXISTS invoices;
