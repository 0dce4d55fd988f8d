-- migrate:up
ALTER TABLE customers ADD COLUMN marketing_opt_in boolean NOT NULL DEFAULT false;
ALTER TABLE customers ADD COLUMN marketing_opt_in_at timestamptz;

-- migrate:down
ALTER TABLE customers DROP COLUMN IF EXISTS marketing_opt_in_at;
ALTER TABLE customers DROP COLUMN IF EXISTS marketing_opt_in;
