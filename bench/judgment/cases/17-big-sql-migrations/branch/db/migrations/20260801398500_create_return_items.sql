-- migrate:up
CREATE TABLE return_items (
  id bigserial PRIMARY KEY,
  return_request_id bigint NOT NULL REFERENCES return_requests (id) ON DELETE CASCADE,
  order_line_id bigint NOT NULL,
  quantity integer NOT NULL,
  condition text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE return_items IS 'Return items of the marketplace.';
CREATE INDEX return_items_return_request_id_idx ON return_items (return_request_id);

CREATE TRIGGER return_items_touch BEFORE UPDATE ON return_items
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS return_items_touch ON return_items;
DROP TABLE IF EXISTS return_items;
