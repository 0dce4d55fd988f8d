-- migrate:up
CREATE TABLE support_messages (
  id bigserial PRIMARY KEY,
  ticket_id bigint NOT NULL REFERENCES support_tickets (id) ON DELETE CASCADE,
  author_kind text NOT NULL,
  author_id bigint,
  body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE support_messages IS 'Support messages of the marketplace.';
CREATE INDEX support_messages_ticket_id_idx ON support_messages (ticket_id);

CREATE TRIGGER support_messages_touch BEFORE UPDATE ON support_messages
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS support_messages_touch ON support_messages;
DROP TABLE IF EXISTS support_messages;
