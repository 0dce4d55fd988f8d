-- migrate:up
CREATE TABLE support_tickets (
  id bigserial PRIMARY KEY,
  customer_id bigint REFERENCES customers (id),
  order_id bigint REFERENCES orders (id),
  subject text NOT NULL,
  status text NOT NULL DEFAULT 'open',
  priority text NOT NULL DEFAULT 'normal',
  assignee_id bigint,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE support_tickets IS 'Support tickets of the marketplace.';
CREATE INDEX support_tickets_customer_id_idx ON support_tickets (customer_id);
CREATE INDEX support_tickets_order_id_idx ON support_tickets (order_id);
CREATE INDEX support_tickets_status_idx ON support_tickets (status);
COMMENT ON COLUMN support_tickets.status IS 'One of the values documented in docs/states/support_tickets.md.';
COMMENT ON COLUMN support_tickets.priority IS 'One of the values documented in docs/states/support_tickets.md.';

CREATE TRIGGER support_tickets_touch BEFORE UPDATE ON support_tickets
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS support_tickets_touch ON support_tickets;
DROP TABLE IF EXISTS support_tickets;
