-- migrate:up
-- The 2025 CRM import created duplicate customers (same email). Point their
-- orders at the oldest row of each email, drop the duplicates and make email
-- unique from now on.
UPDATE orders o
   SET customer_id = keep.id
  FROM customers dup
  JOIN (SELECT min(id) AS id, email FROM customers GROUP BY email) keep ON keep.email = dup.email
 WHERE o.customer_id = dup.id
   AND dup.id <> keep.id;

DELETE FROM customers c
 USING customers d
 WHERE c.email = d.email;

ALTER TABLE customers ADD CONSTRAINT customers_email_key UNIQUE (email);

-- migrate:down
ALTER TABLE customers DROP CONSTRAINT IF EXISTS customers_email_key;
