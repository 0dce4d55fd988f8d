-- migrate:up
CREATE TABLE seller_documents (
  id bigserial PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  kind text NOT NULL,
  storage_key text NOT NULL,
  verified_at timestamptz,
  rejected_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE seller_documents IS 'Seller documents of the marketplace.';
CREATE INDEX seller_documents_seller_id_idx ON seller_documents (seller_id);
COMMENT ON COLUMN seller_documents.kind IS 'One of the values documented in docs/states/seller_documents.md.';

CREATE TRIGGER seller_documents_touch BEFORE UPDATE ON seller_documents
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- migrate:down
DROP TRIGGER IF EXISTS seller_documents_touch ON seller_documents;
DROP TABLE IF EXISTS seller_documents;
