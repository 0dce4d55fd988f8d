-- migrate:up
CREATE TABLE notifications (
  id bigserial PRIMARY KEY,
  customer_id bigint REFERENCES customers (id),
  seller_id bigint REFERENCES sellers (id),
  channel text NOT NULL,
  template text NOT NULL,
  data jsonb NOT NULL DEFAULT '{}'::jsonb,
  sent_at timestamptz,
  read_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE notifications IS 'Notifications of the marketplace.';
CREATE INDEX notifications_customer_id_idx ON notifications (customer_id);
CREATE INDEX notifications_seller_id_idx ON notifications (seller_id);
COMMENT ON COLUMN notifications.channel IS 'One of the values documented in docs/states/notifications.md.';

CREATE TRIGGER notifications_touch BEFORE UPDATE ON notifications
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS notifications_touch ON notifications;
DROP TABLE IF EXISTS notifications;
